#pragma once
// The evaluation interface the server, episodes and taskgen's audit depend on: judge one
// candidate on one task. kgym::Engine (engine.hpp) implements it; `kgym serve` holds one engine
// per device. Tests inject a deterministic stand-in (tests/support/scripted_evaluator.hpp).

#include <string>

#include "kgym/candidate.hpp"
#include "kgym/eval_options.hpp"
#include "kgym/task.hpp"
#include "kgym/verdict.hpp"

namespace kgym {

/// Judges candidates. Implementations must be thread-safe: the scheduler calls evaluate() from
/// several worker threads at once. evaluate() blocks until the verdict is ready; it throws
/// kgym::Error only when the trusted side cannot go on (a candidate's misbehaviour is an outcome).
class Evaluator {
 public:
  virtual ~Evaluator() = default;
  virtual Verdict evaluate(const Task& task, const Candidate& candidate, const EvalOptions& options) = 0;
  /// A short description for /metadata, e.g. "engine cpu" or "scripted".
  virtual std::string describe() const = 0;
};

}  // namespace kgym
