#pragma once
// Episode-level credit: the `stepped` and `roofline` reward functions, returns over the turns of
// an episode (discounted sum, discounted max, r1 + 0.4 r2) and group-relative advantages (GRPO,
// Dr. GRPO) over a group of episodes on the same task. All pure functions.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kgym/verdict.hpp"

namespace kgym {

/// Options of the `stepped` reward.
struct SteppedOptions {
  /// A speedup within this relative band around 1 counts as "not faster": faster needs
  /// speedup_eager > 1 + noise_band.
  double noise_band = 0.03;
  /// When true, a built candidate that failed correctness earns a share of the `incorrect` step
  /// proportional to its passed cases (partial credit for near misses).
  bool partial_credit = false;
};

/// `stepped`: a reward by steps (../shared/ARCHITECTURE.md §5), range [0, 1]:
///   0.0  nothing built: no_candidate, policy_rejected, build_failed, task_error;
///   0.25 built but not correct: runtime_error, timeout, incorrect, contract_violation
///        (with partial_credit: 0.25 * cases_passed / cases_total, at least 0.1);
///   0.5  correct but not faster than eager (or timing_invalid: no trusted time);
///   1.0  correct and faster than eager by more than the noise band.
double stepped_reward(const Verdict& v, const SteppedOptions& options = {});

/// `roofline`: the fraction of the speed-of-light gap closed, for a passed verdict:
///   (ref_ms - t_ms) / (ref_ms - floor_ms), clamped to [0, 1],
/// where ref_ms is the eager reference median, t_ms the candidate median and floor_ms the task's
/// roofline floor (max(bytes / bandwidth, FLOPs / peak), in ms, from a cost model). 0 for any
/// verdict that did not pass. When the reference is already at or below the floor, 1 if the
/// candidate is no slower than the reference, else 0. Throws Error(usage) when floor_ms <= 0.
double roofline_reward(const Verdict& v, double floor_ms);

/// Names the episode layer accepts: "kevin", "log_speed" (reward.hpp), "stepped", "roofline".
std::vector<std::string> episode_reward_names();

/// The reward named `name` for one verdict. `roofline_floor_ms` is required for "roofline"
/// (Error(usage) when missing). Throws Error(usage) for an unknown name, listing the known ones.
double episode_reward(std::string_view name, const Verdict& v,
                      std::optional<double> roofline_floor_ms = std::nullopt);

/// Discounted sum returns: G_t = sum_{k >= t} gamma^(k - t) r_k, one per turn (same length as
/// `rewards`). Kevin (arXiv 2507.11948) uses gamma = 0.4. Throws Error(usage) unless 0 <= gamma <= 1.
std::vector<double> discounted_sum_returns(const std::vector<double>& rewards, double gamma);

/// Discounted max returns: G_t = max_{k >= t} gamma^(k - t) r_k (Kevin's alternative, gamma 0.8):
/// a turn is credited with the best discounted reward it led to. Throws Error(usage) unless
/// 0 <= gamma <= 1.
std::vector<double> discounted_max_returns(const std::vector<double>& rewards, double gamma);

/// The two-turn return r1 + weight * r2 (weight 0.4 by default); the first element of
/// discounted_sum_returns({r1, r2}, weight).
double two_turn_return(double r1, double r2, double weight = 0.4);

/// GRPO group-relative advantages (DeepSeekMath, arXiv 2402.03300): A_i = (R_i - mean) / (std + eps)
/// over one group of returns on the same task; std is the sample standard deviation (n - 1), as
/// TRL's GRPOTrainer computes it. A group of one gets advantage 0. Throws Error(usage) on an empty
/// group or eps < 0.
std::vector<double> grpo_advantages(const std::vector<double>& returns, double eps = 1e-4);

/// Dr. GRPO advantages (Liu et al., "Understanding R1-Zero-Like Training", arXiv 2503.20783):
/// A_i = R_i - mean, without the std normalisation that biases toward easy/hard groups.
/// Throws Error(usage) on an empty group.
std::vector<double> dr_grpo_advantages(const std::vector<double>& returns);

}  // namespace kgym
