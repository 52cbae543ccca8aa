#pragma once
// Reward functions: pure functions of a verdict, selected by name (`--reward`).

#include <string>
#include <string_view>
#include <vector>

#include "kgym/verdict.hpp"

namespace kgym {

/// `kevin`: 0.3 * correct + speedup_eager * correct (Kevin, arXiv 2507.11948). A verdict that is
/// correct but timing_invalid gets 0.3 only (no speed credit for an untrusted time); one whose
/// outcome is neither passed nor timing_invalid gets 0, even with correct values (a candidate the
/// launch gate or the op trace rejected after its cases).
double kevin_reward(const Verdict& v);

/// `log_speed`: 0 unless the candidate built and kept the contract. Then the fraction of correct
/// cases, plus (only when every gate passed) a speed term log(s/0.75)/log(4/0.75) clamped to
/// [0, 1] for speedup s over eager; the speed term is halved when the candidate's relative spread
/// exceeds 0.2 (unstable timing). Range [0, 2].
double log_speed_reward(const Verdict& v);

/// The reward named `name` ("kevin", "log_speed"). Throws Error(usage) for an unknown name,
/// listing the known ones.
double compute_reward(std::string_view name, const Verdict& v);

/// Names accepted by compute_reward.
std::vector<std::string> reward_names();

}  // namespace kgym
