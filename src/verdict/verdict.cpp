#include "kgym/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "kgym/error.hpp"

namespace kgym {

Tolerance default_tolerance(std::string_view dtype) {
  if (dtype == "float16" || dtype == "bfloat16") return {1e-2, 1e-2};
  if (dtype == "float64") return {1e-7, 1e-7};
  return {1e-4, 1e-4};
}

namespace {
double quantile(const std::vector<double>& sorted, double q) {
  double pos = q * static_cast<double>(sorted.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  auto hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] * (1 - frac) + sorted[hi] * frac;
}

std::string failure_text(const Failure& f) {
  std::string text = f.type.empty() ? f.message : f.type + ": " + f.message;
  if (f.stage == "process") {
    text = f.signal ? fmt::format("process killed by signal {}", f.signal)
                    : fmt::format("process exited with code {}", f.exit_code);
    if (!f.message.empty()) text += " (" + f.message + ")";
  }
  return text;
}

/// Rank of a per-case failure kind; the verdict takes the highest.
int rank(Outcome o) {
  switch (o) {
    case Outcome::contract_violation: return 3;
    case Outcome::runtime_error:
    case Outcome::timeout: return 2;
    case Outcome::incorrect: return 1;
    default: return 0;
  }
}
}  // namespace

TimeStats summarize_times(const std::vector<double>& times_ms) {
  if (times_ms.empty()) throw Error(ErrorKind::internal, "summarize_times: no times");
  std::vector<double> s = times_ms;
  std::sort(s.begin(), s.end());
  TimeStats t;
  t.n = static_cast<int>(s.size());
  t.median_ms = quantile(s, 0.5);
  t.mean_ms = std::accumulate(s.begin(), s.end(), 0.0) / t.n;
  t.min_ms = s.front();
  t.max_ms = s.back();
  t.iqr_ms = quantile(s, 0.75) - quantile(s, 0.25);
  t.spread = t.median_ms > 0 ? t.iqr_ms / t.median_ms : 0;
  return t;
}

Verdict verdict_without_run(Outcome outcome, Gate gate, std::string message) {
  Verdict v;
  v.outcome = outcome;
  v.gate = gate;
  v.messages.push_back(std::move(message));
  return v;
}

Verdict judge(const Measurements& m, const JudgeOptions& options) {
  Verdict v;
  v.measurements = m;
  auto end = [&](Outcome o, Gate g, std::string msg) -> Verdict& {
    v.outcome = o;
    v.gate = g;
    v.messages.insert(v.messages.begin(), std::move(msg));
    return v;
  };

  if (m.task_failure) return end(Outcome::task_error, Gate::none, "reference failed: " + *m.task_failure);

  // Gate 1/2: parse, basic policy, build.
  const LoadRecord& load = m.load;
  if (m.timed_out_stage && (*m.timed_out_stage == "load"))
    return end(Outcome::timeout, Gate::build, "loading/building the candidate exceeded its time limit");
  if (!load.parsed && m.crash)
    return end(Outcome::runtime_error, Gate::build, "candidate crashed while loading: " + failure_text(*m.crash));
  if (!load.parsed)
    return end(Outcome::build_failed, Gate::build,
               "candidate does not parse" + (load.failure ? ": " + failure_text(*load.failure) : std::string()));
  if (load.parsed && !load.model_new_defined)
    return end(Outcome::policy_rejected, Gate::policy,
               "no top-level class ModelNew: define `class ModelNew(nn.Module)` with the same "
               "constructor arguments as Model");
  if (!load.ok) {
    if (m.crash) return end(Outcome::runtime_error, Gate::build, "candidate crashed while loading: " + failure_text(*m.crash));
    if (!load.failure) return end(Outcome::build_failed, Gate::build, "candidate did not load (no reason reported)");
    const Failure& f = *load.failure;
    if (f.stage == "init")
      return end(Outcome::runtime_error, Gate::build, "ModelNew(*get_init_inputs()) raised " + failure_text(f));
    return end(Outcome::build_failed, Gate::build, "import/build failed: " + failure_text(f));
  }

  // Gate 4: correctness, over every case that ran.
  Outcome worst = Outcome::passed;
  std::string worst_msg;
  double max_abs = 0;
  bool any_compared = false;
  for (const CaseRecord& c : m.cases) {
    // A value transform can take a task outside its domain (negated probabilities for KLDiv):
    // when the reference itself is not finite there, the case says nothing about the candidate.
    if (!c.reference_finite && c.transform != "nominal" && !c.failure && c.output_plain_tensor) {
      v.messages.push_back(fmt::format("case {} ({}) skipped: the reference output is not finite under "
                                       "this value transform", c.index, c.transform));
      continue;
    }
    ++v.cases_total;
    Outcome o = Outcome::passed;
    std::string msg;
    const std::string label = fmt::format("case {} ({})", c.index, c.transform);
    if (c.failure) {
      o = Outcome::runtime_error;
      msg = label + ": " + failure_text(*c.failure);
    } else if (!c.output_plain_tensor) {
      o = Outcome::contract_violation;
      msg = label + ": output is a " + c.output_type + ", not a plain torch.Tensor";
    } else if (!c.structure_matches || !c.dtype_matches || !c.shape_matches || !c.device_matches) {
      o = Outcome::contract_violation;
      msg = label + ": output does not match the reference's " +
            std::string(!c.structure_matches ? "structure" : !c.dtype_matches ? "dtype"
                        : !c.shape_matches ? "shape" : "device") +
            (c.detail.empty() ? "" : " (" + c.detail + ")");
    } else if (!c.inputs_unchanged) {
      o = Outcome::contract_violation;
      msg = label + ": the candidate modified its inputs";
    } else if (c.output_aliases_input) {
      o = Outcome::contract_violation;
      msg = label + ": the output shares storage with an input";
    } else {
      any_compared = true;
      max_abs = std::max(max_abs, c.max_abs_error);
      if (c.nonfinite_mismatches > 0) {
        o = Outcome::incorrect;
        msg = fmt::format("{}: {} NaN/Inf values where the reference is finite", label, c.nonfinite_mismatches);
      } else if (c.mismatches > 0 || !(c.tolerance_ratio <= 1.0)) {
        o = Outcome::incorrect;
        std::string at;
        for (std::size_t i = 0; i < c.first_mismatch_index.size(); ++i)
          at += (i ? "," : "") + std::to_string(c.first_mismatch_index[i]);
        msg = fmt::format("{}: {} of {} elements outside atol={:g} rtol={:g}; max abs error {:.3g}, "
                          "first at [{}]", label, c.mismatches, c.numel, c.atol, c.rtol, c.max_abs_error, at);
      }
    }
    if (o == Outcome::passed) {
      ++v.cases_passed;
    } else {
      v.messages.push_back(msg);
      if (rank(o) > rank(worst)) {
        worst = o;
        worst_msg = msg;
      }
    }
  }
  if (any_compared) v.max_abs_error = max_abs;
  const bool dead = m.crash || (m.timed_out_stage && *m.timed_out_stage == "case");
  if (dead) {
    const int ran = v.cases_total;
    if (m.timed_out_stage && *m.timed_out_stage == "case")
      return end(Outcome::timeout, Gate::correctness,
                 fmt::format("case {} exceeded its time limit; the candidate was killed", ran));
    return end(Outcome::runtime_error, Gate::correctness,
               fmt::format("candidate died during case {}: {}", ran, failure_text(*m.crash)));
  }
  if (worst != Outcome::passed) {
    v.messages.erase(std::find(v.messages.begin(), v.messages.end(), worst_msg));
    return end(worst, Gate::correctness, worst_msg);
  }
  if (v.cases_total == 0) return end(Outcome::runtime_error, Gate::correctness, "no correctness case ran");
  v.correct = true;

  // Gate 5: timing.
  if (m.timed_out_stage && *m.timed_out_stage == "timing")
    return end(Outcome::timeout, Gate::timing, "the timing phase exceeded its time limit");
  if (m.crash) return end(Outcome::runtime_error, Gate::timing, "candidate died while timed: " + failure_text(*m.crash));
  if (!m.candidate_timing) return end(Outcome::passed, Gate::correctness, "correct (timing not requested)");
  const TimingRecord& t = *m.candidate_timing;
  if (t.failure) return end(Outcome::runtime_error, Gate::timing, "candidate raised while timed: " + failure_text(*t.failure));
  if (static_cast<int>(t.times_ms.size()) < options.min_timed_calls)
    return end(Outcome::timing_invalid, Gate::timing,
               fmt::format("only {} timed calls (need {})", t.times_ms.size(), options.min_timed_calls));
  for (double x : t.times_ms)
    if (!std::isfinite(x) || x <= 0)
      return end(Outcome::timing_invalid, Gate::timing, fmt::format("a timed call reported {} ms", x));
  const double total = std::accumulate(t.times_ms.begin(), t.times_ms.end(), 0.0);
  if (t.wall_ms > 0 && total > t.wall_ms * options.wall_clock_slack + 1.0)
    return end(Outcome::timing_invalid, Gate::timing,
               fmt::format("reported times sum to {:.3f} ms but the timed phase took {:.3f} ms of wall clock",
                           total, t.wall_ms));
  const TimeStats cand = summarize_times(t.times_ms);
  v.runtime_ms = cand.median_ms;
  v.runtime_spread = cand.spread;
  std::string headline = fmt::format("correct on {} cases; {:.4g} ms", v.cases_total, cand.median_ms);
  auto baseline = [&](const std::optional<TimingRecord>& b, std::optional<double>& ms,
                      std::optional<double>& speedup, const char* name) {
    if (!b) return;
    if (b->failure || b->times_ms.empty()) {
      v.messages.push_back(std::string(name) + " baseline unavailable" +
                           (b->failure ? ": " + failure_text(*b->failure) : ""));
      return;
    }
    ms = summarize_times(b->times_ms).median_ms;
    speedup = *ms / cand.median_ms;
    headline += fmt::format(", {:.3g}x vs {}", *speedup, name);
  };
  baseline(m.eager_timing, v.ref_runtime_ms, v.speedup_eager, "eager");
  baseline(m.compile_timing, v.compile_runtime_ms, v.speedup_compile, "torch.compile");
  return end(Outcome::passed, Gate::timing, headline);
}

void to_json(nlohmann::json& j, const Verdict& v) {
  auto opt = [](const std::optional<double>& x) { return x ? nlohmann::json(*x) : nlohmann::json(nullptr); };
  j = {{"task_id", v.task_id},
       {"candidate_id", v.candidate_id},
       {"outcome", std::string(to_string(v.outcome))},
       {"gate", std::string(to_string(v.gate))},
       {"correct", v.correct},
       {"cases_passed", v.cases_passed},
       {"cases_total", v.cases_total},
       {"max_abs_error", opt(v.max_abs_error)},
       {"runtime_ms", opt(v.runtime_ms)},
       {"runtime_spread", opt(v.runtime_spread)},
       {"ref_runtime_ms", opt(v.ref_runtime_ms)},
       {"compile_runtime_ms", opt(v.compile_runtime_ms)},
       {"speedup_eager", opt(v.speedup_eager)},
       {"speedup_compile", opt(v.speedup_compile)},
       {"reward", v.reward},
       {"reward_name", v.reward_name},
       {"messages", v.messages},
       {"policy_findings", v.policy_findings},
       {"provenance", v.provenance},
       {"measurements", v.measurements}};
}

void from_json(const nlohmann::json& j, Verdict& v) {
  auto opt = [&](const char* k, std::optional<double>& x) {
    if (auto it = j.find(k); it != j.end() && it->is_number()) x = it->get<double>();
  };
  v.task_id = j.value("task_id", "");
  v.candidate_id = j.value("candidate_id", "");
  auto o = outcome_from_string(j.value("outcome", ""));
  if (!o) throw Error(ErrorKind::input, "verdict has unknown outcome '" + j.value("outcome", "") + "'");
  v.outcome = *o;
  v.gate = gate_from_string(j.value("gate", "none")).value_or(Gate::none);
  v.correct = j.value("correct", false);
  v.cases_passed = j.value("cases_passed", 0);
  v.cases_total = j.value("cases_total", 0);
  opt("max_abs_error", v.max_abs_error);
  opt("runtime_ms", v.runtime_ms);
  opt("runtime_spread", v.runtime_spread);
  opt("ref_runtime_ms", v.ref_runtime_ms);
  opt("compile_runtime_ms", v.compile_runtime_ms);
  opt("speedup_eager", v.speedup_eager);
  opt("speedup_compile", v.speedup_compile);
  v.reward = j.value("reward", 0.0);
  v.reward_name = j.value("reward_name", "");
  v.messages = j.value("messages", std::vector<std::string>{});
  if (j.contains("policy_findings")) v.policy_findings = j["policy_findings"].get<std::vector<nlohmann::json>>();
  v.provenance = j.value("provenance", nlohmann::json::object());
  if (j.contains("measurements")) j["measurements"].get_to(v.measurements);
}

}  // namespace kgym
