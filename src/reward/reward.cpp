// The reward registry (reward.hpp): every reward kgym computes, in one table. A new reward is its
// function (a file of this folder, declared in reward.hpp) plus one line in kRewards.
#include "kgym/reward.hpp"

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
     [](const Verdict& v, const RewardContext&) { return kevin_reward(v); }},
    {"log_speed", "fraction of correct cases + log-scaled speedup between 0.75x and 4x, in [0, 2]",
     [](const Verdict& v, const RewardContext&) { return log_speed_reward(v); }},
    {"stepped", "0 not built, 0.25 built but wrong, 0.5 correct, 1 correct and faster than eager",
     [](const Verdict& v, const RewardContext&) { return stepped_reward(v); }},
    {"roofline", "fraction of the gap from eager to the task's roofline floor closed, in [0, 1]", roofline_of, true},
};

}  // namespace

std::span<const RewardSpec> reward_registry() { return kRewards; }

RewardName::RewardName() : spec_(&kRewards[0]) {}

double RewardName::operator()(const Verdict& v, const RewardContext& context) const {
  return spec_->compute(v, context);
}

RewardName parse_reward(std::string_view name, std::string_view option) {
  for (const auto& r : kRewards)
    if (r.name == name) return RewardName(&r);
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
