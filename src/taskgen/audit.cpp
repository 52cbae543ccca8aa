// Degenerate-task audit: a task on which a trivial answer (zeros, ones, the input, the input's
// mean) passes the correctness gate is broken (../shared/ARCHITECTURE.md section 4, issue 6 item 7). The
// trivial answers are judged by the same engine as every candidate.
#include <algorithm>

#include "kgym/candidate.hpp"
#include "kgym/taskgen.hpp"

namespace kgym::taskgen {

nlohmann::json AuditResult::to_json() const {
  nlohmann::json j = {{"task_id", task_id}, {"degenerate", degenerate}, {"solution_ok", solution_ok}};
  j["checks"] = nlohmann::json::array();
  for (const auto& c : checks)
    j["checks"].push_back({{"candidate", c.candidate}, {"outcome", std::string(to_string(c.outcome))},
                           {"correct", c.correct}, {"message", c.message}});
  return j;
}

AuditResult audit_task(Evaluator& engine, const GeneratedTask& t, EvalOptions options) {
  options.time_candidate = false;
  options.compile_baseline = false;
  // The trivial answers are written for the task's own output shape, so the extra case at other
  // sizes would fail each of them on shape alone and no task could ever be found degenerate
  // (fresh-clone trial, 2026-12-01): the task's own cases decide.
  options.other_shape = false;
  // The audit judges the task, not the candidates' style: trivial answers and the plain-PyTorch
  // honest solution must reach the correctness gate, so the policy gate is off here.
  options.policy_profile = policy::Profile::off;
  AuditResult result;
  result.task_id = t.task.id;
  auto candidates = trivial_candidates(t);
  candidates.emplace_back("solution", t.solution);
  for (const auto& [name, code] : candidates) {
    Candidate c;
    c.id = t.task.id + "#" + name;
    c.task_id = t.task.id;
    c.code = code;
    Verdict v = engine.evaluate(t.task, c, options);
    AuditCheck check{name, v.outcome, v.correct, v.messages.empty() ? "" : v.messages.front()};
    if (name == "solution") result.solution_ok = v.correct;
    else if (v.correct) result.degenerate = true;
    result.checks.push_back(std::move(check));
  }
  return result;
}

std::vector<AuditResult> reject_degenerate(Evaluator& engine, std::vector<GeneratedTask>& tasks,
                                           const EvalOptions& options) {
  std::vector<AuditResult> results;
  results.reserve(tasks.size());
  for (const auto& t : tasks) results.push_back(audit_task(engine, t, options));
  std::vector<GeneratedTask> kept;
  for (std::size_t i = 0; i < tasks.size(); ++i)
    if (!results[i].degenerate) kept.push_back(std::move(tasks[i]));
  tasks = std::move(kept);
  return results;
}

}  // namespace kgym::taskgen
