// The `stepped` reward (reward.hpp).
#include <algorithm>

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

}  // namespace kgym
