#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kgym/candidate.hpp"
#include "kgym/error.hpp"
#include "kgym/task.hpp"

namespace kgym {
namespace {
namespace fs = std::filesystem;

const fs::path kExamples = fs::path(KGYM_SOURCE_DIR) / "examples";
const fs::path kShared = fs::path(KGYM_SHARED_DATA_DIR);

TEST(Suite, LoadsExamples) {
  Suite s = load_suite(kExamples / "suite");
  ASSERT_EQ(s.tasks.size(), 4u);
  EXPECT_EQ(s.tasks[0].id, "L1/1_Square_matrix_multiplication_");  // sorted by number
  EXPECT_EQ(s.tasks[1].id, "L1/19_ReLU");
  EXPECT_EQ(s.tasks[0].level, 1);
  EXPECT_NE(s.find("L1/23_Softmax"), nullptr);
  EXPECT_EQ(s.find("L1/23"), nullptr);
}

TEST(Suite, MissingDirectoryIsInputError) {
  try {
    load_suite("/nonexistent/suite");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/suite"), std::string::npos);
  }
}

TEST(Suite, SelectPatterns) {
  Suite s = load_suite(kExamples / "suite");
  EXPECT_EQ(select_tasks(s, {}).size(), 4u);
  EXPECT_EQ(select_tasks(s, {"L1"}).size(), 4u);
  EXPECT_EQ(select_tasks(s, {"level1"}).size(), 4u);
  EXPECT_EQ(select_tasks(s, {"L1/19"}).at(0).id, "L1/19_ReLU");
  EXPECT_EQ(select_tasks(s, {"L1/19_ReLU"}).size(), 1u);
  EXPECT_EQ(select_tasks(s, {"19_ReLU"}).at(0).id, "L1/19_ReLU");  // the file name, as listed
  // One task by id or short form (a .jsonl row, the server's /reset); none for several or globs.
  int matched = -1;
  EXPECT_EQ(resolve_task(s.tasks, "L1/19_ReLU", &matched)->id, "L1/19_ReLU");
  EXPECT_EQ(matched, 0);
  EXPECT_EQ(resolve_task(s.tasks, "L1/19")->id, "L1/19_ReLU");
  EXPECT_EQ(resolve_task(s.tasks, "23_Softmax")->id, "L1/23_Softmax");
  EXPECT_EQ(resolve_task(s.tasks, "L1", &matched), nullptr);
  EXPECT_EQ(matched, 4);
  EXPECT_EQ(resolve_task(s.tasks, "*ReLU*"), nullptr);
  EXPECT_THROW(select_tasks(s, {"19_Relu"}), Error);
  EXPECT_EQ(select_tasks(s, {"*Soft*", "L1/40"}).size(), 2u);
  EXPECT_THROW(select_tasks(s, {"L2"}), Error);
  EXPECT_THROW(select_tasks(s, {"L1/999_Nothing"}), Error);
}

TEST(Suite, KernelBenchSharedData) {
  if (!fs::exists(kShared / "kernelbench")) GTEST_SKIP() << "no ../shared/data";
  Suite s = load_suite(kShared / "kernelbench");
  EXPECT_EQ(s.tasks.size(), 250u);
  EXPECT_EQ(select_tasks(s, {"L1"}).size(), 100u);
  EXPECT_EQ(select_tasks(s, {"L1/19"}).at(0).id, "L1/19_ReLU");
}

TEST(Candidates, DirectoryWithTaskFolders) {
  Suite s = load_suite(kExamples / "suite");
  auto evals = load_evaluations(kExamples / "candidates", &s, {});
  EXPECT_GE(evals.size(), 10u);
  for (const auto& e : evals) {
    EXPECT_EQ(e.task.id, e.candidate.task_id);
    EXPECT_FALSE(e.candidate.code.empty());
  }
  auto relu = load_evaluations(kExamples / "candidates", &s, {"L1/19"});
  EXPECT_EQ(relu.size(), 4u);
  // The task's own folder given as --candidates: its task from the folder's name, the same ids,
  // with or without a trailing slash.
  for (const fs::path& given : {kExamples / "candidates" / "19_ReLU", kExamples / "candidates" / "19_ReLU" / ""}) {
    auto folder = load_evaluations(given, &s, {});
    ASSERT_EQ(folder.size(), 4u);
    for (std::size_t i = 0; i < folder.size(); ++i) {
      EXPECT_EQ(folder[i].task.id, "L1/19_ReLU");
      EXPECT_EQ(folder[i].candidate.id, relu[i].candidate.id);
    }
  }
  // A file saved with a UTF-8 byte-order mark is read without it (Python compiles such a file;
  // from a string it refused the mark: red team rt26).
  EXPECT_EQ(without_bom("\xEF\xBB\xBFimport torch\n"), "import torch\n");
  EXPECT_EQ(without_bom("import torch\n"), "import torch\n");
  EXPECT_THROW(load_evaluations(kExamples / "candidates", nullptr, {}), Error);
}

TEST(Candidates, EmptyCode) {
  Candidate c;
  EXPECT_TRUE(c.empty());
  c.code = "  None\n";
  EXPECT_TRUE(c.empty());
  c.code = "class ModelNew: pass";
  EXPECT_FALSE(c.empty());
}

fs::path write_temp(const std::string& name, const std::string& text) {
  fs::path p = fs::temp_directory_path() / name;
  std::ofstream(p) << text;
  return p;
}

TEST(Candidates, KgymJsonl) {
  Suite s = load_suite(kExamples / "suite");
  auto p = write_temp("kgym_rows.jsonl",
                      "{\"task_id\": \"L1/19_ReLU\", \"code\": \"x\", \"candidate_id\": \"a\"}\n\n"
                      "{\"task_id\": \"L1/23_Softmax\", \"code\": null}\n");
  auto evals = load_evaluations(p, &s, {});
  ASSERT_EQ(evals.size(), 2u);
  EXPECT_EQ(evals[0].candidate.id, "a");
  EXPECT_EQ(evals[1].candidate.id, "kgym_rows.jsonl:3");
  EXPECT_TRUE(evals[1].candidate.empty());
  EXPECT_EQ(evals[1].task.source, s.find("L1/23_Softmax")->source);
}

TEST(Candidates, JsonlRowsTakeTheShortTaskIdsOfTasks) {
  // "L1/19" and "19_ReLU" as --tasks takes them (fresh-user run, session 15).
  Suite s = load_suite(kExamples / "suite");
  auto p = write_temp("kgym_short.jsonl",
                      "{\"task_id\": \"L1/19\", \"code\": \"x\"}\n"
                      "{\"task_id\": \"23_Softmax\", \"code\": \"x\"}\n");
  auto evals = load_evaluations(p, &s, {});
  ASSERT_EQ(evals.size(), 2u);
  EXPECT_EQ(evals[0].task.id, "L1/19_ReLU");
  EXPECT_EQ(evals[0].candidate.task_id, "L1/19_ReLU");
  EXPECT_EQ(evals[1].task.id, "L1/23_Softmax");
  EXPECT_EQ(evals[1].task.source, s.find("L1/23_Softmax")->source);
  // A pattern of several tasks names none.
  auto q = write_temp("kgym_level.jsonl", "{\"task_id\": \"L1\", \"code\": \"x\"}\n");
  EXPECT_THROW(load_evaluations(q, &s, {}), Error);
}

TEST(Candidates, MalformedLineNamesFileAndLine) {
  Suite s = load_suite(kExamples / "suite");
  auto p = write_temp("kgym_bad.jsonl", "{\"task_id\": \"L1/19_ReLU\", \"code\": \"x\"}\n{not json\n");
  try {
    load_evaluations(p, &s, {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("kgym_bad.jsonl:2"), std::string::npos);
  }
  auto q = write_temp("kgym_unknown.jsonl", "{\"task_id\": \"L1/77_Nope\", \"code\": \"x\"}\n");
  EXPECT_THROW(load_evaluations(q, &s, {}), Error);
  EXPECT_THROW(load_evaluations("/nonexistent.jsonl", &s, {}), Error);
}

TEST(Candidates, CudaL1Rows) {
  const fs::path file = kShared / "cuda-l1" / "h100_level1.jsonl";
  if (!fs::exists(file)) GTEST_SKIP() << "no ../shared/data";
  auto evals = load_evaluations(file, nullptr, {});
  ASSERT_EQ(evals.size(), 100u);
  EXPECT_EQ(evals[0].task.id, "L1/1");
  EXPECT_TRUE(evals[1].candidate.empty());  // task 2: "None"
  EXPECT_FALSE(evals[8].candidate.empty());
  EXPECT_EQ(evals[8].task.source, *evals[8].candidate.ref_code);  // ref_code is the reference
  EXPECT_TRUE(evals[0].candidate.extra.contains("score_default"));
  Suite s = load_suite(kShared / "kernelbench");
  auto named = load_evaluations(file, &s, {"L1/9", "L1/19"});
  ASSERT_EQ(named.size(), 2u);
  EXPECT_EQ(named[0].task.id, "L1/9_Tall_skinny_matrix_multiplication_");
  EXPECT_EQ(named[1].task.id, "L1/19_ReLU");
  EXPECT_NE(named[1].task.source, s.find("L1/19_ReLU")->source);  // the row's own (smaller) ref_code
  // Row 97 is a cosine-similarity loss, the suite's 97 is attention: not named after it.
  auto row97 = load_evaluations(file, &s, {"L1/97"});
  ASSERT_EQ(row97.size(), 1u);
  EXPECT_EQ(row97[0].task.id, "L1/97");
  EXPECT_EQ(row97[0].candidate.extra["suite_task_differs"], "L1/97_ScaledDotProductAttention");
}

}  // namespace
}  // namespace kgym

TEST(Task, FullSizeInputsAreModuleLevelSizeConstants) {
  auto with = [](std::string source) {
    kgym::Task t;
    t.source = std::move(source);
    return kgym::has_full_size_inputs(t);
  };
  EXPECT_TRUE(with("import torch\nbatch_size = 4096\ndim = 393216\n"));
  EXPECT_TRUE(with("N = 2048 * 64  # KernelBench writes products\n"));
  EXPECT_TRUE(with("dim = 1_048_576\n"));
  EXPECT_FALSE(with("batch_size = 16\ndim = 16384\n"));
  // a generated task's seed, in a comment, a docstring or an assignment named so, is no size
  EXPECT_FALSE(with("# origin: taskgen:activation:900001:small\nbatch_size = 31\n"));
  EXPECT_FALSE(with("\"\"\"seed 900001\"\"\"\nSEED = 900001\nbatch_size = 31\n"));
  EXPECT_FALSE(with("def get_inputs():\n    torch.manual_seed(900001)\n    return [torch.rand(31, 7)]\n"));
  // an expression that is not a product of integers: its largest literal
  EXPECT_TRUE(with("features = max(64, 131072)\n"));
}
