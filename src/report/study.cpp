// Study reports: per-group metrics over attempts (task, sample) and turns, claims, comparisons.

#include <algorithm>
#include <cmath>
#include <fstream>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "kgym/error.hpp"
#include "kgym/report.hpp"
#include "kgym/run.hpp"

namespace kgym {

namespace {

/// KernelBench level-1 family by problem number (the level's files are grouped by number).
std::string kernelbench_l1_family(int number) {
  if (number >= 1 && number <= 18) return "matmul";
  if ((number >= 19 && number <= 32) || number == 88) return "activation";
  if (number >= 33 && number <= 40) return "normalization";
  if (number >= 41 && number <= 46) return "pooling";
  if (number == 50 || (number >= 54 && number <= 87)) return "convolution";
  if (number >= 47 && number <= 53) return "reduction";
  if (number >= 89 && number <= 93) return "scan";
  if (number == 97) return "attention";
  if (number >= 94 && number <= 100) return "loss";
  return "other";
}

bool built(const Verdict& v) {
  switch (v.outcome) {
    case Outcome::no_candidate:
    case Outcome::policy_rejected:
    case Outcome::build_failed:
    case Outcome::task_error: return false;
    case Outcome::timeout: return v.measurements.timed_out_stage.value_or("") != "load";
    default: return true;
  }
}

bool passed(const Verdict& v) { return v.outcome == Outcome::passed; }

// (fast_p_speedup: the interval's lower bound must clear p, KernelBench#166)
bool fast_than(const Verdict& v, double p) {
  const auto s = fast_p_speedup(v);
  return passed(v) && s && *s > p;
}

/// Ordering of verdicts within an attempt's turns: passed (by eager speedup) > correct > built > rest.
std::pair<int, double> rank(const Verdict& v) {
  int tier = passed(v) ? 4 : v.correct ? 3 : built(v) ? 2 : 1;
  return {tier, passed(v) ? v.speedup_eager.value_or(0) : 0.0};
}

bool hybrid(const Verdict& v) {
  for (const auto& f : v.policy_findings)
    if (f.is_object() && f.value("rule_id", "") == "hybrid_library_call") return true;
  return false;
}

struct AttemptRec {
  std::string task_id;
  int sample = 0;
  std::vector<std::pair<int, const Verdict*>> turns;  // (turn, verdict)
  const Verdict* best = nullptr;
  const Verdict* first = nullptr;
};

/// Groups verdicts into attempts (task, sample), in first-seen order. `task_error` verdicts are
/// left out: the task's reference failed and nothing of the candidate was judged, so they count
/// neither for nor against the model (an attempt of only such verdicts is no attempt).
std::vector<AttemptRec> attempts_of(const std::vector<Verdict>& verdicts) {
  std::map<std::pair<std::string, int>, std::size_t> index;
  std::map<std::string, int> implicit_samples;
  std::vector<AttemptRec> out;
  for (const auto& v : verdicts) {
    if (v.outcome == Outcome::task_error) continue;
    run::Attempt at = run::parse_candidate_id(v.candidate_id);
    if (!at.explicit_id) at.sample = implicit_samples[v.task_id]++;
    auto key = std::make_pair(v.task_id, at.sample);
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, out.size()).first;
      out.push_back(AttemptRec{v.task_id, at.sample, {}, nullptr, nullptr});
    }
    out[it->second].turns.emplace_back(at.turn, &v);
  }
  for (auto& a : out) {
    std::sort(a.turns.begin(), a.turns.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    a.first = a.turns.front().second;
    a.best = a.first;
    for (const auto& [turn, v] : a.turns)
      if (rank(*v) > rank(*a.best)) a.best = v;
  }
  return out;
}

double frac(int n, int d) { return d ? static_cast<double>(n) / d : 0.0; }

GroupMetrics metrics_of(const std::string& key, const std::string& value, const std::vector<const AttemptRec*>& atts,
                        const ReportOptions& o) {
  GroupMetrics g;
  g.key = key;
  g.value = value;
  g.attempts = static_cast<int>(atts.size());
  std::map<std::string, std::vector<const AttemptRec*>> by_task;
  int n_built = 0, n_correct = 0, first_correct = 0, first_fast = 0, best_fast = 0, hyb = 0;
  std::vector<std::optional<double>> sp_eager, sp_compile;
  std::vector<double> geo_e, geo_c;
  bool any_compile = false;
  for (const AttemptRec* a : atts) {
    by_task[a->task_id].push_back(a);
    g.verdicts += static_cast<int>(a->turns.size());
    g.max_turns = std::max(g.max_turns, a->turns.back().first + 1);
    const Verdict& v = *a->best;
    ++g.outcomes[std::string(to_string(v.outcome))];
    if (built(v)) ++n_built;
    if (v.correct) ++n_correct;
    if (v.correct && hybrid(v)) ++hyb;
    if (a->first->correct) ++first_correct;
    if (fast_than(*a->first, 1)) ++first_fast;
    if (fast_than(v, 1)) ++best_fast;
    sp_eager.push_back(passed(v) ? fast_p_speedup(v) : std::nullopt);
    sp_compile.push_back(passed(v) ? fast_p_speedup(v, true) : std::nullopt);
    if (passed(v) && v.speedup_eager) geo_e.push_back(*v.speedup_eager);
    if (passed(v) && v.speedup_compile) geo_c.push_back(*v.speedup_compile);
    for (const auto& [t, tv] : a->turns)
      if (tv->compile_runtime_ms) any_compile = true;
  }
  g.tasks = static_cast<int>(by_task.size());
  g.build_rate = frac(n_built, g.attempts);
  g.correct_rate = frac(n_correct, g.attempts);
  for (double p : o.ps) {
    g.fast_p_eager[p] = stats::fast_p(sp_eager, p);
    if (any_compile) g.fast_p_compile[p] = stats::fast_p(sp_compile, p);
  }
  g.geomean_eager = stats::geomean(geo_e);
  g.geomean_compile = stats::geomean(geo_c);
  g.timed_eager = static_cast<int>(geo_e.size());
  g.timed_compile = static_cast<int>(geo_c.size());
  g.first_turn_correct = frac(first_correct, g.attempts);
  g.first_turn_fast1 = frac(first_fast, g.attempts);
  g.best_turn_correct = g.correct_rate;
  g.best_turn_fast1 = frac(best_fast, g.attempts);
  g.hybrid = hyb;
  g.hybrid_share = frac(hyb, n_correct);
  if (!by_task.empty()) {
    g.min_samples = INT32_MAX;
    for (const auto& [t, as] : by_task) g.min_samples = std::min<int>(g.min_samples, static_cast<int>(as.size()));
    std::vector<int> ks;
    for (int k = 1; k <= g.min_samples; k *= 2) ks.push_back(k);
    if (ks.back() != g.min_samples) ks.push_back(g.min_samples);
    for (int k : ks) {
      double pass = 0, fast = 0, best = 0;
      for (const auto& [t, as] : by_task) {
        const int n = static_cast<int>(as.size());
        int c = 0, f = 0;
        std::vector<double> values;
        for (const AttemptRec* a : as) {
          c += a->best->correct;
          f += fast_than(*a->best, 1);
          values.push_back(passed(*a->best) ? a->best->speedup_eager.value_or(0) : 0.0);
        }
        pass += stats::pass_at_k(n, c, k);
        fast += stats::pass_at_k(n, f, k);
        best += stats::expected_max_at_k(values, k);
      }
      g.pass_at_k[k] = pass / by_task.size();
      g.fast1_at_k[k] = fast / by_task.size();
      g.best_at_k[k] = best / by_task.size();
    }
  }
  return g;
}

std::string opt(const std::optional<double>& v, const char* f = "{:.3f}") {
  return v ? fmt::format(fmt::runtime(f), *v) : std::string("-");
}

nlohmann::json opt_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

template <class K>
nlohmann::json map_json(const std::map<K, double>& m) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : m) j[fmt::format("{:g}", static_cast<double>(k))] = v;
  return j;
}

}  // namespace

TaskInfo task_info(const std::string& task_id) {
  TaskInfo info{"other", "other", "other"};
  static const std::regex kb(R"(^L(\d)/(\d+)(_.*)?$)");
  static const std::regex gen(R"(^gen/([A-Za-z0-9_]+)/(\d+)(-.*)?$)");
  std::smatch m;
  if (std::regex_match(task_id, m, kb)) {
    const int level = std::stoi(m[1]);
    info.level = "L" + m[1].str();
    info.split = "kernelbench";
    info.family = level == 1 ? kernelbench_l1_family(std::stoi(m[2])) : level == 2 ? "fused" : "architecture";
  } else if (std::regex_match(task_id, m, gen)) {
    info.level = "gen";
    info.family = m[1];
    const std::uint64_t seed = std::stoull(m[2]);
    // splits of kgym/taskgen.hpp: transfer [800000, 900000), heldout [900000, 1000000)
    info.split = seed >= 900000 && seed < 1000000 ? "heldout" : seed >= 800000 && seed < 900000 ? "transfer" : "train";
  }
  return info;
}

Report build_report(const std::vector<Verdict>& verdicts, const ReportOptions& o) {
  Report r;
  const std::vector<AttemptRec> atts = attempts_of(verdicts);
  std::vector<const AttemptRec*> all;
  std::map<std::string, std::map<std::string, std::vector<const AttemptRec*>>> groups;
  for (const auto& a : atts) {
    all.push_back(&a);
    TaskInfo info = task_info(a.task_id);
    groups["level"][info.level].push_back(&a);
    groups["family"][info.family].push_back(&a);
    groups["split"][info.split].push_back(&a);
  }
  r.groups.push_back(metrics_of("all", "all", all, o));
  for (const char* key : {"level", "family", "split"})
    for (const auto& [value, as] : groups[key]) r.groups.push_back(metrics_of(key, value, as, o));

  for (const auto& v : verdicts) {
    if (!v.correct) continue;
    for (const auto& [name, sp] : {std::pair{"eager", v.speedup_eager}, std::pair{"torch.compile", v.speedup_compile}})
      if (sp && *sp > o.implausible_speedup)
        r.implausible.push_back({v.task_id, v.candidate_id,
                                 fmt::format("speedup {:.1f}x over {} is above {:g}x", *sp, name, o.implausible_speedup),
                                 *sp, v.runtime_ms, std::nullopt});
    auto fl = o.floor_ms.find(v.task_id);
    if (fl != o.floor_ms.end() && v.runtime_ms && *v.runtime_ms < fl->second)
      r.implausible.push_back({v.task_id, v.candidate_id,
                               fmt::format("runtime {:.4g} ms is below the roofline floor {:.4g} ms", *v.runtime_ms, fl->second),
                               v.speedup_eager.value_or(0), v.runtime_ms, fl->second});
    else if (o.bandwidth_gbs && v.runtime_ms && !v.measurements.cases.empty() && v.measurements.cases[0].numel > 0) {
      const double write_floor_ms = static_cast<double>(v.measurements.cases[0].numel) * 2.0 / (*o.bandwidth_gbs * 1e9) * 1e3;
      if (*v.runtime_ms < write_floor_ms)
        r.implausible.push_back({v.task_id, v.candidate_id,
                                 fmt::format("runtime {:.4g} ms is below the output-write floor {:.4g} ms ({} elements at {:g} GB/s)",
                                             *v.runtime_ms, write_floor_ms, v.measurements.cases[0].numel, *o.bandwidth_gbs),
                                 v.speedup_eager.value_or(0), v.runtime_ms, write_floor_ms});
    }
  }

  if (!o.claims.empty()) {
    ClaimSummary cs;
    std::vector<double> claimed_all, claimed_passed, measured_passed, ratios, cc, mc;
    int claimed_fast = 0, measured_fast = 0;
    for (const auto& v : verdicts) {
      auto it = o.claims.find(v.candidate_id);
      if (it == o.claims.end()) continue;
      const auto& [ce, cc_] = it->second;
      r.claims.push_back({v.task_id, v.candidate_id, std::string(to_string(v.outcome)),
                          passed(v) ? v.speedup_eager : std::nullopt, passed(v) ? v.speedup_compile : std::nullopt, ce, cc_});
      if (!ce) continue;
      ++cs.rows;
      claimed_all.push_back(*ce);
      if (*ce > 1) ++claimed_fast;
      if (fast_than(v, 1)) ++measured_fast;
      if (passed(v) && v.speedup_eager) {
        ++cs.passed;
        claimed_passed.push_back(*ce);
        measured_passed.push_back(*v.speedup_eager);
        if (*ce > 0) ratios.push_back(*v.speedup_eager / *ce);
      }
      if (passed(v) && v.speedup_compile && cc_) {
        ++cs.compile_pairs;
        cc.push_back(*cc_);
        mc.push_back(*v.speedup_compile);
      }
    }
    cs.claimed_fast1 = frac(claimed_fast, cs.rows);
    cs.measured_fast1 = frac(measured_fast, cs.rows);
    cs.claimed_geomean = stats::geomean(claimed_all);
    cs.claimed_geomean_passed = stats::geomean(claimed_passed);
    cs.measured_geomean_passed = stats::geomean(measured_passed);
    if (!ratios.empty()) cs.median_ratio = stats::quantile(ratios, 0.5);
    cs.claimed_compile_geomean_passed = stats::geomean(cc);
    cs.measured_compile_geomean_passed = stats::geomean(mc);
    r.claim_summary = cs;
  }
  return r;
}

Comparison compare_runs(const std::vector<Verdict>& run, const std::vector<Verdict>& baseline, const ReportOptions& o) {
  struct PerTask {
    double correct = 0, fast1 = 0, log_speedup = 0;
    bool any_correct = false;
    int n = 0;
  };
  auto per_task = [](const std::vector<Verdict>& vs) {
    std::map<std::string, PerTask> out;
    for (const auto& a : attempts_of(vs)) {
      PerTask& p = out[a.task_id];
      const Verdict& v = *a.best;
      p.correct += v.correct;
      p.fast1 += fast_than(v, 1);
      p.log_speedup += passed(v) && v.speedup_eager && *v.speedup_eager > 0 ? std::log(*v.speedup_eager) : 0.0;
      p.any_correct = p.any_correct || v.correct;
      ++p.n;
    }
    for (auto& [t, p] : out) {
      p.correct /= p.n;
      p.fast1 /= p.n;
      p.log_speedup /= p.n;
    }
    return out;
  };
  const auto a = per_task(run), b = per_task(baseline);
  Comparison c;
  std::vector<double> ac, bc, af, bf, al, bl;
  for (const auto& [task, pa] : a) {
    auto it = b.find(task);
    if (it == b.end()) continue;
    const PerTask& pb = it->second;
    ac.push_back(pa.correct), bc.push_back(pb.correct);
    af.push_back(pa.fast1), bf.push_back(pb.fast1);
    al.push_back(pa.log_speedup), bl.push_back(pb.log_speedup);
    if (pa.any_correct && !pb.any_correct) c.fixed.push_back(task);
    if (!pa.any_correct && pb.any_correct) c.broken.push_back(task);
  }
  c.common_tasks = static_cast<int>(ac.size());
  if (c.common_tasks == 0)
    throw Error(ErrorKind::input, "the run and the baseline have no task in common: compare runs of the same suite");
  auto diff = [&](const char* name, const std::vector<double>& x, const std::vector<double>& y) {
    c.differences.push_back({name, stats::mean(x), stats::mean(y), stats::paired_bootstrap(x, y, o.resamples, 0.95, o.seed)});
  };
  diff("correct", ac, bc);
  diff("fast_1", af, bf);
  diff("log_speedup", al, bl);
  return c;
}

std::map<std::string, std::pair<std::optional<double>, std::optional<double>>> read_claims(const std::filesystem::path& jsonl) {
  std::ifstream in(jsonl);
  if (!in) throw Error(ErrorKind::input, "cannot read claims file " + jsonl.string());
  std::map<std::string, std::pair<std::optional<double>, std::optional<double>>> out;
  std::string line;
  int number = 0;
  auto num = [](const nlohmann::json& row, const char* key) -> std::optional<double> {
    if (row.contains(key) && row[key].is_number()) return row[key].get<double>();
    return std::nullopt;
  };
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json row = nlohmann::json::parse(line, nullptr, false);
    if (!row.is_object())
      throw Error(ErrorKind::input, jsonl.string() + ":" + std::to_string(number) + " is not a JSON object");
    std::string id = row.contains("candidate_id") && row["candidate_id"].is_string()
                         ? row["candidate_id"].get<std::string>()
                         : jsonl.filename().string() + ":" + std::to_string(number);
    out[id] = {num(row, "score_default"), num(row, "score_torch_compile_default")};
  }
  return out;
}

nlohmann::json to_json(const Report& r) {
  nlohmann::json j;
  j["name"] = r.name;
  j["manifest"] = r.manifest;
  j["groups"] = nlohmann::json::array();
  for (const auto& g : r.groups) {
    j["groups"].push_back({{"key", g.key},
                           {"value", g.value},
                           {"tasks", g.tasks},
                           {"attempts", g.attempts},
                           {"verdicts", g.verdicts},
                           {"outcomes", g.outcomes},
                           {"build_rate", g.build_rate},
                           {"correct_rate", g.correct_rate},
                           {"fast_p_eager", map_json(g.fast_p_eager)},
                           {"fast_p_compile", map_json(g.fast_p_compile)},
                           {"geomean_speedup_eager", opt_json(g.geomean_eager)},
                           {"geomean_speedup_compile", opt_json(g.geomean_compile)},
                           {"timed_eager", g.timed_eager},
                           {"timed_compile", g.timed_compile},
                           {"first_turn", {{"correct", g.first_turn_correct}, {"fast_1", g.first_turn_fast1}}},
                           {"best_of_turns", {{"correct", g.best_turn_correct}, {"fast_1", g.best_turn_fast1}}},
                           {"max_turns", g.max_turns},
                           {"min_samples", g.min_samples},
                           {"pass_at_k", map_json(g.pass_at_k)},
                           {"fast1_at_k", map_json(g.fast1_at_k)},
                           {"best_at_k", map_json(g.best_at_k)},
                           {"hybrid", g.hybrid},
                           {"hybrid_share", g.hybrid_share}});
  }
  j["implausible"] = nlohmann::json::array();
  for (const auto& f : r.implausible)
    j["implausible"].push_back({{"task_id", f.task_id}, {"candidate_id", f.candidate_id}, {"reason", f.reason},
                                {"speedup", f.speedup}, {"runtime_ms", opt_json(f.runtime_ms)}, {"floor_ms", opt_json(f.floor_ms)}});
  if (r.claim_summary) {
    const auto& c = *r.claim_summary;
    j["claims_summary"] = {{"rows", c.rows},
                           {"passed", c.passed},
                           {"claimed_fast_1", c.claimed_fast1},
                           {"measured_fast_1", c.measured_fast1},
                           {"claimed_geomean", opt_json(c.claimed_geomean)},
                           {"claimed_geomean_on_passed", opt_json(c.claimed_geomean_passed)},
                           {"measured_geomean_on_passed", opt_json(c.measured_geomean_passed)},
                           {"median_measured_over_claimed", opt_json(c.median_ratio)},
                           {"compile_pairs", c.compile_pairs},
                           {"claimed_compile_geomean_on_passed", opt_json(c.claimed_compile_geomean_passed)},
                           {"measured_compile_geomean_on_passed", opt_json(c.measured_compile_geomean_passed)}};
    j["claims"] = nlohmann::json::array();
    for (const auto& c2 : r.claims)
      j["claims"].push_back({{"task_id", c2.task_id}, {"candidate_id", c2.candidate_id}, {"outcome", c2.outcome},
                             {"measured_eager", opt_json(c2.measured_eager)}, {"measured_compile", opt_json(c2.measured_compile)},
                             {"claimed_eager", opt_json(c2.claimed_eager)}, {"claimed_compile", opt_json(c2.claimed_compile)}});
  }
  if (r.comparison) {
    const auto& c = *r.comparison;
    nlohmann::json d = nlohmann::json::array();
    for (const auto& x : c.differences)
      d.push_back({{"metric", x.metric}, {"run", x.run}, {"baseline", x.baseline}, {"difference", x.diff.estimate},
                   {"ci95", {x.diff.low, x.diff.high}}, {"tasks", x.diff.n}, {"resamples", x.diff.resamples}});
    j["comparison"] = {{"baseline", c.baseline_name}, {"common_tasks", c.common_tasks}, {"differences", d},
                       {"fixed", c.fixed}, {"broken", c.broken}};
  }
  return j;
}

std::string render_report(const Report& r) {
  std::string out = fmt::format("kgym report: {}\n\n", r.name);
  const GroupMetrics& all = r.groups.front();
  out += fmt::format("{} tasks, {} attempts (task x sample), {} verdicts, up to {} turn(s)\n", all.tasks, all.attempts,
                     all.verdicts, all.max_turns);
  out += "outcomes (best of turns):";
  for (const auto& [o, n] : all.outcomes) out += fmt::format(" {}={}", o, n);
  out += "\n\n";
  out += fmt::format("{:<22} {:>5} {:>5} {:>6} {:>6}", "group", "tasks", "att", "build", "corr");
  for (const auto& [p, f] : all.fast_p_eager) out += fmt::format(" {:>7}", fmt::format("fast_{:g}", p));
  out += fmt::format(" {:>8} {:>8} {:>8} {:>7}\n", "geomean", "fast1/tc", "geo/tc", "hybrid");
  for (const auto& g : r.groups) {
    out += fmt::format("{:<22} {:>5} {:>5} {:>6.3f} {:>6.3f}", g.key == "all" ? "all" : g.key + "=" + g.value, g.tasks,
                       g.attempts, g.build_rate, g.correct_rate);
    for (const auto& [p, f] : g.fast_p_eager) out += fmt::format(" {:>7.3f}", f);
    auto tc = g.fast_p_compile.find(1.0);
    out += fmt::format(" {:>8} {:>8} {:>8} {:>7.3f}\n", opt(g.geomean_eager, "{:.3f}x"),
                       tc == g.fast_p_compile.end() ? std::string("-") : fmt::format("{:.3f}", tc->second),
                       opt(g.geomean_compile, "{:.3f}x"), g.hybrid_share);
  }
  out += "(fast_p and geomean vs eager PyTorch; /tc = vs torch.compile; geomean over passed attempts)\n\n";
  out += "samples:";
  for (const auto& [k, v] : all.pass_at_k) out += fmt::format("  pass@{}={:.3f}", k, v);
  for (const auto& [k, v] : all.fast1_at_k) out += fmt::format("  fast1@{}={:.3f}", k, v);
  for (const auto& [k, v] : all.best_at_k) out += fmt::format("  best@{}={:.3f}x", k, v);
  out += fmt::format("\nturns: first turn correct {:.3f} fast_1 {:.3f}; best of turns correct {:.3f} fast_1 {:.3f}\n",
                     all.first_turn_correct, all.first_turn_fast1, all.best_turn_correct, all.best_turn_fast1);
  if (r.claim_summary) {
    const auto& c = *r.claim_summary;
    out += fmt::format("\nclaimed vs measured ({} rows with a claim, {} passed here):\n", c.rows, c.passed);
    out += fmt::format("  fast_1 vs eager: claimed {:.3f}, measured {:.3f}\n", c.claimed_fast1, c.measured_fast1);
    out += fmt::format("  geomean vs eager: claimed {} (all rows), claimed {} vs measured {} (passed rows); median measured/claimed {}\n",
                       opt(c.claimed_geomean, "{:.3f}x"), opt(c.claimed_geomean_passed, "{:.3f}x"),
                       opt(c.measured_geomean_passed, "{:.3f}x"), opt(c.median_ratio, "{:.3f}"));
    if (c.compile_pairs)
      out += fmt::format("  geomean vs torch.compile ({} rows): claimed {} vs measured {}\n", c.compile_pairs,
                         opt(c.claimed_compile_geomean_passed, "{:.3f}x"), opt(c.measured_compile_geomean_passed, "{:.3f}x"));
  }
  out += fmt::format("\nimplausible ({}):\n", r.implausible.size());
  for (const auto& f : r.implausible) out += fmt::format("  {:<40} {:<28} {}\n", f.task_id, f.candidate_id, f.reason);
  if (r.comparison) {
    const auto& c = *r.comparison;
    out += fmt::format("\nvs baseline {} ({} common tasks; paired bootstrap, 95% CI):\n", c.baseline_name, c.common_tasks);
    for (const auto& d : c.differences)
      out += fmt::format("  {:<12} run {:>8.4f}  baseline {:>8.4f}  diff {:>+8.4f}  [{:+.4f}, {:+.4f}]\n", d.metric, d.run,
                         d.baseline, d.diff.estimate, d.diff.low, d.diff.high);
    out += fmt::format("  fixed ({}):", c.fixed.size());
    for (const auto& t : c.fixed) out += " " + t;
    out += fmt::format("\n  broken ({}):", c.broken.size());
    for (const auto& t : c.broken) out += " " + t;
    out += "\n";
  }
  return out;
}

std::string render_report_markdown(const Report& r) {
  const GroupMetrics& all = r.groups.front();
  std::string out = "| group | tasks | attempts | build | correct |";
  for (const auto& [p, f] : all.fast_p_eager) out += fmt::format(" fast_{:g} |", p);
  out += " geomean (eager) | fast_1 vs compile | geomean (compile) |\n|---|---:|---:|---:|---:|";
  for (std::size_t i = 0; i < all.fast_p_eager.size(); ++i) out += "---:|";
  out += "---:|---:|---:|\n";
  for (const auto& g : r.groups) {
    out += fmt::format("| {} | {} | {} | {:.3f} | {:.3f} |", g.key == "all" ? "**all**" : g.key + "=" + g.value, g.tasks,
                       g.attempts, g.build_rate, g.correct_rate);
    for (const auto& [p, f] : g.fast_p_eager) out += fmt::format(" {:.3f} |", f);
    auto tc = g.fast_p_compile.find(1.0);
    out += fmt::format(" {} | {} | {} |\n", opt(g.geomean_eager, "{:.3f}x"),
                       tc == g.fast_p_compile.end() ? std::string("-") : fmt::format("{:.3f}", tc->second),
                       opt(g.geomean_compile, "{:.3f}x"));
  }
  out += "\nOutcomes:";
  for (const auto& [o, n] : all.outcomes) out += fmt::format(" {} {},", o, n);
  out.pop_back();
  out += "\n";
  if (!r.implausible.empty()) {
    out += "\n| implausible: task | candidate | reason |\n|---|---|---|\n";
    for (const auto& f : r.implausible) out += fmt::format("| {} | {} | {} |\n", f.task_id, f.candidate_id, f.reason);
  }
  return out;
}

}  // namespace kgym
