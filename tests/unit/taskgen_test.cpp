#include "kgym/taskgen.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "kgym/error.hpp"

namespace kgym::taskgen {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> family_names() {
  std::vector<std::string> out;
  for (const Family* f : Registry::instance().families()) out.push_back(f->name);
  return out;
}

std::int64_t largest_tensor(const GeneratedTask& t) {
  std::int64_t n = t.output.numel();
  for (const auto& s : t.inputs) n = std::max(n, s.numel());
  return n;
}

bool is_pow2(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

fs::path kernelbench_dir() { return fs::path(KGYM_SHARED_DATA_DIR) / "kernelbench"; }

TEST(TaskgenRegistry, HasTheFourteenFamiliesOfTheIssue) {
  const auto names = family_names();
  for (const char* want : {"activation", "binary", "reduction", "softmax", "norm", "matmul", "gemm_epilogue", "conv2d",
                           "conv_epilogue", "pooling", "scan", "loss", "attention", "data_movement"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  EXPECT_GE(names.size(), 14u);
  EXPECT_THROW(Registry::instance().get("no_such_family"), Error);
}

TEST(TaskgenRng, SameSeedSameStreamAndUnbiasedRange) {
  Rng a(7), b(7), c(8);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next(), b.next());
  EXPECT_NE(Rng(7).next(), c.next());
  Rng r(1);
  std::set<std::int64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    auto v = r.uniform_int(3, 9);
    ASSERT_GE(v, 3);
    ASSERT_LE(v, 9);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 7u);
  for (int i = 0; i < 200; ++i) {
    auto v = r.odd_dim(100, 5000);
    EXPECT_FALSE(is_pow2(v)) << v;
  }
  EXPECT_THROW(r.uniform_int(5, 4), Error);
}

TEST(TaskgenSplits, FixedBySeedRanges) {
  EXPECT_EQ(split_of_seed(0), Split::train);
  EXPECT_EQ(split_of_seed(kTransferBegin - 1), Split::train);
  EXPECT_EQ(split_of_seed(kTransferBegin), Split::transfer);
  EXPECT_EQ(split_of_seed(kHeldoutBegin - 1), Split::transfer);
  EXPECT_EQ(split_of_seed(kHeldoutBegin), Split::heldout);
  EXPECT_EQ(split_of_seed(kHeldoutEnd), Split::train);
  EXPECT_EQ(policy_profile(Variant::epilogue), "hybrid");
  EXPECT_EQ(policy_profile(Variant::scaffold), "strict");
}

// Per family: determinism (same seed, same task) and variety (other seed, other task).
class FamilyTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FamilyTest, SameSeedGivesIdenticalTask) {
  for (std::uint64_t seed : {0ULL, 17ULL, 123456ULL, 850001ULL, 900007ULL}) {
    for (Variant v : Registry::instance().get(GetParam()).variants) {
      GenOptions o{v, ""};
      auto a = generate(GetParam(), seed, o), b = generate(GetParam(), seed, o);
      EXPECT_EQ(a.task.id, b.task.id);
      EXPECT_EQ(a.task.source, b.task.source);
      EXPECT_EQ(a.solution, b.solution);
      EXPECT_EQ(a.scaffold, b.scaffold);
      EXPECT_EQ(to_json(a).dump(), to_json(b).dump());
    }
  }
}

TEST_P(FamilyTest, OtherSeedGivesOtherTask) {
  std::set<std::string> sources;
  for (std::uint64_t seed = 0; seed < 20; ++seed) sources.insert(generate(GetParam(), seed).task.source);
  EXPECT_EQ(sources.size(), 20u);
}

TEST_P(FamilyTest, EveryVariantAndDtypeIsWellFormed) {
  const Family& f = Registry::instance().get(GetParam());
  int odd = 0, total = 0;
  for (Variant v : f.variants) {
    for (const auto& dtype : f.dtypes) {
      for (std::uint64_t seed = 0; seed < 12; ++seed) {
        auto t = generate(f.name, seed, {v, dtype});
        SCOPED_TRACE(t.task.id);
        EXPECT_EQ(t.task.id.rfind("gen/" + f.name + "/" + std::to_string(seed), 0), 0u);
        EXPECT_EQ(generate_from_id(t.task.id).task.source, t.task.source);  // ids round-trip
        EXPECT_EQ(t.dtype, dtype);
        EXPECT_EQ(t.variant, v);
        EXPECT_EQ(t.policy_profile, policy_profile(v));
        EXPECT_NE(t.task.source.find("class Model(nn.Module)"), std::string::npos);
        EXPECT_NE(t.task.source.find("def get_inputs():"), std::string::npos);
        EXPECT_NE(t.task.source.find("def get_init_inputs():"), std::string::npos);
        EXPECT_NE(t.solution.find("class ModelNew(nn.Module)"), std::string::npos);
        EXPECT_EQ(!t.scaffold.empty(), v == Variant::scaffold);
        EXPECT_EQ(!t.library_calls.empty(), v == Variant::epilogue);
        EXPECT_FALSE(t.inputs.empty());
        EXPECT_GT(t.cost.bytes, 0);
        EXPECT_GE(t.cost.flops, 0);
        for (const auto& [name, value] : t.constants)  // every constant appears in the module
          EXPECT_NE(t.task.source.find(name + " = " + std::to_string(value)), std::string::npos) << name;
        const auto largest = largest_tensor(t);
        if (v == Variant::small) {
          EXPECT_LE(largest, 16384);
        } else {
          EXPECT_LE(largest, std::int64_t{40} << 20);
          EXPECT_GE(largest, std::int64_t{1} << 17);
        }
        bool has_odd = false;
        for (const auto& s : t.inputs)
          for (auto d : s.shape) has_odd |= !is_pow2(d);
        odd += has_odd;
        ++total;
      }
    }
  }
  EXPECT_GE(odd * 10, total * 9) << "most tasks must have a non-power-of-two dim";
}

TEST_P(FamilyTest, SplitsServeTheirOps) {
  const Family& f = Registry::instance().get(GetParam());
  auto held = [&](const std::string& op) {
    return std::find(f.transfer_ops.begin(), f.transfer_ops.end(), op) != f.transfer_ops.end();
  };
  std::set<std::string> heldout_ops;
  for (std::uint64_t i = 0; i < 40; ++i) {
    auto train = generate(f.name, i);
    EXPECT_EQ(train.split, Split::train);
    EXPECT_FALSE(held(train.op)) << train.task.id << " serves held-out op " << train.op;
    auto transfer = generate(f.name, kTransferBegin + i);
    EXPECT_EQ(transfer.split, Split::transfer);
    if (!f.transfer_ops.empty()) {
      EXPECT_TRUE(held(transfer.op)) << transfer.task.id;
    }
    heldout_ops.insert(generate(f.name, kHeldoutBegin + i).op);
  }
  EXPECT_GE(heldout_ops.size(), std::min<std::size_t>(3, f.ops.size()));
}

TEST_P(FamilyTest, DecontaminationDropsOnlyTrainTasksAboveThreshold) {
  if (!fs::is_directory(kernelbench_dir())) GTEST_SKIP() << "no " << kernelbench_dir();
  Decontaminator d(kernelbench_dir());
  EXPECT_GE(d.size(), 250u);
  auto tasks = generate_range({GetParam()}, 0, 6);
  auto more = generate_range({GetParam()}, kHeldoutBegin, 3);
  tasks.insert(tasks.end(), more.begin(), more.end());
  auto report = decontaminate(tasks, d);
  EXPECT_EQ(report.checked, tasks.size());
  EXPECT_EQ(report.train, 6u);
  EXPECT_EQ(report.reasons.size(), report.dropped);
  for (const auto& t : tasks) {
    ASSERT_TRUE(t.nearest_benchmark.has_value());
    EXPECT_GE(t.nearest_benchmark->second, 0.0);
    EXPECT_LE(t.nearest_benchmark->second, 1.0);
    EXPECT_EQ(t.dropped_from_train, t.split == Split::train && t.nearest_benchmark->second > 0.6) << t.task.id;
  }
}

TEST_P(FamilyTest, DecontaminationDropsACopiedProblem) {
  // A suite that holds one generated task verbatim: that task is dropped from train (Jaccard 1),
  // the heldout task with the same source is kept (only train is filtered).
  const fs::path dir = fs::temp_directory_path() / ("kgym_taskgen_decon_" + GetParam());
  fs::remove_all(dir);
  fs::create_directories(dir / "level1");
  auto t = generate(GetParam(), 3);
  std::ofstream(dir / "level1" / "1_Copied.py") << t.task.source;
  std::ofstream(dir / "level1" / "2_Other.py") << "import os\nprint(os.getcwd())\n";
  Decontaminator d(dir);
  std::vector<GeneratedTask> tasks = {t};
  auto report = decontaminate(tasks, d);
  EXPECT_EQ(report.dropped, 1u);
  ASSERT_EQ(report.reasons.size(), 1u);
  EXPECT_EQ(std::get<1>(report.reasons[0]), "L1/1_Copied");
  EXPECT_DOUBLE_EQ(std::get<2>(report.reasons[0]), 1.0);
  auto h = generate(GetParam(), kHeldoutBegin + 3);
  d.check(h);
  EXPECT_FALSE(h.dropped_from_train);
  fs::remove_all(dir);
}

TEST_P(FamilyTest, TrivialCandidatesHaveTheOutputContract) {
  auto t = generate(GetParam(), 5, {Variant::small, ""});
  auto trivial = trivial_candidates(t);
  ASSERT_EQ(trivial.size(), 4u);
  std::string shape = "OUT_SHAPE = (";
  for (std::size_t i = 0; i < t.output.shape.size(); ++i)
    shape += (i ? ", " : "") + std::to_string(t.output.shape[i]);
  shape += t.output.shape.size() == 1 ? ",)" : ")";
  for (const auto& [name, src] : trivial) {
    EXPECT_NE(src.find("class ModelNew(nn.Module)"), std::string::npos) << name;
    EXPECT_NE(src.find(shape), std::string::npos) << name << "\n" << src;
    EXPECT_NE(src.find("torch." + t.output.dtype), std::string::npos) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(AllFamilies, FamilyTest, ::testing::ValuesIn(family_names()),
                         [](const auto& info) { return info.param; });

TEST(TaskgenIds, GrammarAndErrors) {
  auto t = generate("softmax", 42, {Variant::small, ""});
  EXPECT_EQ(t.task.id, "gen/softmax/42-small");
  EXPECT_EQ(generate("matmul", 3, {Variant::full, "float16"}).task.id, "gen/matmul/3-float16");
  EXPECT_EQ(generate("matmul", 3, {Variant::full, "float32"}).task.id, "gen/matmul/3");
  EXPECT_EQ(generate_from_id("gen/matmul/3-float16").dtype, "float16");
  EXPECT_THROW(generate_from_id("gen/softmax/42-full"), Error);  // full is not spelled out
  EXPECT_THROW(generate_from_id("gen/softmax/x"), Error);
  EXPECT_THROW(generate_from_id("L1/19_ReLU"), Error);
  EXPECT_THROW(generate("matmul", 1, {Variant::scaffold, ""}), Error);   // no scaffold for matmul
  EXPECT_THROW(generate("activation", 1, {Variant::epilogue, ""}), Error);
  EXPECT_THROW(generate("loss", 1, {Variant::full, "float16"}), Error);
}

TEST(TaskgenDecontamination, TokensSkipCommentsAndStrings) {
  auto t = code_tokens("x = torch.relu(y)  # relu comment\ns = \"\"\"doc words\"\"\" + r'raw' + 'q'\nz = 1.5e-3 ** 2\n");
  auto has = [&](const char* w) { return std::find(t.begin(), t.end(), w) != t.end(); };
  EXPECT_TRUE(has("torch"));
  EXPECT_TRUE(has("relu"));
  EXPECT_TRUE(has("1.5e-3"));
  EXPECT_TRUE(has("**"));
  EXPECT_FALSE(has("comment"));
  EXPECT_FALSE(has("doc"));
  EXPECT_FALSE(has("raw"));
  EXPECT_FALSE(has("q"));
  EXPECT_TRUE(std::is_sorted(t.begin(), t.end()));
  EXPECT_DOUBLE_EQ(jaccard({"a", "b"}, {"b", "c"}), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(jaccard({}, {}), 0.0);
  EXPECT_THROW(Decontaminator(fs::path("/nonexistent/kgym")), Error);
}

TEST(TaskgenCost, BytesCountEveryTensorOnce) {
  auto t = generate("matmul", 11, {Variant::small, ""});
  double bytes = 0;
  for (const auto& s : t.inputs) bytes += static_cast<double>(s.numel() * 4);
  bytes += static_cast<double>(t.output.numel() * 4);
  EXPECT_DOUBLE_EQ(t.cost.bytes, bytes);
  const auto& a = t.inputs[0].shape;
  const auto& o = t.output.shape;
  const std::int64_t k = t.op == "matmul" || t.op == "matmul_nt" || t.op == "bmm" ? a.back() : a[a.size() - 2];
  EXPECT_DOUBLE_EQ(t.cost.flops, 2.0 * static_cast<double>(t.output.numel()) * static_cast<double>(k)) << t.op << o.size();
  Cost c{4.8e9, 0};
  EXPECT_NEAR(c.floor_ms(4800, 60), 1.0, 1e-12);  // 4.8 GB at 4.8 TB/s is 1 ms
}

TEST(TaskgenDefaultSuite, SmallHeldoutTasksWithSolutionsPerFamily) {
  auto suite = default_suite();
  auto again = default_suite();
  ASSERT_EQ(suite.size(), again.size());
  std::map<std::string, std::set<std::string>> ops;
  std::set<std::string> ids;
  for (std::size_t i = 0; i < suite.size(); ++i) {
    const auto& t = suite[i];
    EXPECT_EQ(t.task.source, again[i].task.source);
    EXPECT_EQ(t.variant, Variant::small);
    EXPECT_EQ(t.split, Split::heldout);
    EXPECT_NE(t.solution.find("class ModelNew"), std::string::npos);
    EXPECT_TRUE(ids.insert(t.task.id).second) << "duplicate id " << t.task.id;
    ops[t.family].insert(t.op);
  }
  for (const auto& name : family_names()) EXPECT_GE(ops[name].size(), 2u) << name;
}

TEST(TaskgenDefaultSuite, EvaluationsPairEachTaskWithItsSolution) {
  auto suite = default_suite();
  auto evals = default_suite_evaluations();
  ASSERT_EQ(evals.size(), suite.size());
  for (std::size_t i = 0; i < evals.size(); ++i) {
    EXPECT_EQ(evals[i].task.id, suite[i].task.id);
    EXPECT_EQ(evals[i].task.source, suite[i].task.source);
    EXPECT_EQ(evals[i].candidate.task_id, suite[i].task.id);
    EXPECT_EQ(evals[i].candidate.code, suite[i].solution);
    EXPECT_FALSE(evals[i].candidate.empty());
  }
}

TEST(TaskgenExport, BothLayouts) {
  const fs::path dir = fs::temp_directory_path() / "kgym_taskgen_export";
  fs::remove_all(dir);
  auto tasks = generate_range({"softmax", "conv2d"}, 1, 2, {Variant::small, ""});
  auto written = export_tasks(tasks, dir / "fam", "family", true);
  ASSERT_EQ(written.size(), 4u);
  EXPECT_TRUE(fs::exists(dir / "fam" / "softmax" / "1-small.py"));
  EXPECT_TRUE(fs::exists(dir / "fam" / "softmax" / "1-small.solution.py"));
  written = export_tasks(tasks, dir / "flat", "flat", true);
  EXPECT_TRUE(fs::exists(dir / "flat" / "conv2d_2-small.py"));
  EXPECT_TRUE(fs::exists(dir / "flat" / "solutions" / "conv2d_2-small.py"));
  std::ifstream in(dir / "flat" / "conv2d_2-small.py");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, tasks[3].task.source);
  EXPECT_THROW(export_tasks(tasks, dir, "nested", false), Error);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kgym::taskgen
