#pragma once
// Reward functions: pure functions of a verdict, selected by name (`--reward`).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kgym/verdict.hpp"

namespace kgym {

/// The noise gate (docs/timing.md, "Speedup and its interval"): the speedup over eager a reward
/// credits. With `noise_gate`, 1.0 when the verdict's 95% interval (speedup_eager_ci) holds 1.0
/// (no measurable change: neither a gain nor a loss is credited); otherwise, and without an
/// interval, speedup_eager as it is. nullopt when the verdict has no speedup.
std::optional<double> gated_speedup(const Verdict& v, bool noise_gate);

/// `kevin`: 0.3 * correct + speedup_eager * correct (Kevin, arXiv 2507.11948). A verdict that is
/// correct but timing_invalid gets 0.3 only (no speed credit for an untrusted time); one whose
/// outcome is neither passed nor timing_invalid gets 0, even with correct values (a candidate the
/// launch gate or the op trace rejected after its cases).
/// `noise_gate` (default off, `kevin:noise_gate=on`) credits gated_speedup instead.
double kevin_reward(const Verdict& v, bool noise_gate = false);

/// `log_speed`: 0 unless the candidate built and kept the contract. Then the fraction of correct
/// cases, plus (only when every gate passed) a speed term log(s/0.75)/log(4/0.75) clamped to
/// [0, 1] for speedup s over eager; the speed term is halved when the candidate's relative spread
/// exceeds 0.2 (unstable timing). Range [0, 2]. `noise_gate` (default on; `log_speed:noise_gate=off`
/// turns it off): the speed term of gated_speedup, so an interval holding 1.0 reads as 1.0x.
double log_speed_reward(const Verdict& v, bool noise_gate = true);

/// The reward named `name` ("kevin", "log_speed"), optionally with its noise gate set:
/// "log_speed:noise_gate=off", "kevin:noise_gate=on". Throws Error(usage) for an unknown name or
/// option, listing the known ones.
double compute_reward(std::string_view name, const Verdict& v);

/// Names accepted by compute_reward.
std::vector<std::string> reward_names();

}  // namespace kgym
