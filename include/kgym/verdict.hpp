#pragma once
// The judge: turns a runner's Measurements into a Verdict (outcome, gate, speedups, messages).
// Every decision is here, in C++, and unit-tested on recorded measurements.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgym/interval.hpp"
#include "kgym/measurement.hpp"
#include "kgym/options.hpp"
#include "kgym/outcome.hpp"

namespace kgym {

/// Tolerance for one dtype: allclose semantics, |out - ref| <= atol + rtol * |ref|.
struct Tolerance {
  double atol = 1e-4;
  double rtol = 1e-4;
};

/// Default tolerances per dtype name ("float32": 1e-4/1e-4 as KernelBench now uses;
/// "float16"/"bfloat16": 1e-2/1e-2; "float64": 1e-7/1e-7). Unknown dtypes get float32's.
Tolerance default_tolerance(std::string_view dtype);

/// Options of the judge. Defaults are the documented ones (docs/timing.md).
struct JudgeOptions {
  int min_timed_calls = 5;  ///< fewer timed calls than this is timing_invalid
  /// Reported event times may exceed the supervisor's wall clock of the timed phase by at most
  /// this factor (+1 ms); more means the clock the candidate side reported cannot be true.
  double wall_clock_slack = 1.05;
  /// Policy profile (strict | hybrid | kernelbench | off) for the launch-gate decisions on the
  /// kernel trace: strict and hybrid require the candidate's own kernels to have run, no CUDA
  /// graph replay, and at most strict_library_share / hybrid_library_share of the traced GPU
  /// time in library/ATen compute kernels. kernelbench and off only record the trace.
  policy::Profile policy_profile = policy::Profile::off;
  double strict_library_share = 0.10;
  double hybrid_library_share = 1.0;
  /// Float64 cross-check (H21): a float output fails when max |out - ref64| exceeds
  /// max(precision_factor * max |ref - ref64|, precision_floor_eps * eps(dtype) * max |ref64|).
  double precision_factor = 32;
  /// (256: an honest float32 running sum over 32,768 elements is off by about 84 eps x max |ref64|
  /// where ATen's CPU cumsum, accumulating in double, is exact; red team rt35 saw it rejected at
  /// 64. A float16, bfloat16 or TF32 rounding of the output is about 2048 eps or more.)
  double precision_floor_eps = 256;
  /// Roofline (D11): the candidate's median below floor_ms / roofline_safety is timing_invalid.
  double roofline_safety = 1.5;
  /// Window overhead subtraction never takes a median below this (ms): no launched kernel
  /// finishes in less (docs/timing.md, "Window overhead").
  double min_net_ms = 0.001;
  /// ... nor below this fraction of the raw window (the timing resolution: a 3 us kernel in a
  /// 40 us window reads as 10 us, so tiny kernels' speedups shrink towards 1, never grow).
  double net_floor_fraction = 0.25;
  /// The runtime (candidate and baselines) is never below the wall clock per call of the
  /// wall-check calls divided by this (docs/timing.md, "Wall-clock floor"). GPU: back-to-back
  /// calls on fresh inputs, about max(host, GPU time) per call on warm caches, so honest
  /// GPU-bound calls stay above it by their cold-cache margin.
  double wall_floor_factor = 1.1;
  double wall_floor_factor_cpu = 1.0;  ///< on the CPU the wall clock adds only the Python loop
  /// CPU cross-check (D7): timer median * wall_check_factor_cpu + wall_check_slack_ms_cpu must be
  /// at least the supervisor's wall clock per synchronised call, else timing_invalid. The CPU
  /// clock shares the cores with everything else running (other evaluations, builds), hence the
  /// loose factor. (On the GPU the floor alone acts: host-bound honest calls run several times
  /// their event time back to back.)
  double wall_check_factor_cpu = 8.0;
  double wall_check_slack_ms_cpu = 1.0;
  /// CPU: when the wall check's per call exceeds the timer median times this, the timer is not
  /// believed and the floor is the wall check's pessimistic figure (wall_check_upper_ms). On the
  /// dev VM honest floors were at most 2.25x their timer (session 7); a self-restoring timer
  /// patch reads 0 to 0.3x its call.
  double timer_doubt_factor_cpu = 3.0;
};

/// Summary statistics of a list of times (ms).
struct TimeStats {
  double median_ms = 0, mean_ms = 0, min_ms = 0, max_ms = 0;
  double iqr_ms = 0;     ///< interquartile range
  double spread = 0;     ///< iqr / median: relative spread
  int n = 0;
};
/// Throws Error(internal) on an empty list.
TimeStats summarize_times(const std::vector<double>& times_ms);

/// Per (task, candidate): all outcomes plus measurements. Written as one JSONL line.
struct Verdict {
  std::string task_id, candidate_id;
  Outcome outcome = Outcome::runtime_error;
  Gate gate = Gate::none;                  ///< the gate that ended the verdict (timing if passed)
  bool correct = false;                    ///< all correctness cases passed (outcome may still be timing_invalid)
  int cases_passed = 0, cases_total = 0;
  std::optional<double> max_abs_error;     ///< over all compared cases
  std::optional<double> runtime_ms;        ///< candidate median
  std::optional<double> runtime_spread;    ///< candidate IQR / median
  std::optional<double> ref_runtime_ms;    ///< eager reference median
  std::optional<double> compile_runtime_ms;///< torch.compile reference median
  std::optional<double> speedup_eager;     ///< ref_runtime_ms / runtime_ms, when correct
  std::optional<double> speedup_compile;   ///< compile_runtime_ms / runtime_ms, when correct
  /// 95% confidence intervals of the speedups ([lo, hi] in JSON; docs/timing.md, "Speedup and
  /// its interval"): a two-stage bootstrap over the interleaved rounds of the ratio of medians
  /// (kgym::ratio_of_medians_interval), on the CPU the hull of that and the like-for-like wall
  /// check's interval (kgym::paired_ratio_interval). An interval holding 1.0 is no measurable change.
  std::optional<Interval> speedup_eager_ci, speedup_compile_ci;
  double reward = 0;
  std::string reward_name;
  std::vector<std::string> messages;       ///< human-readable reasons, first one is the headline
  std::vector<nlohmann::json> policy_findings;  ///< findings of the policy gate (rule ids)
  nlohmann::json provenance = nlohmann::json::object();  ///< versions, device, seeds, scale, hashes
  Measurements measurements;               ///< what the runners measured, kept for audit
};

void to_json(nlohmann::json& j, const Verdict& v);
void from_json(const nlohmann::json& j, Verdict& v);

/// Decides a verdict from a runner's measurements (gates build, correctness, timing). Pure: the
/// same inputs always give the same verdict. Ids, reward, policy findings and provenance are
/// filled by the caller (the engine).
Verdict judge(const Measurements& m, const JudgeOptions& options = {});

/// Whether a candidate whose cases ran is ready to be timed: every gate before timing (build,
/// link check, correctness over every case that ran) passes on `m`, as `judge` decides them.
/// The engine asks it once the cases ran, before the timing phase (runners measure, the judge
/// decides).
bool ready_to_time(const Measurements& m, const JudgeOptions& options = {});

/// Whether a rechecked timed output (an entry of TimingRecord::rechecks) holds as `judge` decides:
/// a plain tensor with the reference's structure, dtype, shape and device whose values pass the
/// case's value check (tolerance, float64 rule and precision floor). The engine takes the rows of
/// those that hold as the spot check's trusted rows (docs/timing.md, "Spot check").
bool recheck_holds(const CaseRecord& r, const JudgeOptions& options = {});

/// A verdict for an evaluation that ended before anything ran (no_candidate, policy_rejected).
Verdict verdict_without_run(Outcome outcome, Gate gate, std::string message);

}  // namespace kgym
