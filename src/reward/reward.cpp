#include "kgym/reward.hpp"

#include <algorithm>
#include <cmath>

#include "kgym/error.hpp"

namespace kgym {

std::optional<double> gated_speedup(const Verdict& v, bool noise_gate) {
  if (!v.speedup_eager) return std::nullopt;
  if (noise_gate && v.speedup_eager_ci && v.speedup_eager_ci->holds(1.0)) return 1.0;
  return v.speedup_eager;
}

double kevin_reward(const Verdict& v, bool noise_gate) {
  if (!v.correct) return 0.0;
  // Correct values under a verdict that rejects the candidate (the launch gate's library share or
  // op trace, a tamper found after the cases): no credit. A new user saw a hack rejected by the
  // CPU op trace earn 0.3 (session 17).
  if (v.outcome != Outcome::passed && v.outcome != Outcome::timing_invalid) return 0.0;
  // Correct but untrusted time (timing_invalid) or no timing at all: correctness credit only.
  if (v.outcome != Outcome::passed || !v.speedup_eager) return 0.3;
  return 0.3 + *gated_speedup(v, noise_gate);
}

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

double compute_reward(std::string_view spec, const Verdict& v) {
  // "name[:noise_gate=on|off]"
  std::string_view name = spec;
  std::optional<bool> gate;
  if (const auto colon = spec.find(':'); colon != std::string_view::npos) {
    name = spec.substr(0, colon);
    const std::string_view option = spec.substr(colon + 1);
    if (option == "noise_gate=on") gate = true;
    else if (option == "noise_gate=off") gate = false;
    else
      throw Error(ErrorKind::usage, "unknown reward option '" + std::string(option) + "' in '" + std::string(spec) +
                                        "'; known: noise_gate=on, noise_gate=off");
  }
  if (name == "kevin") return kevin_reward(v, gate.value_or(false));
  if (name == "log_speed") return log_speed_reward(v, gate.value_or(true));
  std::string known;
  for (const auto& n : reward_names()) known += (known.empty() ? "" : ", ") + n;
  throw Error(ErrorKind::usage,
              "unknown reward function '" + std::string(name) + "'; known: " + known);
}

std::vector<std::string> reward_names() { return {"kevin", "log_speed"}; }

}  // namespace kgym
