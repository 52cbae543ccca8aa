// The scripted evaluator: a deterministic test double that reads its verdict from the code
// (scripted_evaluator.hpp). Used by tests and load tests through build/kgym-test's
// `kgym serve --evaluator scripted`.
#include <chrono>
#include <sstream>
#include <thread>

#include "scripted_evaluator.hpp"

namespace kgym {
namespace {

Gate gate_of(Outcome o) {
  switch (o) {
    case Outcome::passed: return Gate::timing;
    case Outcome::no_candidate: return Gate::none;
    case Outcome::policy_rejected: return Gate::policy;
    case Outcome::build_failed: return Gate::build;
    case Outcome::runtime_error: return Gate::correctness;
    case Outcome::timeout: return Gate::correctness;
    case Outcome::incorrect: return Gate::correctness;
    case Outcome::contract_violation: return Gate::correctness;
    case Outcome::timing_invalid: return Gate::timing;
    case Outcome::task_error: return Gate::none;
  }
  return Gate::none;
}

class ScriptedEvaluator final : public Evaluator {
 public:
  Verdict evaluate(const Task& task, const Candidate& candidate, const EvalOptions& options) override {
    Verdict v;
    v.task_id = task.id;
    v.candidate_id = candidate.id;
    v.reward_name = options.reward.name();
    v.provenance = {{"evaluator", "scripted"}};
    const std::string& code = candidate.code;
    if (code.find_first_not_of(" \t\r\n") == std::string::npos || code == "None") {
      v.outcome = Outcome::no_candidate;
      v.messages = {"no candidate code"};
      return v;
    }
    const std::string tag = "# kgym-script:";
    std::size_t at = code.find(tag);
    if (at == std::string::npos) {
      v.outcome = Outcome::build_failed;
      v.gate = Gate::build;
      v.messages = {"scripted evaluator: no `# kgym-script:` directive in the candidate (task " +
                    task.id + ", candidate " + candidate.id + ")"};
      v.measurements.load.failure = Failure{"import", "ScriptError", v.messages.front(), "", 0, 0};
      return v;
    }
    std::size_t eol = code.find('\n', at);
    std::istringstream in(code.substr(at + tag.size(), eol == std::string::npos ? std::string::npos : eol - at - tag.size()));
    Outcome outcome = Outcome::passed;
    double speedup = 1.0, delay_ms = 0;
    int passed = -1, total = options.n_cases;
    std::string rule = "scripted-rule", error = "scripted failure";
    for (std::string kv; in >> kv;) {
      std::size_t eq = kv.find('=');
      if (eq == std::string::npos) continue;
      std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
      try {
        if (key == "outcome") {
          auto o = outcome_from_string(value);
          if (o) outcome = *o;
        } else if (key == "speedup") {
          speedup = std::stod(value);
        } else if (key == "delay_ms") {
          delay_ms = std::stod(value);
        } else if (key == "cases") {
          std::size_t slash = value.find('/');
          passed = std::stoi(value.substr(0, slash));
          if (slash != std::string::npos) total = std::stoi(value.substr(slash + 1));
        } else if (key == "rule") {
          rule = value;
        } else if (key == "error") {
          error = value;
        }
      } catch (const std::exception&) {
        // A malformed value keeps the default: the directive is test input, not user input.
      }
    }
    if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(delay_ms));

    v.outcome = outcome;
    v.gate = gate_of(outcome);
    v.correct = outcome == Outcome::passed || outcome == Outcome::timing_invalid;
    v.cases_total = total;
    v.cases_passed = passed >= 0 ? passed : (v.correct ? total : 0);
    const std::string who = " (task " + task.id + ", candidate " + candidate.id + ")";
    switch (outcome) {
      case Outcome::passed:
        v.ref_runtime_ms = 1.0;
        v.runtime_ms = 1.0 / speedup;
        v.runtime_spread = 0.01;
        v.speedup_eager = speedup;
        v.messages = {"passed" + who};
        break;
      case Outcome::timing_invalid:
        v.messages = {"timing could not be trusted" + who};
        break;
      case Outcome::policy_rejected:
        v.policy_findings.push_back({{"rule_id", rule}, {"severity", "reject"}, {"message", error}, {"line", 1}});
        v.messages = {"policy rule " + rule + " rejected the candidate" + who};
        break;
      case Outcome::build_failed:
        v.measurements.load.failure = Failure{"import", "BuildError", error, "error: " + error, 0, 0};
        v.messages = {"build failed: " + error + who};
        break;
      case Outcome::incorrect: {
        CaseRecord c;
        c.index = v.cases_passed;
        c.transform = "scale3";
        c.numel = 4096;
        c.mismatches = 17;
        c.first_mismatch_index = {0, 3};
        c.max_abs_error = 0.5;
        c.mean_abs_error = 0.01;
        c.max_rel_error = 2.0;
        c.atol = 1e-4;
        c.rtol = 1e-4;
        v.max_abs_error = 0.5;
        v.measurements.cases.push_back(c);
        v.messages = {"incorrect on case " + std::to_string(c.index) + who};
        break;
      }
      default: {
        CaseRecord c;
        c.index = v.cases_passed;
        c.failure = Failure{"case", "RuntimeError", error, "Traceback: RuntimeError: " + error, 0, 0};
        v.measurements.cases.push_back(c);
        v.messages = {std::string(to_string(outcome)) + ": " + error + who};
        break;
      }
    }
    return v;
  }
  std::string describe() const override { return "scripted"; }
};

}  // namespace

std::unique_ptr<Evaluator> make_scripted_evaluator() { return std::make_unique<ScriptedEvaluator>(); }

}  // namespace kgym
