#pragma once
// Episode-level credit: returns over the turns of an episode (discounted sum, discounted max,
// r1 + 0.4 r2) and group-relative advantages (GRPO, Dr. GRPO) over a group of episodes on the same
// task. All pure functions. The per-turn rewards come from the one registry (reward.hpp).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kgym/reward.hpp"  // the reward functions (one registry)

namespace kgym {

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
