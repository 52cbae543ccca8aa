// The `kevin` reward (reward.hpp).
#include "kgym/reward.hpp"

namespace kgym {

double kevin_reward(const Verdict& v, bool noise_gate) {
  if (!v.correct) return 0.0;
  // Correct values under a verdict that rejects the candidate (the launch gate's library share or
  // op trace, a tamper found after the cases): no credit.
  if (v.outcome != Outcome::passed && v.outcome != Outcome::timing_invalid) return 0.0;
  // Correct but untrusted time (timing_invalid) or no timing at all: correctness credit only.
  if (v.outcome != Outcome::passed || !v.speedup_eager) return 0.3;
  return 0.3 + *gated_speedup(v, noise_gate);
}

}  // namespace kgym
