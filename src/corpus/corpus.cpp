#include "kgym/corpus.hpp"

#include <cmath>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "kgym/error.hpp"
#include "kgym/outcome.hpp"
#include "kgym/task_probe.hpp"
#include "kgym/taskgen.hpp"

namespace kgym::corpus {

namespace fs = std::filesystem;

std::int64_t approx_tokens(const std::string& text) {
  return static_cast<std::int64_t>((text.size() + 3) / 4);
}

nlohmann::json Decision::to_json() const {
  nlohmann::json j = {{"line", line}, {"status", status}, {"detail", detail}};
  if (!module_id.empty()) j["module_id"] = module_id;
  if (!family.empty()) j["family"] = family;
  if (!verdict.is_null()) j["verdict"] = verdict;
  return j;
}

Decision Decision::from_json(const nlohmann::json& j) {
  Decision d;
  d.line = j.at("line").get<int>();
  d.status = j.at("status").get<std::string>();
  d.detail = j.value("detail", std::string());
  d.module_id = j.value("module_id", std::string());
  d.family = j.value("family", std::string());
  if (j.contains("verdict")) d.verdict = j["verdict"];
  return d;
}

nlohmann::json Report::to_json() const {
  nlohmann::json fam = nlohmann::json::object();
  for (const auto& [f, m] : by_family) fam[f.empty() ? "(none)" : f] = m;
  return {{"rows", rows}, {"kept", kept}, {"dropped", rows - kept}, {"by_reason", by_reason},
          {"by_family", fam}, {"malformed", malformed}};
}

std::string Report::render() const {
  std::string out = fmt::format("corpus: {} rows, {} kept, {} dropped\n", rows, kept, rows - kept);
  for (const auto& [reason, n] : by_reason) out += fmt::format("  {:<20} {:>6}\n", reason, n);
  if (by_family.size() > 1 || (by_family.size() == 1 && !by_family.begin()->first.empty())) {
    out += "by family:\n";
    for (const auto& [f, m] : by_family) {
      std::string line = fmt::format("  {:<20}", f.empty() ? "(none)" : f);
      for (const auto& [reason, n] : m) line += fmt::format(" {}={}", reason, n);
      out += line + "\n";
    }
  }
  return out;
}

std::optional<double> scale_for_target(Engine& engine, const Task& task, std::int64_t target, std::string* why) {
  const TaskProbe full = engine.probe_task(task, 1.0);
  if (!full.runs) {
    if (why) *why = full.reason;
    return std::nullopt;
  }
  const double n1 = static_cast<double>(full.input_elements);
  if (n1 <= 0 || target <= 0) {
    if (why) *why = "no tensor input: judged at its own size";
    return 1.0;
  }
  const TaskProbe half = engine.probe_task(task, 0.5);
  const double n2 = static_cast<double>(half.input_elements);
  if (!half.runs || n2 <= 0 || n2 >= n1) {
    if (why) *why = "its inputs have no size constants (module-level ints >= 16) to scale: judged at its own size";
    return 1.0;
  }
  const double k = std::log(n1 / n2) / std::log(2.0);  // count ~ scale^k
  const double f = std::pow(static_cast<double>(target) / n1, 1.0 / k);
  return std::clamp(f, 1e-4, 1e4);
}

namespace {

struct Counters {
  std::map<std::string, int> module_kept, family_kept;
};

void tally(Report& r, Counters& c, const Decision& d) {
  ++r.rows;
  ++r.by_reason[d.status];
  ++r.by_family[d.family][d.status];
  if (d.status == "malformed") r.malformed.push_back({{"line", d.line}, {"error", d.detail}});
  if (d.status == kKept) {
    ++r.kept;
    if (!d.module_id.empty()) ++c.module_kept[d.module_id];
    if (!d.family.empty()) ++c.family_kept[d.family];
  }
}

nlohmann::json verdict_record(const Verdict& v, double scale, std::int64_t input_elements) {
  nlohmann::json j = {{"outcome", std::string(to_string(v.outcome))},
                      {"headline", v.messages.empty() ? std::string() : v.messages.front()},
                      {"cases_passed", v.cases_passed},
                      {"cases_total", v.cases_total},
                      {"scale", scale},
                      {"input_elements", input_elements}};
  auto opt = [&](const char* key, const std::optional<double>& x) { j[key] = x ? nlohmann::json(*x) : nlohmann::json(); };
  opt("runtime_ms", v.runtime_ms);
  opt("ref_runtime_ms", v.ref_runtime_ms);
  opt("compile_runtime_ms", v.compile_runtime_ms);
  opt("speedup_eager", v.speedup_eager);
  opt("speedup_compile", v.speedup_compile);
  return j;
}

/// Decides one non-empty line; `row` receives the parsed row (for the kept output).
Decision decide(Engine& engine, const VerifyOptions& o, const Counters& c, const taskgen::Decontaminator* decon,
                int lineno, const std::string& text, nlohmann::json& row) {
  Decision d;
  d.line = lineno;
  try {
    row = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    d.status = "malformed";
    d.detail = fmt::format("line {}: not JSON: {}", lineno, e.what());
    return d;
  }
  auto text_field = [&](const char* key, bool required) -> std::optional<std::string> {
    if (!row.is_object() || !row.contains(key) || row[key].is_null()) {
      if (required) throw Error(ErrorKind::input, fmt::format("line {}: no `{}` field (a string of Python source)", lineno, key));
      return std::nullopt;
    }
    if (!row[key].is_string()) throw Error(ErrorKind::input, fmt::format("line {}: `{}` is not a string", lineno, key));
    return row[key].get<std::string>();
  };
  std::string reference, solution;
  try {
    if (!row.is_object()) throw Error(ErrorKind::input, fmt::format("line {}: not a JSON object", lineno));
    reference = *text_field("reference", true);
    solution = *text_field("solution", true);
    d.module_id = text_field("module_id", false).value_or("");
    d.family = text_field("family", false).value_or("");
    text_field("source", false);
  } catch (const Error& e) {
    d.status = "malformed";
    d.detail = e.what();
    return d;
  }
  const std::int64_t tokens = approx_tokens(reference) + approx_tokens(solution);
  if (o.max_tokens > 0 && tokens > o.max_tokens) {
    d.status = "over_budget";
    d.detail = fmt::format("about {} tokens (bytes / 4) of reference and solution, over --max-tokens {}", tokens, o.max_tokens);
    return d;
  }
  if (decon) {
    const auto [problem, sim] = decon->nearest(reference);
    if (sim > o.threshold) {
      d.status = "contaminated";
      d.detail = fmt::format("the reference matches benchmark problem {} (token-set Jaccard {:.3f} > {:g})", problem, sim,
                             o.threshold);
      return d;
    }
  }
  if (o.max_per_module > 0 && !d.module_id.empty()) {
    const auto it = c.module_kept.find(d.module_id);
    if (it != c.module_kept.end() && it->second >= o.max_per_module) {
      d.status = "max_per_module";
      d.detail = fmt::format("module {} has {} kept pairs already (--max-per-module {})", d.module_id, it->second, o.max_per_module);
      return d;
    }
  }
  if (o.max_per_family > 0 && !d.family.empty()) {
    const auto it = c.family_kept.find(d.family);
    if (it != c.family_kept.end() && it->second >= o.max_per_family) {
      d.status = "max_per_family";
      d.detail = fmt::format("family {} has {} kept pairs already (--max-per-family {})", d.family, it->second, o.max_per_family);
      return d;
    }
  }
  Task task;
  task.id = d.module_id.empty() ? fmt::format("corpus/{}", lineno) : "corpus/" + d.module_id;
  task.source = reference;
  task.origin = fmt::format("{}:{}", o.input.string(), lineno);
  Candidate cand;
  cand.id = fmt::format("{}:{}", o.input.filename().string(), lineno);
  cand.task_id = task.id;
  cand.code = without_bom(solution);
  std::string why;
  const std::optional<double> scale = scale_for_target(engine, task, o.target_elements, &why);
  if (!scale) {
    d.status = std::string(to_string(Outcome::task_error));
    d.detail = why;
    return d;
  }
  const TaskProbe at = engine.probe_task(task, *scale);
  if (!at.runs) {
    d.status = std::string(to_string(Outcome::task_error));
    d.detail = at.reason;
    return d;
  }
  EvalOptions eo = o.eval;
  eo.scale = *scale;
  eo.policy_profile = o.profile;
  const Verdict v = engine.evaluate(task, cand, eo);
  d.verdict = verdict_record(v, *scale, at.input_elements);
  if (!why.empty()) d.verdict["scale_note"] = why;
  d.status = v.outcome == Outcome::passed ? std::string(kKept) : std::string(to_string(v.outcome));
  d.detail = v.messages.empty() ? std::string() : v.messages.front();
  return d;
}

}  // namespace

Report verify(Engine& engine, const VerifyOptions& opts, const std::function<void(const Decision&)>& progress) {
  VerifyOptions o = opts;
  if (o.out.empty()) throw Error(ErrorKind::usage, "corpus verify needs --out (the kept rows)");
  if (o.report.empty()) o.report = o.out.string() + ".report.json";
  if (o.log.empty()) o.log = o.out.string() + ".log.jsonl";
  std::ifstream in(o.input);
  if (!in) throw Error(ErrorKind::input, "cannot read the corpus '" + o.input.string() + "': give a JSONL file");
  std::optional<taskgen::Decontaminator> decon;
  if (o.decontaminate) decon.emplace(*o.decontaminate, o.threshold);

  Report report;
  Counters counters;
  std::map<int, Decision> done;
  if (o.resume && fs::exists(o.log)) {
    std::ifstream prev(o.log);
    std::string l;
    while (std::getline(prev, l)) {
      if (l.empty()) continue;
      try {
        Decision d = Decision::from_json(nlohmann::json::parse(l));
        done[d.line] = d;
      } catch (const std::exception&) {
        // a line cut off when the previous run was stopped: that row is decided again
      }
    }
  }
  // Lines whose kept row is in --out already (a run stopped between writing the row and its log
  // line): not written twice.
  std::set<int> written;
  if (o.resume && fs::exists(o.out)) {
    std::ifstream prev(o.out);
    std::string l;
    while (std::getline(prev, l)) {
      try {
        written.insert(nlohmann::json::parse(l).at("line").get<int>());
      } catch (const std::exception&) {
      }
    }
  }
  const auto mode = o.resume ? std::ios::app : std::ios::trunc;
  std::ofstream out(o.out, std::ios::out | mode), log(o.log, std::ios::out | mode);
  if (!out || !log) throw Error(ErrorKind::input, "cannot write '" + o.out.string() + "' or '" + o.log.string() + "'");

  std::string text;
  int lineno = 0;
  while (std::getline(in, text)) {
    ++lineno;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (auto it = done.find(lineno); it != done.end()) {
      tally(report, counters, it->second);
      continue;
    }
    nlohmann::json row;
    Decision d = decide(engine, o, counters, decon ? &*decon : nullptr, lineno, text, row);
    if (d.status == kKept && !written.count(lineno)) {
      nlohmann::json kept = row;
      kept["verdict"] = d.verdict;
      kept["line"] = lineno;
      out << kept.dump() << "\n" << std::flush;
    }
    log << d.to_json().dump() << "\n" << std::flush;
    tally(report, counters, d);
    if (progress) progress(d);
  }
  std::ofstream rep(o.report);
  rep << report.to_json().dump(2) << "\n";
  return report;
}

}  // namespace kgym::corpus
