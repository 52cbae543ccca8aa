// The `stepped` and `roofline` rewards, and the reward resolver of the episode layer.
#include <algorithm>
#include <cmath>

#include "kgym/error.hpp"
#include "kgym/returns.hpp"
#include "kgym/reward.hpp"

namespace kgym {

double stepped_reward(const Verdict& v, const SteppedOptions& options) {
  switch (v.outcome) {
    case Outcome::no_candidate:
    case Outcome::policy_rejected:
    case Outcome::build_failed:
    case Outcome::task_error:
      return 0.0;
    case Outcome::runtime_error:
    case Outcome::timeout:
    case Outcome::incorrect:
    case Outcome::contract_violation:
      if (options.partial_credit && v.cases_total > 0) {
        double share = static_cast<double>(v.cases_passed) / v.cases_total;
        return std::max(0.1, 0.25 * share);
      }
      return 0.25;
    case Outcome::timing_invalid:
      return 0.5;
    case Outcome::passed:
      if (v.speedup_eager && *v.speedup_eager > 1.0 + options.noise_band) return 1.0;
      return 0.5;
  }
  return 0.0;
}

double roofline_reward(const Verdict& v, double floor_ms) {
  if (!(floor_ms > 0)) {
    throw Error(ErrorKind::usage, "roofline reward: the floor time must be > 0 ms, got " +
                                      std::to_string(floor_ms) + "; check the task's cost model");
  }
  if (v.outcome != Outcome::passed || !v.runtime_ms || !v.ref_runtime_ms) return 0.0;
  double t = *v.runtime_ms, ref = *v.ref_runtime_ms;
  if (ref <= floor_ms) return t <= ref ? 1.0 : 0.0;
  return std::clamp((ref - t) / (ref - floor_ms), 0.0, 1.0);
}

std::vector<std::string> episode_reward_names() { return {"kevin", "log_speed", "stepped", "roofline"}; }

double episode_reward(std::string_view name, const Verdict& v, std::optional<double> roofline_floor_ms) {
  if (name == "stepped") return stepped_reward(v);
  if (name == "roofline") {
    if (!roofline_floor_ms) {
      throw Error(ErrorKind::usage, "reward `roofline` needs the task's roofline floor (ms); this "
                                    "task has none: choose another reward (kevin, log_speed, stepped)");
    }
    return roofline_reward(v, *roofline_floor_ms);
  }
  if (name == "kevin" || name == "log_speed") return compute_reward(name, v);
  std::string known;
  for (const auto& n : episode_reward_names()) known += (known.empty() ? "" : ", ") + n;
  throw Error(ErrorKind::usage, "unknown reward `" + std::string(name) + "`; known: " + known);
}

}  // namespace kgym
