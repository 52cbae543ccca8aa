#pragma once
// Rewards: pure functions of a verdict, in one registry (src/reward/registry.cpp) that `kgym
// eval`, `kgym serve`, episodes and /metadata all read. A reward is selected by name once, where
// it enters (a flag, a request option), into a RewardName; the engine and episodes compute it
// through that value. Adding a reward: its function (a file in src/reward/, declared here) and one
// line in the registry (docs/rewards.md).

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kgym/verdict.hpp"

namespace kgym {

/// What a reward may need beyond the verdict.
struct RewardContext {
  /// The task's roofline floor in ms (max(bytes / bandwidth, FLOPs / peak) from a cost model);
  /// needed by `roofline`, ignored by the others.
  std::optional<double> roofline_floor_ms;
  /// The noise gate (gated_speedup), when the reward's name set it ("log_speed:noise_gate=off");
  /// unset: the reward's own default (on for `log_speed`, off for `kevin`).
  std::optional<bool> noise_gate;
};

/// One registered reward function.
struct RewardSpec {
  std::string_view name;     ///< what --reward and options.reward take
  std::string_view summary;  ///< one line for --help, /metadata readers and docs
  double (*compute)(const Verdict&, const RewardContext&);
  bool needs_roofline_floor = false;  ///< RewardContext::roofline_floor_ms must be set (> 0)
  bool takes_noise_gate = false;      ///< accepts the ":noise_gate=on|off" option
};

/// The registry, in the order /metadata lists it.
std::span<const RewardSpec> reward_registry();

/// A reward chosen by name; only parse_reward makes one, so holding one means the name is known.
class RewardName {
 public:
  /// "kevin", the default reward.
  RewardName();
  /// The name as given, with its option if any ("log_speed:noise_gate=off"); parse_reward reads
  /// it back to the same reward.
  std::string_view name() const noexcept { return text_; }
  const RewardSpec& spec() const noexcept { return *spec_; }
  bool needs_roofline_floor() const noexcept { return spec_->needs_roofline_floor; }
  /// The reward of `v`. Throws Error(usage) when the reward needs a roofline floor that `context`
  /// lacks.
  double operator()(const Verdict& v, const RewardContext& context = {}) const;
  bool operator==(const RewardName& o) const noexcept {
    return spec_ == o.spec_ && noise_gate_ == o.noise_gate_;
  }

 private:
  RewardName(const RewardSpec* spec, std::optional<bool> noise_gate, std::string text)
      : spec_(spec), noise_gate_(noise_gate), text_(std::move(text)) {}
  friend RewardName parse_reward(std::string_view name, std::string_view option);
  const RewardSpec* spec_;
  std::optional<bool> noise_gate_;
  std::string text_;
};

/// The reward named `name`, optionally with its noise gate set ("log_speed:noise_gate=off",
/// "kevin:noise_gate=on"; only rewards with takes_noise_gate). `option` names where the name came
/// from (for the message). Throws Error(usage): "unknown reward '<name>' (<option>); known: kevin,
/// log_speed, stepped, roofline", or for an unknown or unsupported option.
RewardName parse_reward(std::string_view name, std::string_view option = "--reward");

/// The registered names, in registry order.
std::vector<std::string> reward_names();

/// parse_reward(name)(v, context): the reward named `name` for one verdict. Throws Error(usage)
/// for an unknown name (listing the known ones) or a missing roofline floor.
double compute_reward(std::string_view name, const Verdict& v, const RewardContext& context = {});

/// The noise gate (docs/timing.md, "Speedup and its interval"): the speedup over eager a reward
/// credits. With `noise_gate`, min(1.0, speedup_eager) when the verdict's 95% interval
/// (speedup_eager_ci) holds 1.0 (no measurable gain is credited; the gate never raises a
/// speedup, so a slower candidate gains nothing by widening its own interval); otherwise, and
/// without an interval, speedup_eager as it is. nullopt when the verdict has no speedup.
std::optional<double> gated_speedup(const Verdict& v, bool noise_gate);

// The registered functions (each in its own file of src/reward/).

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

}  // namespace kgym
