#pragma once
// Internal to the judge (verdict.cpp, speedup.cpp): the verdict's one way to be decided, and the
// timing gate's last rule, the runtime and the speedups over the baselines.

#include <string>

#include "kgym/verdict.hpp"

namespace kgym::judge_detail {

/// Decides the verdict: its outcome and gate, and the deciding message first among the messages.
/// A run-time policy rejection (the launch gate on the kernel trace, or the CPU op trace) is
/// listed in policy_findings too, so that every policy_rejected verdict says why it was rejected;
/// its rule id comes from the message's tag. Returns true (the verdict is decided), so that a
/// rule can `return decide(...)`.
bool decide(Verdict& v, Outcome o, Gate g, std::string msg);

/// A failure in one line: "<type>: <message>", or how the process ended.
std::string failure_text(const Failure& f);

/// Gate 5's outcome for a candidate whose timings hold (a TimingRecord, the timing gates passed):
/// its runtime, the speedups over eager and torch.compile with their intervals, and the headline
/// (passed at the timing gate), unless the runtime gate (the CPU timer's cross-check, the
/// roofline floor) decides timing_invalid first.
void speedup_outcome(const Measurements& m, const JudgeOptions& options, Verdict& v);

}  // namespace kgym::judge_detail
