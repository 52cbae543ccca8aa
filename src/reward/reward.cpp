#include "kgym/reward.hpp"

#include <algorithm>
#include <cmath>

#include "kgym/error.hpp"

namespace kgym {

double kevin_reward(const Verdict& v) {
  if (!v.correct) return 0.0;
  // Correct values under a verdict that rejects the candidate (the launch gate's library share or
  // op trace, a tamper found after the cases): no credit. A new user saw a hack rejected by the
  // CPU op trace earn 0.3 (session 17).
  if (v.outcome != Outcome::passed && v.outcome != Outcome::timing_invalid) return 0.0;
  // Correct but untrusted time (timing_invalid) or no timing at all: correctness credit only.
  if (v.outcome != Outcome::passed || !v.speedup_eager) return 0.3;
  return 0.3 + *v.speedup_eager;
}

double log_speed_reward(const Verdict& v) {
  switch (v.outcome) {
    case Outcome::passed:
    case Outcome::incorrect:
    case Outcome::timing_invalid:
      break;  // built and kept the contract
    default:
      return 0.0;
  }
  double reward = v.cases_total > 0 ? static_cast<double>(v.cases_passed) / v.cases_total : 0.0;
  if (v.outcome == Outcome::passed && v.speedup_eager && *v.speedup_eager > 0) {
    double term = std::log(*v.speedup_eager / 0.75) / std::log(4.0 / 0.75);
    term = std::clamp(term, 0.0, 1.0);
    if (v.runtime_spread && *v.runtime_spread > 0.2) term *= 0.5;
    reward += term;
  }
  return reward;
}

double compute_reward(std::string_view name, const Verdict& v) {
  if (name == "kevin") return kevin_reward(v);
  if (name == "log_speed") return log_speed_reward(v);
  std::string known;
  for (const auto& n : reward_names()) known += (known.empty() ? "" : ", ") + n;
  throw Error(ErrorKind::usage,
              "unknown reward function '" + std::string(name) + "'; known: " + known);
}

std::vector<std::string> reward_names() { return {"kevin", "log_speed"}; }

}  // namespace kgym
