#pragma once
// A test double of the Evaluator interface (kgym/evaluator.hpp), for the server's tests and load
// tests: it needs no Python and answers at once (or after a chosen delay).

#include <memory>

#include "kgym/evaluator.hpp"

namespace kgym {

/// A deterministic test evaluator that reads the verdict it should return from a directive line
/// in the candidate's code, and needs no Python:
///   `# kgym-script: outcome=passed speedup=2.0 cases=5/5 delay_ms=20`
/// Keys (all optional): outcome (an Outcome name, default passed), speedup (speedup over eager,
/// default 1.0; the eager reference time is 1 ms), cases (passed/total, default all of
/// options.n_cases when correct, else 0), delay_ms (sleep before answering, to occupy a worker),
/// rule (policy rule id for policy_rejected), error (failure message). Code without a directive
/// is judged build_failed with a message saying so; empty code is no_candidate. The verdict's
/// messages name the task and candidate ids so that tests can tell results apart. It computes no
/// reward (the episode computes the turn's reward from the verdict).
std::unique_ptr<Evaluator> make_scripted_evaluator();

}  // namespace kgym
