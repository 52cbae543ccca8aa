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

/// One baseline against the candidate: the timers' speedup (median over median) and its interval
/// over the interleaved rounds; on the CPU, when both sides went through the same wall check
/// (paired differences between the same calibrations), the wall check's speedup (each side's
/// median difference, never below the check's resolution: WallCheckSeries::calls_ms) and its
/// paired interval.
struct SideComparison {
  double timer_speedup = 0;
  std::optional<Interval> timer_ci;
  double wall_speedup = 0;  ///< 0 when not measured alike
  std::optional<Interval> wall_ci;
};

SideComparison compare_side(const TimingRecord& cand, const TimingRecord& base) {
  SideComparison c;
  if (cand.times_ms.empty() || base.times_ms.empty() || base.failure) return c;
  const double tc = summarize_times(cand.times_ms).median_ms, tb = summarize_times(base.times_ms).median_ms;
  if (!(tc > 0) || !(tb > 0)) return c;
  c.timer_speedup = tb / tc;
  c.timer_ci = ratio_of_medians_interval(base.times_ms, base.round_calls, cand.times_ms, cand.round_calls);
  const auto& dc = cand.wall_check_paired_ms;
  const auto& db = base.wall_check_paired_ms;
  if (cand.method == "monotonic_clock" && dc.size() >= 3 && db.size() == dc.size()) {
    // (the same calibrations, so the same resolution; the larger if they differ)
    const double res = std::max(cand.wall_check_spread_ms, base.wall_check_spread_ms);
    auto med = [](std::vector<double> x) {
      std::sort(x.begin(), x.end());
      const std::size_t h = x.size() / 2;
      return x.size() % 2 ? x[h] : 0.5 * (x[h - 1] + x[h]);
    };
    const double wc = std::max(med(dc), res), wb = std::max(med(db), res);
    if (wc > 0 && wb > 0) {
      c.wall_speedup = wb / wc;
      c.wall_ci = paired_ratio_interval(db, dc, res);
      if (!c.wall_ci) c.wall_speedup = 0;
    }
  }
  return c;
}

/// The CPU's like-for-like decision against eager: it applies when eager went through the same
/// wall check as the candidate; the candidate's timer is doubted when the timers' speedup lies
/// above the wall check's whole interval (a timer that claims more than the supervisor's clock
/// allows, measured alike for both: a shrunk or self-restoring timer, work hidden outside the
/// timed window). Capping at the check's point estimate instead read the same operator at 0.81x
/// on a loaded 2-core machine (the check is noisier than the timers at small sizes); a timer
/// patched inside the call no longer reaches the CPU window at all (timing.time_calls binds the
/// clock taken at import), so the interval's top bounds what is left of that kind.
struct LikeForLike {
  bool applies = false, doubted = false;
  double timer_speedup = 0, wall_speedup = 0;
  std::optional<Interval> wall_ci;
};

LikeForLike like_for_like_cpu(const Measurements& m, const JudgeOptions&) {
  LikeForLike l;
  if (!m.candidate_timing || !m.eager_timing || m.candidate_timing->method != "monotonic_clock") return l;
  const SideComparison c = compare_side(*m.candidate_timing, *m.eager_timing);
  if (!(c.wall_speedup > 0) || !c.wall_ci || !(c.timer_speedup > 0)) return l;
  l.applies = true;
  l.timer_speedup = c.timer_speedup;
  l.wall_speedup = c.wall_speedup;
  l.wall_ci = c.wall_ci;
  l.doubted = c.timer_speedup > c.wall_ci->hi;
  return l;
}

}  // namespace

Verdict judge(const Measurements& m, const JudgeOptions& options) {
  Verdict v;
  v.measurements = m;
  auto end = [&](Outcome o, Gate g, std::string msg) -> Verdict& {
    v.outcome = o;
    v.gate = g;
    // A run-time policy rejection (the launch gate on the kernel trace, or the CPU op trace) is
    // listed in policy_findings too, so that it says why every policy_rejected verdict was rejected
    // (fresh-user run, session 17: it was empty for these). Rule id from the message's tag.
    if (o == Outcome::policy_rejected && g == Gate::launch)
      v.policy_findings.push_back({{"rule_id", msg.rfind("[op trace]", 0) == 0 ? "cpu_op_trace" : "launch_gate"},
                                   {"severity", "reject"}, {"message", msg}, {"line", 0}, {"column", 0},
                                   {"snippet", ""}, {"gate", "launch"}});
    v.messages.insert(v.messages.begin(), std::move(msg));
    return v;
  };

  if (m.task_failure) return end(Outcome::task_error, Gate::none, "not judged (the candidate is not at fault): " + *m.task_failure);

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
  // Gate 2's link check: what the built extensions import, by the names the loader binds (the
  // source scan reads names as written; an asm label or a macro respells them).
  if (m.link) {
    std::vector<std::string> rejects;
    for (const LinkFinding& f : m.link->findings) {
      if (f.severity == "reject") rejects.push_back("[" + f.rule_id + "] " + f.message);
      else v.messages.push_back("[link] [" + f.rule_id + "] " + f.message);
    }
    if (!rejects.empty()) return end(Outcome::policy_rejected, Gate::build, "[link] " + join(rejects));
  }
  if (load.ok && !load.tampered.empty())
    return end(Outcome::contract_violation, Gate::build,
               "[tamper] importing the candidate replaced harness functions or changed precision flags: " +
                   join(load.tampered));
  if (!load.ok) {
    if (m.crash) return end(Outcome::runtime_error, Gate::build, "candidate crashed while loading: " + failure_text(*m.crash));
    if (!load.failure) return end(Outcome::build_failed, Gate::build, "candidate did not load (no reason reported)");
    const Failure& f = *load.failure;
    if (f.stage == "init")
      return end(Outcome::runtime_error, Gate::build, "ModelNew(*get_init_inputs()) raised " + failure_text(f));
    // The compiler's first error line first: a build error's message starts with the whole ninja
    // command line, which cut the one line that says what to fix off the progress line
    // (fresh-user run, session 17). Its line numbers are those of the generated main.cpp/cuda.cu.
    for (const std::string* text : {&f.message, &f.traceback}) {
      std::size_t at = text->find(": error: ");
      if (at == std::string::npos) at = text->find(": error ");  // nvcc: file(12): error
      if (at == std::string::npos) continue;
      const std::size_t start = text->rfind('\n', at) == std::string::npos ? 0 : text->rfind('\n', at) + 1;
      const std::string line = text->substr(start, std::min<std::size_t>(text->find('\n', at) - start, 300));
      const std::size_t slash = line.rfind('/', line.find(':'));
      return end(Outcome::build_failed, Gate::build,
                 "build failed: " + (slash == std::string::npos ? line : line.substr(slash + 1)) +
                     " (lines of the generated source; the whole log is in measurements.load.failure)");
    }
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
    if (!c.reference_finite && c.transform != "nominal" && !c.failure && c.output_plain_tensor && c.compared) {
      v.messages.push_back(fmt::format("case {} ({}) skipped: the reference output is not finite under "
                                       "this value transform", c.index, c.transform));
      continue;
    }
    ++v.cases_total;
    Outcome o = Outcome::passed;
    std::string msg;
    const std::string label = c.shape_variant.empty()
                                  ? fmt::format("case {} ({})", c.index, c.transform)
                                  : fmt::format("case {} ({}, {} sizes)", c.index, c.transform, c.shape_variant);
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
    } else if (!c.compared) {
      o = Outcome::runtime_error;
      msg = label + ": no output of the candidate was compared with the reference";
    } else if (!c.inputs_unchanged) {
      o = Outcome::contract_violation;
      msg = label + ": the candidate modified its inputs";
    } else if (c.output_aliases_input) {
      o = Outcome::contract_violation;
      msg = label + ": the output shares storage with an input";
    } else if (!c.tampered.empty()) {
      o = Outcome::contract_violation;
      msg = label + ": [tamper] the call replaced harness functions or changed precision flags: " + join(c.tampered);
    } else if (c.threads_leaked) {
      o = Outcome::contract_violation;
      msg = label + ": " + (c.thread_detail.empty() ? "a thread started by the call was still running" : c.thread_detail);
    } else if (!c.output_stable) {
      o = Outcome::contract_violation;
      msg = label + ": the output changed after the call returned (work still running)";
    } else {
      any_compared = true;
      max_abs = std::max(max_abs, c.max_abs_error);
      if (std::string why = value_failure(c, options); !why.empty()) {
        o = Outcome::incorrect;
        msg = label + ": " + why;
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
  if (!m.audit.trivial_passing.empty())
    v.messages.push_back("task audit: trivial answer(s) " + join(m.audit.trivial_passing) +
                         " pass the regular cases; added cases " + join(m.audit.strengthened_with) +
                         (m.audit.still_passing.empty() ? std::string()
                                                         : "; still passing: " + join(m.audit.still_passing) + " (weak task)"));

  // Gate 5: timing.
  if (m.timed_out_stage && *m.timed_out_stage == "timing")
    return end(Outcome::timeout, Gate::timing, "the timing phase exceeded its time limit");
  if (m.crash) return end(Outcome::runtime_error, Gate::timing, "candidate died while timed: " + failure_text(*m.crash));
  if (!m.candidate_timing) return end(Outcome::passed, Gate::correctness, "correct (timing not requested)");
  const TimingRecord& t = *m.candidate_timing;
  if (t.failure) return end(Outcome::runtime_error, Gate::timing, "candidate raised while timed: " + failure_text(*t.failure));
  if (!t.tampered.empty())
    return end(Outcome::contract_violation, Gate::timing,
               "[tamper] a timed call replaced harness functions, changed precision flags or broke the call "
               "contract: " + join(t.tampered));
  if (t.threads_leaked > 0)
    return end(Outcome::contract_violation, Gate::timing,
               fmt::format("{} timed call(s) left a thread running: {}", t.threads_leaked, t.thread_detail));
  if (!t.foreign_gpu_processes.empty())
    return end(Outcome::contract_violation, Gate::timing,
               "[process] a process of the candidate other than its worker held the GPU: " +
                   join(t.foreign_gpu_processes) +
                   " (kgym traces and times one CUDA context per candidate, its worker's: its kernels "
                   "must run there, not in a child process)");
  if (!t.unreaping_processes.empty())
    return end(Outcome::contract_violation, Gate::timing,
               "[reap] a process of the candidate ignored SIGCHLD while its CPU time was measured: " +
                   join(t.unreaping_processes) +
                   " (the kernel reaps such a process's children and their CPU time is counted nowhere; "
                   "wait for child processes instead)");
  for (const CaseRecord& r : t.rechecks) {
    const std::string label = r.transform == "wall"
                                  ? fmt::format("wall-clock check call {} (rechecked)", r.index)
                                  : fmt::format("timed call {} (rechecked)", r.index);
    if (!r.output_plain_tensor)
      return end(Outcome::contract_violation, Gate::timing, label + ": output is a " + r.output_type + ", not a plain torch.Tensor");
    if (!r.structure_matches || !r.dtype_matches || !r.shape_matches || !r.device_matches)
      return end(Outcome::contract_violation, Gate::timing, label + ": output does not match the reference (" + r.detail + ")");
    if (std::string why = value_failure(r, options); !why.empty())
      return end(Outcome::incorrect, Gate::timing, label + ": " + why + " (a stale or cached output?)");
    // (recheck_holds is this loop's test without its messages)
  }
  if (t.spot_unreadable)
    return end(Outcome::contract_violation, Gate::timing,
               "[spot] the samples of the timed outputs could not be read from the candidate's process: " + t.spot_detail);
  if (!t.spot_failed_calls.empty())
    return end(Outcome::incorrect, Gate::timing,
               fmt::format("{} of {} timed calls gave wrong outputs at elements sampled from every timed output "
                           "(the spot check, against eager's output on the same inputs); {}",
                           t.spot_failed_calls.size(), t.spot_checked_calls, t.spot_detail));
  // Launch gate (D14) on the kernel trace: decoys and library compute, per policy profile.
  if (m.launch && m.launch->traced) {
    const LaunchRecord& l = *m.launch;
    const bool strict = options.policy_profile == policy::Profile::strict,
               hybrid = options.policy_profile == policy::Profile::hybrid;
    if (strict || hybrid) {
      if (l.own_ms <= 0)
        return end(Outcome::policy_rejected, Gate::launch,
                   fmt::format("[launch] none of the candidate's own kernels ran in {} traced calls "
                               "({:.3g} ms in library/ATen kernels): the custom kernel is a decoy", l.calls, l.library_ms));
      const double compute = l.own_ms + l.library_ms;
      const double share = compute > 0 ? l.library_ms / compute : 0;
      const double limit = strict ? options.strict_library_share : options.hybrid_library_share;
      if (share > limit)
        return end(Outcome::policy_rejected, Gate::launch,
                   fmt::format("[launch] {:.0f}% of the GPU compute time is in library/ATen kernels (profile {} allows {:.0f}%)",
                               100 * share, policy::to_string(options.policy_profile), 100 * limit));
      if (l.graph_launches > 0)
        return end(Outcome::policy_rejected, Gate::launch,
                   fmt::format("[launch] {} CUDA graph replay(s) in the traced calls (not allowed by profile {})",
                               l.graph_launches, policy::to_string(options.policy_profile)));
    }
    if (l.outside_window > 0)
      return end(Outcome::timing_invalid, Gate::timing,
                 fmt::format("{} GPU kernel(s) ran outside the call's window (work after return or on a "
                             "stream the call did not wait for)", l.outside_window));
  }
  // The ATen backstop of the launch gate: under strict, no ATen compute op may run in the call
  // (the op watch on every timed, wall-clock and traced call, on CPU and GPU; else the CPU op trace).
  if (m.launch && m.launch->aten_traced && options.policy_profile == policy::Profile::strict && m.launch->aten_compute_calls > 0) {
    std::string ops;
    for (const auto& o : m.launch->aten_ops)
      if (o.value("category", "") == "compute" && ops.size() < 160)
        ops += (ops.empty() ? "" : ", ") + o.value("name", std::string("?")) + " x" + std::to_string(o.value("count", 0));
    return end(Outcome::policy_rejected, Gate::launch,
               fmt::format("[op trace] the {} dispatched {} ATen compute op(s) ({}); profile strict "
                           "allows only allocation, views and copies outside your own kernel",
                           m.launch->op_watch == "on" ? "timed, wall-clock and traced calls" : "traced calls",
                           m.launch->aten_compute_calls, ops));
  }
  // CPU: the candidate's processes may use the cores the baselines use, no more (a forked helper
  // computing half of each matmul: 1.2x against an honest 0.835x on 2 cores, session 6).
  if (t.wall_check_cores > 0 && t.wall_check_cpu_wall_ms > 0 &&
      t.wall_check_cpu_ms > t.wall_check_cores * t.wall_check_cpu_wall_ms * 1.1 + 20.0)
    return end(Outcome::timing_invalid, Gate::timing,
               fmt::format("[cpu] the candidate's processes used {:.0f} ms of CPU time in {:.0f} ms of wall clock "
                           "during the timed wall-clock requests: more than the {} core(s) the baselines run on",
                           t.wall_check_cpu_ms, t.wall_check_cpu_wall_ms, t.wall_check_cores));
  if (t.l2_persist_violations > 0)
    return end(Outcome::timing_invalid, Gate::timing,
               fmt::format("the persisting-L2 limit was set again during {} timed call(s)", t.l2_persist_violations));
  if (static_cast<int>(t.times_ms.size()) < options.min_timed_calls)
    return end(Outcome::timing_invalid, Gate::timing,
               fmt::format("only {} timed calls (need {})", t.times_ms.size(), options.min_timed_calls));
  for (double x : t.times_ms)
    if (!std::isfinite(x) || x <= 0)
      return end(Outcome::timing_invalid, Gate::timing, fmt::format("a timed call reported {} ms", x));
  const double total = std::accumulate(t.times_ms.begin(), t.times_ms.end(), 0.0);
  if (t.wall_ms > 0 && total > t.wall_ms * options.wall_clock_slack + 1.0 * t.rounds)
    return end(Outcome::timing_invalid, Gate::timing,
               fmt::format("reported times sum to {:.3f} ms but the timed phase took {:.3f} ms of wall clock",
                           total, t.wall_ms));
  if (m.eager_timing && !m.eager_timing->precision_flags.empty() && !t.precision_flags.empty() &&
      m.eager_timing->precision_flags != t.precision_flags)
    return end(Outcome::timing_invalid, Gate::timing,
               "the baseline ran under other precision flags than the candidate (harness self-test H40)");
  const TimeStats cand = summarize_times(t.times_ms);
  // Window overhead (docs/timing.md): the device-wide sync inside every timing window adds a
  // fixed host round trip that plain event timing does not have. Both workers measure it with
  // empty windows; the smaller of the two medians is subtracted from every median (candidate and
  // baselines alike): a candidate can only lower the subtraction by reporting less, never raise
  // it. A net time is never below min_net_ms nor below net_floor_fraction of its raw window:
  // below that the window cannot resolve the kernel, and noise in the subtraction must not turn
  // into a speedup.
  double overhead = t.method == "cuda_events" && m.eager_timing && !m.eager_timing->failure
                        ? std::max(0.0, m.eager_timing->window_overhead_ms)
                        : 0.0;
  if (overhead > 0 && t.window_overhead_ms > 0) overhead = std::min(overhead, t.window_overhead_ms);
  auto net_of = [&](double raw_ms, double subtract) {
    if (subtract <= 0) return raw_ms;
    const double floor_ms = std::min(raw_ms, std::max(options.min_net_ms, options.net_floor_fraction * raw_ms));
    return std::max(raw_ms - subtract, floor_ms);
  };
  auto net = [&](double raw_ms) { return net_of(raw_ms, overhead); };
  // A baseline's own windows hold its own process's overhead, which the reference measured (the
  // candidate's processes stopped): that, when larger, is what its medians lose. The same
  // subtraction for both had left eager 0.0128 ms of its window in a 0.025 ms median (the
  // reference's overhead 0.0248 ms, the candidate's 0.012 ms): eager's very matmul read 2.1x by
  // the event times (H200, session 16). It only ever lowers a speedup.
  auto net_baseline = [&](const TimingRecord& b, double raw_ms) {
    return net_of(raw_ms, overhead > 0 ? std::max(overhead, b.window_overhead_ms) : 0.0);
  };
  // The candidate's event or clock times come from its own process, where a self-restoring
  // patch of the timer can shrink them (red team, 2026-11-30: 13350x). The supervisor's wall
  // clock of the wall-check calls cannot be patched from there: the time taken is never below
  // that per-call wall clock / wall_floor_factor (docs/timing.md, "Wall-clock floor"). On the
  // GPU those calls run back to back (one sync at the end), so the floor is about max(host time,
  // GPU time) of a call: a host-bound call is measured as one, and GPU work the event window
  // missed (a side stream that ran under the launch cover) counts. The baselines get the same
  // floor from the reference worker's own back-to-back calls.
  const bool gpu = t.method == "cuda_events";
  auto floor_factor = [&](const TimingRecord& r) {
    return r.method == "cuda_events" ? options.wall_floor_factor : options.wall_floor_factor_cpu;
  };
  auto wall_floor = [&](const TimingRecord& r) {
    if (r.wall_check_calls <= 0 || r.wall_check_ms <= 0) return 0.0;
    return r.wall_check_ms / r.wall_check_calls / floor_factor(r);
  };
  // CPU: a timer far below the wall check is not believed (the timer and the check measure the
  // same synchronous call there); the runtime then rests on the check alone, so it takes the
  // check's pessimistic figure, not its median, whose downward noise was a gain for a lying
  // timer (session 8: a self-restoring timer patch at 1.9x against its true ~1x). An honest
  // candidate that lands here loses some speed, never its verdict.
  // CPU, like for like (issue 33): when eager went through the same wall check as the candidate
  // (its requests between the same calibrations, wall_check_paired_ms on both sides), the
  // one-sided floor and pessimistic figure below give way to a comparison of the same
  // measurements: the timers' speedup stands unless the wall check's own speedup interval lies
  // wholly below it (like_for_like_cpu).
  const LikeForLike lfl = like_for_like_cpu(m, options);
  double cand_floor = lfl.applies ? 0.0 : wall_floor(t);
  const bool timer_doubted = !lfl.applies && !gpu && t.wall_check_calls > 0 && t.wall_check_upper_ms > 0 &&
                             cand_floor > cand.median_ms * options.timer_doubt_factor_cpu;
  if (timer_doubted)
    cand_floor = std::max(cand_floor, t.wall_check_upper_ms / t.wall_check_calls / options.wall_floor_factor_cpu);
  double cand_ms = std::max(net(cand.median_ms), cand_floor);
  // (the candidate's time on eager's basis when its timer is not believed: eager's timer over the
  // wall check's speedup)
  // (capped at the top of the wall check's interval: a timer that claims more gains nothing
  // beyond what the supervisor's clock allows, measured alike; an honest timer that lands above
  // the interval by noise loses only that excess)
  if (lfl.applies && lfl.doubted && m.eager_timing && lfl.wall_ci->hi > 0)
    cand_ms = summarize_times(m.eager_timing->times_ms).median_ms / lfl.wall_ci->hi;
  if (t.wall_check_calls > 0 && !gpu) {
    // CPU: also a cross-check (the per-call wall clock there is synchronised and holds only the
    // Python loop besides the call): a gross gap is a timer that lies.
    const double per_call = t.wall_check_ms / t.wall_check_calls;
    if (cand.median_ms * options.wall_check_factor_cpu + options.wall_check_slack_ms_cpu < per_call)
      return end(Outcome::timing_invalid, Gate::timing,
                 fmt::format("the timer says {:.4g} ms per call, but {} synchronised calls took {:.4g} ms each "
                             "{}", cand.median_ms, t.wall_check_calls, per_call,
                             t.wall_check_clock == "busy" ? "on the supervisor's clock (time waiting for a CPU left out)"
                                                         : "on the supervisor's wall clock"));
  }
  if (m.roofline && m.roofline->applied && m.roofline->floor_ms > 0 &&
      cand_ms < m.roofline->floor_ms / options.roofline_safety)
    return end(Outcome::timing_invalid, Gate::timing,
               fmt::format("{:.4g} ms is below the task's roofline floor {:.4g} ms ({} bytes at {:.0f} GB/s, "
                           "{:.3g} FLOPs at {:.0f} TFLOP/s; safety x{:g})", cand_ms, m.roofline->floor_ms,
                           m.roofline->bytes, m.roofline->bandwidth_gbps, m.roofline->flops,
                           m.roofline->peak_tflops, options.roofline_safety));
  v.runtime_ms = cand_ms;
  v.runtime_spread = cand_ms > 0 ? cand.iqr_ms / cand_ms : cand.spread;
  std::string headline = fmt::format("correct on {} cases; {:.4g} ms", v.cases_total, cand_ms);
  // GPU, one basis for both sides: when the candidate's runtime is its wall-clock floor, a
  // baseline whose floor was measured is taken by its floor too (both the supervisor's per-call
  // wall clock of back-to-back calls over the same factor), not by the larger of its floor and
  // events. Each side taking its larger let the factor's 10% and the events' noise go to the
  // candidate: rt9_tick_hide_mm (timed calls that do nothing, the matmul done outside the
  // window) passed at 1.11x its eager operator (H200, session 14). A baseline's floor is never
  // above the larger, so this only ever lowers a speedup. A candidate whose events stand keeps
  // each side's larger (docs/timing.md says why). Taken by its floor, a baseline is never below
  // its net event time over the same factor: back-to-back calls on one stream cannot take less
  // than their GPU time, so a floor below it is the floor's noise (eager's own loop read 0.0003
  // ms per call for a 0.012 ms matmul and gave an identical candidate 0.007x: H200, session 16),
  // and the candidate's side is never below its events either.
  // The speedups' intervals, and what they say (docs/timing.md, "Speedup and its interval").
  auto interval = [&](const std::optional<TimingRecord>& b, const std::optional<double>& speedup,
                      std::optional<Interval>& ci, const char* name) {
    if (!b || !speedup) return;
    const SideComparison c = compare_side(t, *b);
    if (!c.timer_ci || !(c.timer_speedup > 0)) return;
    // The timers' interval, moved onto the reported speedup (GPU: net times and floors; CPU with
    // a doubted timer: the wall basis), then, on the CPU, never above what the wall check
    // measured for both sides alike: its lower bound lowers the interval's, its upper bound caps it.
    const double f = *speedup / c.timer_speedup;
    Interval out{c.timer_ci->lo * f, c.timer_ci->hi * f};
    if (!gpu && c.wall_ci) {
      // the hull of the two: both estimate the same ratio, and each under-covers when the
      // machine's load drifts (2 rounds, 6 request pairs); the lower end decides the noise gate
      // and fast_p, so a claim must clear 1.0 on both clocks
      out.lo = std::min(out.lo, c.wall_ci->lo);
      out.hi = std::max(out.hi, c.wall_ci->hi);
    }
    out.lo = std::min(out.lo, *speedup);
    out.hi = std::max(out.hi, *speedup);
    ci = out;
    if (out.holds(1.0))
      v.messages.push_back(fmt::format("no measurable change vs {}: its speedup's 95% interval [{:.3g}, {:.3g}] holds 1.0",
                                       name, out.lo, out.hi));
  };
  const bool cand_by_floor = gpu && cand_floor > 0 && cand_floor >= net(cand.median_ms);
  auto baseline = [&](const std::optional<TimingRecord>& b, std::optional<double>& ms,
                      std::optional<double>& speedup, std::optional<Interval>& ci, const char* name) {
    if (!b) return;
    if (b->failure || b->times_ms.empty()) {
      v.messages.push_back(std::string(name) + " baseline unavailable" +
                           (b->failure ? ": " + failure_text(*b->failure) : ""));
      return;
    }
    // The baselines' floor is for a host-bound call on the GPU, where event times miss host
    // time; on the CPU the reference's synchronous timer is trusted as it is, and its noisy
    // wall-clock difference only inflated the baseline (an eager ReLU at 1.28 ms against 0.15 to
    // 0.42 ms in other runs: 4.4x for a candidate at its true speed, session 7).
    const double b_floor = b->method == "cuda_events" ? wall_floor(*b) : 0.0;
    const double b_events = net_baseline(*b, summarize_times(b->times_ms).median_ms);
    ms = std::max(b_events, b_floor);
    const double factor = floor_factor(*b);
    const double b_by_floor = std::max(b_floor, factor > 0 ? b_events / factor : b_events);
    if (cand_by_floor && b_floor > 0 && b_by_floor < *ms) {
      v.messages.push_back(fmt::format("{} taken by its wall-clock floor too ({:.4g} ms, its event time {:.4g} ms): "
                                       "the candidate's runtime is its floor, so both sides are back-to-back calls "
                                       "on the supervisor's clock", name, b_by_floor, *ms));
      ms = b_by_floor;
    }
    speedup = *ms / cand_ms;
    // The floors never raise a speedup above the event times' (both sides' net medians): at a few
    // microseconds per call every floor is the difference of requests that vary by 30% (input
    // sets of 0.1 ms each on the H200), and eager's very matmul read 0.52x to 2.41x in one run
    // (session 16, bench/integrity.md), the upper tail whenever eager's floor came out high and
    // set eager's time while the candidate's events stood. A floor exists to catch a candidate's
    // events that are too low, which only ever lowers this bound's rival. What is lost: a
    // candidate whose device time equals eager's but whose host time is lower is credited with
    // its device time only.
    const double cand_events = net(cand.median_ms);
    if (gpu && cand_events > 0 && b_events > 0 && b_events / cand_events < *speedup) {
      v.messages.push_back(fmt::format("speedup vs {} capped at the event times' {:.3g}x (the wall-clock floors gave "
                                       "{:.3g}x; a floor may lower a speedup, never raise it)",
                                       name, b_events / cand_events, *speedup));
      speedup = b_events / cand_events;
      ms = *speedup * cand_ms;  // the baseline's time on the candidate's basis: ref_runtime_ms / runtime_ms
    }
    interval(b, speedup, ci, name);
    // (an interval holding 1.0 says so in the headline too: a newcomer read "0.722x" as a slowdown)
    headline += ci ? fmt::format(", {:.3g}x [{:.3g}, {:.3g}] vs {}{}", *speedup, ci->lo, ci->hi, name,
                                 ci->holds(1.0) ? " (no measurable change)" : "")
                   : fmt::format(", {:.3g}x vs {}", *speedup, name);
  };
  baseline(m.eager_timing, v.ref_runtime_ms, v.speedup_eager, v.speedup_eager_ci, "eager");
  baseline(m.compile_timing, v.compile_runtime_ms, v.speedup_compile, v.speedup_compile_ci, "torch.compile");
  if (lfl.applies && lfl.doubted)
    v.messages.push_back(fmt::format(
        "speedup capped by the wall check, measured alike for the candidate and eager: the timers' speedup {:.3g}x "
        "lies above the wall check's 95% interval [{:.3g}, {:.3g}] (its point {:.3g}x), so the candidate's timer is "
        "not believed beyond the interval's top", lfl.timer_speedup, lfl.wall_ci->lo, lfl.wall_ci->hi, lfl.wall_speedup));
  if (overhead > 0) headline += fmt::format(" (window overhead {:.3g} ms subtracted)", overhead);
  if (timer_doubted)
    v.messages.push_back(fmt::format(
        "runtime set by the wall check's pessimistic figure: the timer says {:.4g} ms per call, more than "
        "{:g}x below the check's {:.4g} ms, so it is not believed; the largest paired difference (at least "
        "twice the check's resolution) is {:.4g} ms per call", cand.median_ms, options.timer_doubt_factor_cpu,
        t.wall_check_ms / t.wall_check_calls, t.wall_check_upper_ms / t.wall_check_calls));
  else if (cand_floor > 0 && cand_floor >= net(cand.median_ms))
    v.messages.push_back(fmt::format(
        "runtime set by the wall-clock floor: {} {} calls took {:.4g} ms each on the supervisor's {}, "
        "more than the {} ({:.4g} ms){}", t.wall_check_calls, gpu ? "back-to-back" : "synchronised",
        t.wall_check_ms / t.wall_check_calls, t.wall_check_clock == "busy" ? "busy clock" : "clock",
        gpu ? "event times" : "timer", net(cand.median_ms),
        gpu ? ": the call is host-bound (launch and Python time above its GPU time), or GPU work ran "
              "outside its timing window" : ""));
  return end(Outcome::passed, Gate::timing, headline);
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
