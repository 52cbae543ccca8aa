#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "kgym/error.hpp"
#include "kgym/report.hpp"
#include "kgym/run.hpp"

namespace kgym {
namespace {

Verdict make(const std::string& task, int sample, int turn, Outcome o, std::optional<double> speedup = std::nullopt,
             std::optional<double> compile = std::nullopt) {
  Verdict v;
  v.task_id = task;
  v.candidate_id = run::make_candidate_id(task, sample, turn);
  v.outcome = o;
  v.correct = o == Outcome::passed || o == Outcome::timing_invalid;
  v.speedup_eager = speedup;
  v.speedup_compile = compile;
  if (compile) v.compile_runtime_ms = 1.0;
  if (speedup) v.runtime_ms = 1.0 / *speedup;
  return v;
}

const GroupMetrics& group(const Report& r, const std::string& key, const std::string& value) {
  for (const auto& g : r.groups)
    if (g.key == key && g.value == value) return g;
  throw std::runtime_error("no group " + key + "=" + value);
}

TEST(TaskInfo, KernelBenchAndGenerated) {
  EXPECT_EQ(task_info("L1/19_ReLU").family, "activation");
  EXPECT_EQ(task_info("L1/1_Square_matrix_multiplication_").family, "matmul");
  EXPECT_EQ(task_info("L1/63_conv_standard_2D").family, "convolution");
  EXPECT_EQ(task_info("L1/50_conv_standard_2D").family, "convolution");
  EXPECT_EQ(task_info("L1/97_ScaledDotProductAttention").family, "attention");
  EXPECT_EQ(task_info("L1/19_ReLU").level, "L1");
  EXPECT_EQ(task_info("L1/19_ReLU").split, "kernelbench");
  EXPECT_EQ(task_info("L2/5_x").family, "fused");
  TaskInfo g = task_info("gen/relu/912345-small");
  EXPECT_EQ(g.level, "gen");
  EXPECT_EQ(g.family, "relu");
  EXPECT_EQ(g.split, "heldout");
  EXPECT_EQ(task_info("gen/relu/42").split, "train");
  EXPECT_EQ(task_info("gen/relu/800001").split, "transfer");
  EXPECT_EQ(task_info("whatever").level, "other");
}

// Two tasks, two samples, two turns each.
std::vector<Verdict> study() {
  return {
      // task A (matmul), sample 0: fails then passes 2x; sample 1: passes 0.5x at turn 0 only
      make("L1/1_A", 0, 0, Outcome::build_failed), make("L1/1_A", 0, 1, Outcome::passed, 2.0, 1.5),
      make("L1/1_A", 1, 0, Outcome::passed, 0.5, 0.4), make("L1/1_A", 1, 1, Outcome::incorrect),
      // task B (activation): sample 0 incorrect both turns; sample 1 passes 20x (implausible)
      make("L1/19_B", 0, 0, Outcome::incorrect), make("L1/19_B", 0, 1, Outcome::runtime_error),
      make("L1/19_B", 1, 0, Outcome::passed, 20.0, 8.0), make("L1/19_B", 1, 1, Outcome::passed, 4.0, 2.0),
  };
}

TEST(BuildReport, AttemptsTurnsAndSamples) {
  ReportOptions o;
  o.floor_ms["L1/1_A"] = 0.6;  // sample 0's 2x runs 0.5 ms: below the floor
  Report r = build_report(study(), o);
  const GroupMetrics& all = r.groups.front();
  EXPECT_EQ(all.key, "all");
  EXPECT_EQ(all.tasks, 2);
  EXPECT_EQ(all.attempts, 4);
  EXPECT_EQ(all.verdicts, 8);
  EXPECT_EQ(all.max_turns, 2);
  // best of turns: A/s0 passed 2x, A/s1 passed 0.5x, B/s0 incorrect (incorrect and runtime_error
  // are both "built": the earlier turn is kept), B/s1 passed 20x
  EXPECT_EQ(all.outcomes.at("passed"), 3);
  EXPECT_EQ(all.outcomes.at("incorrect"), 1);
  EXPECT_EQ(all.outcomes.count("runtime_error"), 0u);
  EXPECT_DOUBLE_EQ(all.correct_rate, 0.75);
  EXPECT_DOUBLE_EQ(all.build_rate, 1.0);
  EXPECT_DOUBLE_EQ(all.fast_p_eager.at(1), 0.5);
  EXPECT_DOUBLE_EQ(all.fast_p_eager.at(0), 0.75);
  EXPECT_DOUBLE_EQ(all.fast_p_compile.at(1), 0.5);  // 1.5 and 8.0
  EXPECT_NEAR(*all.geomean_eager, std::cbrt(2.0 * 0.5 * 20.0), 1e-12);
  // first turn: A/s1 (0.5x) and B/s1 (20x) correct; fast_1 only B/s1
  EXPECT_DOUBLE_EQ(all.first_turn_correct, 0.5);
  EXPECT_DOUBLE_EQ(all.first_turn_fast1, 0.25);
  EXPECT_DOUBLE_EQ(all.best_turn_fast1, 0.5);
  // pass@1: A 2/2, B 1/2 -> 0.75; pass@2: both 1
  EXPECT_DOUBLE_EQ(all.pass_at_k.at(1), 0.75);
  EXPECT_DOUBLE_EQ(all.pass_at_k.at(2), 1.0);
  EXPECT_DOUBLE_EQ(all.fast1_at_k.at(1), 0.5);
  // best@1: A mean(2, 0.5) = 1.25, B mean(0, 20) = 10 -> 5.625; best@2: A 2, B 20 -> 11
  EXPECT_DOUBLE_EQ(all.best_at_k.at(1), 5.625);
  EXPECT_DOUBLE_EQ(all.best_at_k.at(2), 11.0);
  EXPECT_EQ(group(r, "family", "matmul").attempts, 2);
  EXPECT_DOUBLE_EQ(group(r, "family", "activation").correct_rate, 0.5);
  EXPECT_EQ(group(r, "level", "L1").tasks, 2);
  // implausible: B/s1t0 20x; A/s0t1 below its floor
  ASSERT_EQ(r.implausible.size(), 2u);
  EXPECT_EQ(r.implausible[0].candidate_id, "L1/1_A@s0t1");
  EXPECT_NE(r.implausible[0].reason.find("roofline"), std::string::npos);
  EXPECT_EQ(r.implausible[1].candidate_id, "L1/19_B@s1t0");
  // renderings carry the numbers
  std::string table = render_report(r);
  EXPECT_NE(table.find("pass@1=0.750"), std::string::npos);
  EXPECT_NE(render_report_markdown(r).find("| **all** | 2 | 4 |"), std::string::npos);
  nlohmann::json j = to_json(r);
  EXPECT_DOUBLE_EQ(j["groups"][0]["fast_p_eager"]["1"].get<double>(), 0.5);
  EXPECT_EQ(j["implausible"].size(), 2u);
}

TEST(BuildReport, IdsWithoutSampleSuffixAreSamplesInOrder) {
  std::vector<Verdict> vs = {make("L1/1_A", 0, 0, Outcome::passed, 2.0), make("L1/1_A", 0, 0, Outcome::incorrect)};
  vs[0].candidate_id = "rows.jsonl:1";
  vs[1].candidate_id = "rows.jsonl:2";
  Report r = build_report(vs);
  EXPECT_EQ(r.groups.front().attempts, 2);
  EXPECT_EQ(r.groups.front().min_samples, 2);
  EXPECT_DOUBLE_EQ(r.groups.front().pass_at_k.at(1), 0.5);
}

TEST(BuildReport, ClaimsAgainstMeasured) {
  std::vector<Verdict> vs = {make("L1/1_A", 0, 0, Outcome::passed, 2.0), make("L1/2_B", 0, 0, Outcome::incorrect),
                             make("L1/3_C", 0, 0, Outcome::passed, 0.5)};
  vs[0].candidate_id = "h.jsonl:1";
  vs[1].candidate_id = "h.jsonl:2";
  vs[2].candidate_id = "h.jsonl:3";
  namespace fs = std::filesystem;
  fs::path f = fs::temp_directory_path() / ("kgym-claims-" + std::to_string(::getpid()) + ".jsonl");
  std::ofstream(f) << "{\"score_default\": 4.0, \"score_torch_compile_default\": 3.0}\n"
                      "{\"score_default\": 9.0}\n{\"score_default\": 1.0}\n";
  std::filesystem::rename(f, f.parent_path() / "h.jsonl");
  ReportOptions o;
  o.claims = read_claims(f.parent_path() / "h.jsonl");
  ASSERT_EQ(o.claims.size(), 3u);
  EXPECT_FALSE(o.claims["h.jsonl:2"].second);
  Report r = build_report(vs, o);
  ASSERT_TRUE(r.claim_summary);
  EXPECT_EQ(r.claim_summary->rows, 3);
  EXPECT_EQ(r.claim_summary->passed, 2);
  EXPECT_DOUBLE_EQ(r.claim_summary->claimed_fast1, 2.0 / 3);
  EXPECT_DOUBLE_EQ(r.claim_summary->measured_fast1, 1.0 / 3);
  EXPECT_NEAR(*r.claim_summary->claimed_geomean_passed, 2.0, 1e-12);   // sqrt(4 * 1)
  EXPECT_NEAR(*r.claim_summary->measured_geomean_passed, 1.0, 1e-12);  // sqrt(2 * 0.5)
  EXPECT_NEAR(*r.claim_summary->median_ratio, 0.5, 1e-12);             // median(0.5, 0.5)
  std::filesystem::remove(f.parent_path() / "h.jsonl");
}

TEST(CompareRuns, FixedBrokenAndIntervals) {
  std::vector<Verdict> base = {make("L1/1_A", 0, 0, Outcome::incorrect), make("L1/2_B", 0, 0, Outcome::passed, 2.0),
                               make("L1/3_C", 0, 0, Outcome::passed, 1.5), make("L1/4_D", 0, 0, Outcome::passed, 1.0)};
  std::vector<Verdict> now = {make("L1/1_A", 0, 0, Outcome::passed, 3.0), make("L1/2_B", 0, 0, Outcome::build_failed),
                              make("L1/3_C", 0, 0, Outcome::passed, 1.5), make("L1/4_D", 0, 0, Outcome::passed, 1.2),
                              make("L1/9_Z", 0, 0, Outcome::passed, 5.0)};  // not in the baseline
  Comparison c = compare_runs(now, base);
  EXPECT_EQ(c.common_tasks, 4);
  EXPECT_EQ(c.fixed, std::vector<std::string>{"L1/1_A"});
  EXPECT_EQ(c.broken, std::vector<std::string>{"L1/2_B"});
  ASSERT_EQ(c.differences.size(), 3u);
  EXPECT_EQ(c.differences[0].metric, "correct");
  EXPECT_DOUBLE_EQ(c.differences[0].diff.estimate, 0.0);
  EXPECT_DOUBLE_EQ(c.differences[1].run, 0.75);      // fast_1: A, C, D
  EXPECT_DOUBLE_EQ(c.differences[1].baseline, 0.5);  // B, C
  EXPECT_LE(c.differences[0].diff.low, 0.0);
  EXPECT_GE(c.differences[0].diff.high, 0.0);
  EXPECT_THROW(compare_runs(now, {make("L1/77_Q", 0, 0, Outcome::passed, 1.0)}), Error);
}

}  // namespace
}  // namespace kgym

namespace kgym {
namespace {

TEST(BuildReport, OutputWriteFloorFlagsImpossibleRuntimes) {
  Verdict fast = make("L1/19_B", 0, 0, Outcome::passed, 3.0), honest = make("L1/19_B", 1, 0, Outcome::passed, 1.2);
  fast.runtime_ms = 0.1;
  honest.runtime_ms = 1.0;
  for (Verdict* v : {&fast, &honest}) {
    v->measurements.cases.emplace_back();
    v->measurements.cases[0].numel = 1000000000;  // 2 GB at 2 bytes/element: 0.4167 ms at 4800 GB/s
  }
  ReportOptions o;
  Report without = build_report({fast, honest}, o);
  EXPECT_TRUE(without.implausible.empty());
  o.bandwidth_gbs = 4800;
  Report r = build_report({fast, honest}, o);
  ASSERT_EQ(r.implausible.size(), 1u);
  EXPECT_EQ(r.implausible[0].candidate_id, fast.candidate_id);
  EXPECT_NEAR(*r.implausible[0].floor_ms, 1e9 * 2 / 4.8e12 * 1e3, 1e-12);
}

}  // namespace
}  // namespace kgym
