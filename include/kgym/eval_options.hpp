#pragma once
// Per-evaluation settings: what one judgement of a candidate on a task runs and how (cases,
// timing method, time limits, reward, policy profile). Read by every Evaluator (evaluator.hpp),
// the engine first; free of the engine itself, so that code judging through the interface
// (taskgen's audit, the server) does not include it.

#include <optional>
#include <string>
#include <vector>

#include "kgym/options.hpp"
#include "kgym/reward.hpp"
#include "kgym/verdict.hpp"

namespace kgym {

/// Time limits per gate (seconds). A candidate that exceeds one is killed: outcome `timeout`.
struct Timeouts {
  double load_s = 600;    ///< parse + import + build (load_inline / Triton) + construct
  double case_s = 60;     ///< one correctness case (candidate call)
  double timing_s = 180;  ///< the candidate's whole timing phase
  double reference_s = 600;  ///< the reference's load, cases and baselines (trusted side)
};

/// Timing method options (docs/timing.md). Defaults are written here and nowhere else.
struct TimingOptions {
  int warmup = 3;              ///< untimed calls before timing
  int min_calls = 10;          ///< at least this many timed calls
  int max_calls = 100;         ///< at most this many timed calls
  double budget_ms = 2000;     ///< stop adding calls once this much time was spent (after min_calls)
  double target_spread = 0.05; ///< stop early once IQR / median is below this (after min_calls)
  bool l2_flush = true;        ///< flush >= 2x L2 before each timed call (GPU only)
  int rounds = 2;              ///< interleaved rounds: candidate, eager, compile, candidate, ... (calls split evenly)
  int rechecks_per_round = 2;  ///< timed outputs per round rechecked by the reference (a secret subset)
  /// Spot check (docs/timing.md, "Spot check"): elements of every timed output, at positions
  /// secret to the candidate code, compared with eager's output on the same inputs; 0 turns it off.
  int spot_samples = 256;
  /// Aim of the wall-clock cross-check: about this many ms of calls (5..1000 calls on the GPU,
  /// 5..100 on the CPU). 20 ms keeps its GPU time below the timed calls' own for small kernels
  /// (at 50 ms and up to 200 calls it was 3.5x the timed calls' GPU time for CUDA-L1 L1/26 on
  /// the H200) while the calibration's jitter (minimum of three requests) stays well below the
  /// 2x factor the judge allows.
  double wall_check_ms = 20;
};

/// Per-evaluation settings.
struct EvalOptions {
  int n_cases = 5;                  ///< correctness cases, each with a fresh secret seed
  /// Value transforms applied in turn to the cases' float inputs (from the seed's gym). `negate`
  /// comes second because every KernelBench v0.1 level-1 problem draws its inputs with
  /// torch.rand (all non-negative): without it a sign bug (identity for ReLU) passes 3 cases.
  std::vector<std::string> transforms = {"nominal", "negate", "scale3", "scale001", "abs"};
  std::optional<Tolerance> tolerance;  ///< override for float32 (else default_tolerance)
  double scale = 1.0;               ///< multiply the task's module-level size constants (>= 16) by this
  bool time_candidate = true;       ///< run the timing gate at all
  bool compile_baseline = false;    ///< also time torch.compile(Model)
  bool other_shape = true;          ///< one more case with the size constants changed (x0.75, odd), where the task allows
  TimingOptions timing;
  Timeouts timeouts;
  RewardName reward;                ///< the reward function (reward.hpp); default kevin
  RewardContext reward_context;     ///< what the reward needs beyond the verdict (roofline floor)
  /// Policy profile of gate 1 (policy.hpp).
  policy::Profile policy_profile = policy::Profile::strict;
  JudgeOptions judge;
};

}  // namespace kgym
