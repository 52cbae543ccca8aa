#include "kgym/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include <fmt/format.h>

#include "kgym/error.hpp"
#include "judge_rules.hpp"

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

std::string join(const std::vector<std::string>& xs, std::size_t max_items = 4) {
  std::string out;
  for (std::size_t i = 0; i < xs.size() && i < max_items; ++i) out += (i ? ", " : "") + xs[i];
  if (xs.size() > max_items) out += fmt::format(" (+{} more)", xs.size() - max_items);
  return out;
}

/// The value check of a compared output (reference side statistics): "" when it passes.
std::string value_failure(const CaseRecord& c, const JudgeOptions& options) {
  if (c.nonfinite_mismatches > 0)
    return fmt::format("{} NaN/Inf values where the reference is finite", c.nonfinite_mismatches);
  // The task-dtype reference is an approximation too: under torch's default flags cuDNN computes
  // float32 convolutions in TF32 (H200: the reference off by 9.6e-4 where an honest fp32 kernel
  // is off by 3e-6 from float64). An output within the case's absolute tolerance of the float64
  // reference everywhere is correct, whatever the task-dtype reference says.
  // "Everywhere" is where the cross-check looked: a mismatch where the reference (or the float64
  // reference) is NaN or Inf is outside it, and the rule cannot excuse it (red team rt16: log of
  // randn with NaN replaced by 0 passed, 32,593 of 65,536 elements wrong).
  // Each output against its own scaled atol (fp64_atol_ratio): one atol for all let a wrong
  // softmax beside a larger output pass (red team rt17).
  const bool exact_to_fp64 = c.fp64_checked && c.mismatches_outside_fp64 == 0 && c.fp64_atol_ratio >= 0 &&
                             c.fp64_atol_ratio <= 1.0;
  if ((c.mismatches > 0 || !(c.tolerance_ratio <= 1.0)) && !exact_to_fp64) {
    std::string at;
    for (std::size_t i = 0; i < c.first_mismatch_index.size(); ++i)
      at += (i ? "," : "") + std::to_string(c.first_mismatch_index[i]);
    return fmt::format("{} of {} elements outside atol={:g} rtol={:g}; max abs error {:.3g}, first at [{}]",
                       c.mismatches, c.numel, c.atol, c.rtol, c.max_abs_error, at);
  }
  if (c.rerun_nonfinite_mismatches > 0 || c.rerun_tolerance_ratio > 1.0)
    return fmt::format("two runs on the same inputs disagree ({} NaN/Inf positions differ, ratio {:.3g}): "
                       "the output depends on uninitialised memory", c.rerun_nonfinite_mismatches,
                       c.rerun_tolerance_ratio);
  if (c.fp64_checked) {
    const double limit = std::max(options.precision_factor * c.fp64_reference_error,
                                  options.precision_floor_eps * c.dtype_eps * c.fp64_scale);
    if (c.fp64_error > limit)
      return fmt::format("error against a float64 reference is {:.3g}, the float32 reference's own is {:.3g} "
                         "(limit {:.3g}): computed at reduced precision (fp16/bf16/TF32)?",
                         c.fp64_error, c.fp64_reference_error, limit);
  }
  return "";
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

namespace judge_detail {

std::string failure_text(const Failure& f) {
  std::string text = f.type.empty() ? f.message : f.type + ": " + f.message;
  if (f.stage == "process") {
    text = f.signal ? fmt::format("process killed by signal {}", f.signal)
                    : fmt::format("process exited with code {}", f.exit_code);
    if (!f.message.empty()) text += " (" + f.message + ")";
  }
  return text;
}

bool decide(Verdict& v, Outcome o, Gate g, std::string msg) {
  v.outcome = o;
  v.gate = g;
  if (o == Outcome::policy_rejected && g == Gate::launch)
    v.policy_findings.push_back({{"rule_id", msg.rfind("[op trace]", 0) == 0 ? "cpu_op_trace" : "launch_gate"},
                                 {"severity", "reject"}, {"message", msg}, {"line", 0}, {"column", 0},
                                 {"snippet", ""}, {"gate", "launch"}});
  v.messages.insert(v.messages.begin(), std::move(msg));
  return true;
}

}  // namespace judge_detail

using judge_detail::decide;
using judge_detail::failure_text;

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

bool recheck_holds(const CaseRecord& r, const JudgeOptions& options) {
  return r.output_plain_tensor && r.structure_matches && r.dtype_matches && r.shape_matches && r.device_matches &&
         value_failure(r, options).empty();
}

Verdict verdict_without_run(Outcome outcome, Gate gate, std::string message) {
  Verdict v;
  v.outcome = outcome;
  v.gate = gate;
  v.messages.push_back(std::move(message));
  return v;
}

namespace {

// Each rule below decides the verdict (and returns true) or lets the next rule look (false).

/// Not the candidate's fault: the task itself failed (task_error).
bool task_failure_rule(const Measurements& m, Verdict& v) {
  if (m.task_failure)
    return decide(v, Outcome::task_error, Gate::none, "not judged (the candidate is not at fault): " + *m.task_failure);
  return false;
}

/// Gate 1/2: parse, basic policy (a top-level ModelNew), build time limit.
bool parse_gate(const Measurements& m, Verdict& v) {
  const LoadRecord& load = m.load;
  if (m.timed_out_stage && (*m.timed_out_stage == "load"))
    return decide(v, Outcome::timeout, Gate::build, "loading/building the candidate exceeded its time limit");
  if (!load.parsed && m.crash)
    return decide(v, Outcome::runtime_error, Gate::build, "candidate crashed while loading: " + failure_text(*m.crash));
  if (!load.parsed)
    return decide(v, Outcome::build_failed, Gate::build,
                  "candidate does not parse" + (load.failure ? ": " + failure_text(*load.failure) : std::string()));
  if (load.parsed && !load.model_new_defined)
    return decide(v, Outcome::policy_rejected, Gate::policy,
                  "no top-level class ModelNew: define `class ModelNew(nn.Module)` with the same "
                  "constructor arguments as Model");
  return false;
}

/// Gate 2's link check: what the built extensions import, by the names the loader binds (the
/// source scan reads names as written; an asm label or a macro respells them). Its warnings are
/// kept as messages.
bool link_gate(const Measurements& m, Verdict& v) {
  if (!m.link) return false;
  std::vector<std::string> rejects;
  for (const LinkFinding& f : m.link->findings) {
    if (f.severity == "reject") rejects.push_back("[" + f.rule_id + "] " + f.message);
    else v.messages.push_back("[link] [" + f.rule_id + "] " + f.message);
  }
  if (!rejects.empty()) return decide(v, Outcome::policy_rejected, Gate::build, "[link] " + join(rejects));
  return false;
}

/// Gate 2, the load: tampering on import, a crash, ModelNew's constructor raising, or a build
/// error (its compiler's first error line).
bool load_gate(const Measurements& m, Verdict& v) {
  const LoadRecord& load = m.load;
  if (load.ok && !load.tampered.empty())
    return decide(v, Outcome::contract_violation, Gate::build,
                  "[tamper] importing the candidate replaced harness functions or changed precision flags: " +
                      join(load.tampered));
  if (load.ok) return false;
  if (m.crash)
    return decide(v, Outcome::runtime_error, Gate::build, "candidate crashed while loading: " + failure_text(*m.crash));
  if (!load.failure) return decide(v, Outcome::build_failed, Gate::build, "candidate did not load (no reason reported)");
  const Failure& f = *load.failure;
  if (f.stage == "init")
    return decide(v, Outcome::runtime_error, Gate::build, "ModelNew(*get_init_inputs()) raised " + failure_text(f));
  // The compiler's first error line first: a build error's message starts with the whole ninja
  // command line, which would cut the one line that says what to fix off the progress line.
  // Its line numbers are those of the generated main.cpp/cuda.cu.
  for (const std::string* text : {&f.message, &f.traceback}) {
    std::size_t at = text->find(": error: ");
    if (at == std::string::npos) at = text->find(": error ");  // nvcc: file(12): error
    if (at == std::string::npos) continue;
    const std::size_t start = text->rfind('\n', at) == std::string::npos ? 0 : text->rfind('\n', at) + 1;
    const std::string line = text->substr(start, std::min<std::size_t>(text->find('\n', at) - start, 300));
    const std::size_t slash = line.rfind('/', line.find(':'));
    return decide(v, Outcome::build_failed, Gate::build,
                  "build failed: " + (slash == std::string::npos ? line : line.substr(slash + 1)) +
                      " (lines of the generated source; the whole log is in measurements.load.failure)");
  }
  return decide(v, Outcome::build_failed, Gate::build, "import/build failed: " + failure_text(f));
}

/// One correctness case's outcome and message (passed: no message): a failure, the output
/// contract (plain tensor, structure/dtype/shape/device, inputs unchanged, no aliasing, no
/// tampering, no thread left running, a stable output), then the values. `compared` is set when
/// the values were checked.
std::pair<Outcome, std::string> case_outcome(const CaseRecord& c, const JudgeOptions& options, bool& compared) {
  const std::string label = c.shape_variant.empty()
                                ? fmt::format("case {} ({})", c.index, c.transform)
                                : fmt::format("case {} ({}, {} sizes)", c.index, c.transform, c.shape_variant);
  if (c.failure) return {Outcome::runtime_error, label + ": " + failure_text(*c.failure)};
  if (!c.output_plain_tensor)
    return {Outcome::contract_violation, label + ": output is a " + c.output_type + ", not a plain torch.Tensor"};
  if (!c.structure_matches || !c.dtype_matches || !c.shape_matches || !c.device_matches)
    return {Outcome::contract_violation,
            label + ": output does not match the reference's " +
                std::string(!c.structure_matches ? "structure" : !c.dtype_matches ? "dtype"
                            : !c.shape_matches ? "shape" : "device") +
                (c.detail.empty() ? "" : " (" + c.detail + ")")};
  if (!c.compared)
    return {Outcome::runtime_error, label + ": no output of the candidate was compared with the reference"};
  if (!c.inputs_unchanged) return {Outcome::contract_violation, label + ": the candidate modified its inputs"};
  if (c.output_aliases_input)
    return {Outcome::contract_violation, label + ": the output shares storage with an input"};
  if (!c.tampered.empty())
    return {Outcome::contract_violation,
            label + ": [tamper] the call replaced harness functions or changed precision flags: " + join(c.tampered)};
  if (c.threads_leaked)
    return {Outcome::contract_violation,
            label + ": " + (c.thread_detail.empty() ? "a thread started by the call was still running" : c.thread_detail)};
  if (!c.output_stable)
    return {Outcome::contract_violation, label + ": the output changed after the call returned (work still running)"};
  compared = true;
  if (std::string why = value_failure(c, options); !why.empty()) return {Outcome::incorrect, label + ": " + why};
  return {Outcome::passed, ""};
}

/// Gate 4: correctness, over every case that ran. The worst case's outcome (rank) decides; a
/// candidate that died during the cases is a timeout or a runtime error; no case run is a
/// runtime error. When every case passes the verdict is `correct` (and the task audit's notes
/// are added).
bool correctness_gate(const Measurements& m, const JudgeOptions& options, Verdict& v) {
  Outcome worst = Outcome::passed;
  std::string worst_msg;
  double max_abs = 0;
  bool any_compared = false;
  for (const CaseRecord& c : m.cases) {
    // A value transform can take a task outside its domain (negated probabilities for KLDiv):
    // when the reference itself is not finite there, the case says nothing about the candidate.
    if (!c.reference_finite && c.transform != "nominal" && !c.failure && c.output_plain_tensor && c.compared) {
      v.messages.push_back(fmt::format("case {} ({}) skipped: the reference output is not finite under "
                                       "this value transform", c.index, c.transform));
      continue;
    }
    ++v.cases_total;
    bool compared = false;
    auto [o, msg] = case_outcome(c, options, compared);
    if (compared) {
      any_compared = true;
      max_abs = std::max(max_abs, c.max_abs_error);
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
      return decide(v, Outcome::timeout, Gate::correctness,
                    fmt::format("case {} exceeded its time limit; the candidate was killed", ran));
    return decide(v, Outcome::runtime_error, Gate::correctness,
                  fmt::format("candidate died during case {}: {}", ran, failure_text(*m.crash)));
  }
  if (worst != Outcome::passed) {
    v.messages.erase(std::find(v.messages.begin(), v.messages.end(), worst_msg));
    return decide(v, worst, Gate::correctness, worst_msg);
  }
  if (v.cases_total == 0) return decide(v, Outcome::runtime_error, Gate::correctness, "no correctness case ran");
  v.correct = true;
  if (!m.audit.trivial_passing.empty())
    v.messages.push_back("task audit: trivial answer(s) " + join(m.audit.trivial_passing) +
                         " pass the regular cases; added cases " + join(m.audit.strengthened_with) +
                         (m.audit.still_passing.empty() ? std::string()
                                                         : "; still passing: " + join(m.audit.still_passing) + " (weak task)"));
  return false;
}

/// Gate 5, the timed calls' contract: the timing phase's time limit, a crash, timing not
/// requested (passed at correctness), a raise, tampering, threads left running, other processes
/// on the GPU or ignoring SIGCHLD, the rechecked timed outputs and the spot check.
bool timed_calls_gate(const Measurements& m, const JudgeOptions& options, Verdict& v) {
  if (m.timed_out_stage && *m.timed_out_stage == "timing")
    return decide(v, Outcome::timeout, Gate::timing, "the timing phase exceeded its time limit");
  if (m.crash) return decide(v, Outcome::runtime_error, Gate::timing, "candidate died while timed: " + failure_text(*m.crash));
  if (!m.candidate_timing) return decide(v, Outcome::passed, Gate::correctness, "correct (timing not requested)");
  const TimingRecord& t = *m.candidate_timing;
  if (t.failure)
    return decide(v, Outcome::runtime_error, Gate::timing, "candidate raised while timed: " + failure_text(*t.failure));
  if (!t.tampered.empty())
    return decide(v, Outcome::contract_violation, Gate::timing,
                  "[tamper] a timed call replaced harness functions, changed precision flags or broke the call "
                  "contract: " + join(t.tampered));
  if (t.threads_leaked > 0)
    return decide(v, Outcome::contract_violation, Gate::timing,
                  fmt::format("{} timed call(s) left a thread running: {}", t.threads_leaked, t.thread_detail));
  if (!t.foreign_gpu_processes.empty())
    return decide(v, Outcome::contract_violation, Gate::timing,
                  "[process] a process of the candidate other than its worker held the GPU: " +
                      join(t.foreign_gpu_processes) +
                      " (kgym traces and times one CUDA context per candidate, its worker's: its kernels "
                      "must run there, not in a child process)");
  if (!t.unreaping_processes.empty())
    return decide(v, Outcome::contract_violation, Gate::timing,
                  "[reap] a process of the candidate ignored SIGCHLD while its CPU time was measured: " +
                      join(t.unreaping_processes) +
                      " (the kernel reaps such a process's children and their CPU time is counted nowhere; "
                      "wait for child processes instead)");
  for (const CaseRecord& r : t.rechecks) {
    const std::string label = r.transform == "wall"
                                  ? fmt::format("wall-clock check call {} (rechecked)", r.index)
                                  : fmt::format("timed call {} (rechecked)", r.index);
    if (!r.output_plain_tensor)
      return decide(v, Outcome::contract_violation, Gate::timing,
                    label + ": output is a " + r.output_type + ", not a plain torch.Tensor");
    if (!r.structure_matches || !r.dtype_matches || !r.shape_matches || !r.device_matches)
      return decide(v, Outcome::contract_violation, Gate::timing,
                    label + ": output does not match the reference (" + r.detail + ")");
    if (std::string why = value_failure(r, options); !why.empty())
      return decide(v, Outcome::incorrect, Gate::timing, label + ": " + why + " (a stale or cached output?)");
    // (recheck_holds is this loop's test without its messages)
  }
  if (t.spot_unreadable)
    return decide(v, Outcome::contract_violation, Gate::timing,
                  "[spot] the samples of the timed outputs could not be read from the candidate's process: " +
                      t.spot_detail);
  if (!t.spot_failed_calls.empty())
    return decide(v, Outcome::incorrect, Gate::timing,
                  fmt::format("{} of {} timed calls gave wrong outputs at elements sampled from every timed output "
                              "(the spot check, against eager's output on the same inputs); {}",
                              t.spot_failed_calls.size(), t.spot_checked_calls, t.spot_detail));
  return false;
}

/// Launch gate (D14) on the kernel trace: decoys and library compute, per policy profile, and
/// kernels outside the call's window. Then its ATen backstop: under strict, no ATen compute op may
/// run in the call (the op watch on every timed, wall-clock and traced call, on CPU and GPU; else
/// the CPU op trace).
bool launch_gate(const Measurements& m, const JudgeOptions& options, Verdict& v) {
  if (m.launch && m.launch->traced) {
    const LaunchRecord& l = *m.launch;
    const bool strict = options.policy_profile == policy::Profile::strict,
               hybrid = options.policy_profile == policy::Profile::hybrid;
    if (strict || hybrid) {
      if (l.own_ms <= 0)
        return decide(v, Outcome::policy_rejected, Gate::launch,
                      fmt::format("[launch] none of the candidate's own kernels ran in {} traced calls "
                                  "({:.3g} ms in library/ATen kernels): the custom kernel is a decoy",
                                  l.calls, l.library_ms));
      const double compute = l.own_ms + l.library_ms;
      const double share = compute > 0 ? l.library_ms / compute : 0;
      const double limit = strict ? options.strict_library_share : options.hybrid_library_share;
      if (share > limit)
        return decide(v, Outcome::policy_rejected, Gate::launch,
                      fmt::format("[launch] {:.0f}% of the GPU compute time is in library/ATen kernels (profile {} "
                                  "allows {:.0f}%)", 100 * share, policy::to_string(options.policy_profile), 100 * limit));
      if (l.graph_launches > 0)
        return decide(v, Outcome::policy_rejected, Gate::launch,
                      fmt::format("[launch] {} CUDA graph replay(s) in the traced calls (not allowed by profile {})",
                                  l.graph_launches, policy::to_string(options.policy_profile)));
    }
    if (l.outside_window > 0)
      return decide(v, Outcome::timing_invalid, Gate::timing,
                    fmt::format("{} GPU kernel(s) ran outside the call's window (work after return or on a "
                                "stream the call did not wait for)", l.outside_window));
  }
  if (m.launch && m.launch->aten_traced && options.policy_profile == policy::Profile::strict &&
      m.launch->aten_compute_calls > 0) {
    std::string ops;
    for (const auto& o : m.launch->aten_ops)
      if (o.value("category", "") == "compute" && ops.size() < 160)
        ops += (ops.empty() ? "" : ", ") + o.value("name", std::string("?")) + " x" + std::to_string(o.value("count", 0));
    return decide(v, Outcome::policy_rejected, Gate::launch,
                  fmt::format("[op trace] the {} dispatched {} ATen compute op(s) ({}); profile strict "
                              "allows only allocation, views and copies outside your own kernel",
                              m.launch->op_watch == "on" ? "timed, wall-clock and traced calls" : "traced calls",
                              m.launch->aten_compute_calls, ops));
  }
  return false;
}

/// Gate 5, the timings' validity: CPU time within the baselines' cores, the persisting-L2 limit
/// left alone, enough finite positive timed calls whose sum fits the timed phase's wall clock, and
/// the baseline timed under the candidate's precision flags.
bool timing_validity_gate(const Measurements& m, const JudgeOptions& options, Verdict& v) {
  const TimingRecord& t = *m.candidate_timing;
  // CPU: the candidate's processes may use the cores the baselines use, no more (a forked helper
  // computing half of each matmul read 1.2x against an honest 0.835x on 2 cores).
  if (t.wall_check_cores > 0 && t.wall_check_cpu_wall_ms > 0 &&
      t.wall_check_cpu_ms > t.wall_check_cores * t.wall_check_cpu_wall_ms * 1.1 + 20.0)
    return decide(v, Outcome::timing_invalid, Gate::timing,
                  fmt::format("[cpu] the candidate's processes used {:.0f} ms of CPU time in {:.0f} ms of wall clock "
                              "during the timed wall-clock requests: more than the {} core(s) the baselines run on",
                              t.wall_check_cpu_ms, t.wall_check_cpu_wall_ms, t.wall_check_cores));
  if (t.l2_persist_violations > 0)
    return decide(v, Outcome::timing_invalid, Gate::timing,
                  fmt::format("the persisting-L2 limit was set again during {} timed call(s)", t.l2_persist_violations));
  if (static_cast<int>(t.times_ms.size()) < options.min_timed_calls)
    return decide(v, Outcome::timing_invalid, Gate::timing,
                  fmt::format("only {} timed calls (need {})", t.times_ms.size(), options.min_timed_calls));
  for (double x : t.times_ms)
    if (!std::isfinite(x) || x <= 0)
      return decide(v, Outcome::timing_invalid, Gate::timing, fmt::format("a timed call reported {} ms", x));
  const double total = std::accumulate(t.times_ms.begin(), t.times_ms.end(), 0.0);
  if (t.wall_ms > 0 && total > t.wall_ms * options.wall_clock_slack + 1.0 * t.rounds)
    return decide(v, Outcome::timing_invalid, Gate::timing,
                  fmt::format("reported times sum to {:.3f} ms but the timed phase took {:.3f} ms of wall clock",
                              total, t.wall_ms));
  if (m.eager_timing && !m.eager_timing->precision_flags.empty() && !t.precision_flags.empty() &&
      m.eager_timing->precision_flags != t.precision_flags)
    return decide(v, Outcome::timing_invalid, Gate::timing,
                  "the baseline ran under other precision flags than the candidate (harness self-test H40)");
  return false;
}

}  // namespace

Verdict judge(const Measurements& m, const JudgeOptions& options) {
  Verdict v;
  v.measurements = m;
  // The rules in order; the first that decides ends the verdict.
  if (task_failure_rule(m, v)) return v;
  if (parse_gate(m, v)) return v;
  if (link_gate(m, v)) return v;
  if (load_gate(m, v)) return v;
  if (correctness_gate(m, options, v)) return v;
  if (timed_calls_gate(m, options, v)) return v;
  if (launch_gate(m, options, v)) return v;
  if (timing_validity_gate(m, options, v)) return v;
  judge_detail::speedup_outcome(m, options, v);
  return v;
}

bool ready_to_time(const Measurements& m, const JudgeOptions& options) {
  // The gates before timing are judge's own: it sets Verdict::correct exactly where every one of
  // them passes (the end of gate 4), before the timing gate reads anything of the timing.
  return judge(m, options).correct;
}

void to_json(nlohmann::json& j, const Verdict& v) {
  auto opt = [](const std::optional<double>& x) { return x ? nlohmann::json(*x) : nlohmann::json(nullptr); };
  auto ci = [](const std::optional<Interval>& x) {
    return x ? nlohmann::json::array({x->lo, x->hi}) : nlohmann::json(nullptr);
  };
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
       {"speedup_eager_ci", ci(v.speedup_eager_ci)},
       {"speedup_compile_ci", ci(v.speedup_compile_ci)},
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
  auto ci = [&](const char* k, std::optional<Interval>& x) {
    if (auto it = j.find(k); it != j.end() && it->is_array() && it->size() == 2 && (*it)[0].is_number() &&
                             (*it)[1].is_number())
      x = Interval{(*it)[0].get<double>(), (*it)[1].get<double>()};
  };
  ci("speedup_eager_ci", v.speedup_eager_ci);
  ci("speedup_compile_ci", v.speedup_compile_ci);
  v.reward = j.value("reward", 0.0);
  v.reward_name = j.value("reward_name", "");
  v.messages = j.value("messages", std::vector<std::string>{});
  if (j.contains("policy_findings")) v.policy_findings = j["policy_findings"].get<std::vector<nlohmann::json>>();
  v.provenance = j.value("provenance", nlohmann::json::object());
  if (j.contains("measurements")) j["measurements"].get_to(v.measurements);
}

}  // namespace kgym
