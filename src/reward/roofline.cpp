// The `roofline` reward (reward.hpp).
#include <algorithm>
#include <string>

#include "kgym/error.hpp"
#include "kgym/reward.hpp"

namespace kgym {

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

}  // namespace kgym
