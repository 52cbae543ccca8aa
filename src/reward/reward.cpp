// The reward registry (reward.hpp): every reward kgym computes, in one table. A new reward is its
// function (a file of this folder, declared in reward.hpp) plus one line in kRewards.
#include "kgym/reward.hpp"

#include <algorithm>

#include "kgym/error.hpp"

namespace kgym {
namespace {

double roofline_of(const Verdict& v, const RewardContext& c) {
  if (!c.roofline_floor_ms) {
    throw Error(ErrorKind::usage, "reward `roofline` needs the task's roofline floor (ms); this task has none: "
                                  "choose another reward (kevin, log_speed, stepped), or give the floor (kgym serve "
                                  "--roofline-bandwidth-gbs/--roofline-peak-tflops, options.roofline_floor_ms)");
  }
  return roofline_reward(v, *c.roofline_floor_ms);
}

// name, summary, function, needs a roofline floor
constexpr RewardSpec kRewards[] = {
    {"kevin", "0.3 x correct + speedup over eager x correct (Kevin)",
     [](const Verdict& v, const RewardContext& c) { return kevin_reward(v, c.noise_gate.value_or(false)); }, false,
     true},
    {"log_speed", "fraction of correct cases + log-scaled speedup between 0.75x and 4x, in [0, 2]",
     [](const Verdict& v, const RewardContext& c) { return log_speed_reward(v, c.noise_gate.value_or(true)); },
     false, true},
    {"stepped", "0 not built, 0.25 built but wrong, 0.5 correct, 1 correct and faster than eager",
     [](const Verdict& v, const RewardContext&) { return stepped_reward(v); }},
    {"roofline", "fraction of the gap from eager to the task's roofline floor closed, in [0, 1]", roofline_of, true},
};

}  // namespace

std::span<const RewardSpec> reward_registry() { return kRewards; }

RewardName::RewardName() : spec_(&kRewards[0]), text_(kRewards[0].name) {}

double RewardName::operator()(const Verdict& v, const RewardContext& context) const {
  if (!noise_gate_) return spec_->compute(v, context);
  RewardContext gated = context;
  gated.noise_gate = noise_gate_;
  return spec_->compute(v, gated);
}

std::optional<double> gated_speedup(const Verdict& v, bool noise_gate) {
  if (!v.speedup_eager) return std::nullopt;
  // (never above the point estimate: a slower candidate whose interval reaches 1.0 keeps its
  // value, so widening one's own interval can only lose)
  if (noise_gate && v.speedup_eager_ci && v.speedup_eager_ci->holds(1.0)) return std::min(1.0, *v.speedup_eager);
  return v.speedup_eager;
}

RewardName parse_reward(std::string_view text, std::string_view option) {
  // "name[:noise_gate=on|off]"
  std::string_view name = text;
  std::optional<bool> gate;
  if (const auto colon = text.find(':'); colon != std::string_view::npos) {
    name = text.substr(0, colon);
    const std::string_view opt = text.substr(colon + 1);
    if (opt == "noise_gate=on") gate = true;
    else if (opt == "noise_gate=off") gate = false;
    else
      throw Error(ErrorKind::usage, "unknown reward option '" + std::string(opt) + "' in '" + std::string(text) + "' (" +
                                        std::string(option) + "); known: noise_gate=on, noise_gate=off");
  }
  for (const auto& r : kRewards)
    if (r.name == name) {
      if (gate && !r.takes_noise_gate)
        throw Error(ErrorKind::usage, "reward '" + std::string(name) + "' (" + std::string(option) +
                                          ") takes no noise_gate option; kevin and log_speed do");
      return RewardName(&r, gate, std::string(text));
    }
  std::string known;
  for (const auto& r : kRewards) known += (known.empty() ? "" : ", ") + std::string(r.name);
  throw Error(ErrorKind::usage,
              "unknown reward '" + std::string(name) + "' (" + std::string(option) + "); known: " + known);
}

std::vector<std::string> reward_names() {
  std::vector<std::string> names;
  for (const auto& r : kRewards) names.emplace_back(r.name);
  return names;
}

double compute_reward(std::string_view name, const Verdict& v, const RewardContext& context) {
  return parse_reward(name)(v, context);
}

}  // namespace kgym
