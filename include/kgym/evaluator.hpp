#pragma once
// The evaluation interface the server and episodes depend on: judge one candidate on one task.
// `kgym serve` uses an adapter over kgym::Engine (one engine per device); tests inject the
// scripted evaluator, which is deterministic and needs no Python.

#include <memory>
#include <string>

#include "kgym/candidate.hpp"
#include "kgym/engine.hpp"
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

/// An evaluator over kgym::Engine for one device (EngineOptions::device). Starting it starts the
/// engine's workers: throws Error(worker) when Python/torch cannot be started.
std::unique_ptr<Evaluator> make_engine_evaluator(EngineOptions options);

/// A deterministic test evaluator that reads the verdict it should return from a directive line
/// in the candidate's code, and needs no Python:
///   `# kgym-script: outcome=passed speedup=2.0 cases=5/5 delay_ms=20`
/// Keys (all optional): outcome (an Outcome name, default passed), speedup (speedup over eager,
/// default 1.0; the eager reference time is 1 ms), cases (passed/total, default all of
/// options.n_cases when correct, else 0), delay_ms (sleep before answering, to occupy a worker),
/// rule (policy rule id for policy_rejected), error (failure message). Code without a directive
/// is judged build_failed with a message saying so; empty code is no_candidate. The verdict's
/// messages name the task and candidate ids so that tests can tell results apart.
std::unique_ptr<Evaluator> make_scripted_evaluator();

}  // namespace kgym
