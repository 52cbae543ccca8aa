// The degenerate-task audit with the real engine on the CPU (skipped without python3 + torch).
#include <cstdlib>

#include <gtest/gtest.h>

#include "kgym/engine.hpp"
#include "kgym/taskgen.hpp"

namespace kgym::taskgen {
namespace {

bool have_torch() { return std::system("python3 -c 'import torch' >/dev/null 2>&1") == 0; }

EvalOptions quick() {
  EvalOptions o;
  o.n_cases = 3;
  o.time_candidate = false;
  return o;
}

TEST(TaskgenAudit, GeneratedTasksAreNotDegenerateAndSolutionsPass) {
  if (!have_torch()) GTEST_SKIP() << "python3 with torch not available";
  Engine engine(EngineOptions{});
  std::vector<GeneratedTask> tasks = {generate("activation", kHeldoutBegin, {Variant::small, ""}),
                                      generate("softmax", kHeldoutBegin + 1, {Variant::small, ""}),
                                      generate("reduction", 3, {Variant::small, ""})};
  auto results = reject_degenerate(engine, tasks, quick());
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(tasks.size(), 3u);
  for (const auto& r : results) {
    SCOPED_TRACE(r.to_json().dump());
    EXPECT_FALSE(r.degenerate);
    EXPECT_TRUE(r.solution_ok);
    ASSERT_EQ(r.checks.size(), 5u);
    for (const auto& c : r.checks) EXPECT_EQ(c.correct, c.candidate == "solution");
  }
}

TEST(TaskgenAudit, RejectsATaskATrivialAnswerPasses) {
  if (!have_torch()) GTEST_SKIP() << "python3 with torch not available";
  Engine engine(EngineOptions{});
  // A broken design: the output does not depend on the input's values (always ones).
  GeneratedTask t = generate("activation", 1, {Variant::small, ""});
  t.task.id = "gen/activation/broken";
  t.task.source =
      "import torch\nimport torch.nn as nn\n\nbatch_size = 7\ndim = 33\n\n\n"
      "class Model(nn.Module):\n    def __init__(self, *args):\n        super().__init__()\n\n"
      "    def forward(self, x):\n        return torch.ones(batch_size, dim)\n\n\n"
      "def get_inputs():\n    return [torch.randn(batch_size, dim)]\n\n\n"
      "def get_init_inputs():\n    return []\n";
  t.output = {"out", {7, 33}, "float32"};
  std::vector<GeneratedTask> tasks = {t};
  auto results = reject_degenerate(engine, tasks, quick());
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].degenerate) << results[0].to_json().dump();
  EXPECT_TRUE(tasks.empty());
  bool constant_passed = false;
  for (const auto& c : results[0].checks) constant_passed |= c.candidate == "constant" && c.correct;
  EXPECT_TRUE(constant_passed);
}

TEST(TaskgenAudit, FlagsAnAlwaysZeroTaskWhoseOutputShapeFollowsTheInput) {
  if (!have_torch()) GTEST_SKIP() << "python3 with torch not available";
  Engine engine(EngineOptions{});
  // relu(-|x|) is 0 everywhere: `zeros` is correct on every case at the task's sizes; at other
  // sizes it fails on shape only (it is written for OUT_SHAPE), which must not hide the defect.
  GeneratedTask t = generate("activation", 1, {Variant::small, ""});
  t.task.id = "gen/activation/always_zero";
  t.task.source =
      "import torch\nimport torch.nn as nn\n\nbatch_size = 7\ndim = 33\n\n\n"
      "class Model(nn.Module):\n    def __init__(self, *args):\n        super().__init__()\n\n"
      "    def forward(self, x):\n        return torch.relu(-torch.abs(x))\n\n\n"
      "def get_inputs():\n    return [torch.randn(batch_size, dim)]\n\n\n"
      "def get_init_inputs():\n    return []\n";
  t.output = {"out", {7, 33}, "float32"};
  std::vector<GeneratedTask> tasks = {t};
  auto results = reject_degenerate(engine, tasks, quick());
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].degenerate) << results[0].to_json().dump();
  bool zeros_passed = false;
  for (const auto& c : results[0].checks) zeros_passed |= c.candidate == "zeros" && c.correct;
  EXPECT_TRUE(zeros_passed) << results[0].to_json().dump();
}

}  // namespace
}  // namespace kgym::taskgen
