// The `log_speed` reward (reward.hpp).
#include <algorithm>
#include <cmath>

#include "kgym/reward.hpp"

namespace kgym {

double log_speed_reward(const Verdict& v, bool noise_gate) {
  switch (v.outcome) {
    case Outcome::passed:
    case Outcome::incorrect:
    case Outcome::timing_invalid:
      break;  // built and kept the contract
    default:
      return 0.0;
  }
  double reward = v.cases_total > 0 ? static_cast<double>(v.cases_passed) / v.cases_total : 0.0;
  if (const auto s = gated_speedup(v, noise_gate); v.outcome == Outcome::passed && s && *s > 0) {
    double term = std::log(*s / 0.75) / std::log(4.0 / 0.75);
    term = std::clamp(term, 0.0, 1.0);
    if (v.runtime_spread && *v.runtime_spread > 0.2) term *= 0.5;
    reward += term;
  }
  return reward;
}

}  // namespace kgym
