// The CPU backstop of the launch gate: ATen compute ops dispatched in a traced call reject under
// strict only; glue (allocation, views, copies) never does.
#include <gtest/gtest.h>

#include "kgym/verdict.hpp"

namespace kgym {
namespace {

Measurements passing_cpu() {
  Measurements m;
  m.load.ok = m.load.parsed = m.load.model_new_defined = true;
  for (int i = 0; i < 3; ++i) {
    CaseRecord c;
    c.index = i;
    c.numel = 100;
    c.max_abs_error = 1e-6;
    c.tolerance_ratio = 0.01;
    c.atol = c.rtol = 1e-4;
    c.compared = true;
    m.cases.push_back(c);
  }
  for (auto* t : {&m.candidate_timing, &m.eager_timing}) {
    TimingRecord r;
    r.method = "wall";
    r.times_ms = std::vector<double>(10, 1.0);
    r.wall_ms = 1000;
    *t = r;
  }
  LaunchRecord l;
  l.skipped = "cpu: no kernel trace";
  l.aten_traced = true;
  l.calls = 3;
  l.aten_glue_calls = 6;
  l.aten_ops = {nlohmann::json{{"name", "aten::empty_like"}, {"category", "glue"}, {"count", 3}},
                nlohmann::json{{"name", "aten::empty_strided"}, {"category", "glue"}, {"count", 3}}};
  m.launch = l;
  return m;
}

TEST(CpuOpGate, ComputeOpsRejectUnderStrictOnly) {
  JudgeOptions strict, hybrid, off, kb;
  strict.policy_profile = policy::Profile::strict;
  hybrid.policy_profile = policy::Profile::hybrid;
  off.policy_profile = policy::Profile::off;
  kb.policy_profile = policy::Profile::kernelbench;
  Measurements glue = passing_cpu();
  EXPECT_EQ(judge(glue, strict).outcome, Outcome::passed);
  Measurements hidden = passing_cpu();
  hidden.launch->aten_compute_calls = 3;
  hidden.launch->aten_ops.push_back(nlohmann::json{{"name", "aten::relu"}, {"category", "compute"}, {"count", 3}});
  Verdict v = judge(hidden, strict);
  EXPECT_EQ(v.outcome, Outcome::policy_rejected);
  EXPECT_EQ(v.gate, Gate::launch);
  EXPECT_NE(v.messages.front().find("aten::relu x3"), std::string::npos) << v.messages.front();
  // ... and listed in policy_findings with the scan's (fresh-user run, session 17: it was empty).
  ASSERT_EQ(v.policy_findings.size(), 1u);
  EXPECT_EQ(v.policy_findings[0]["rule_id"], "cpu_op_trace");
  EXPECT_EQ(v.policy_findings[0]["gate"], "launch");
  EXPECT_EQ(v.policy_findings[0]["message"], v.messages.front());
  EXPECT_TRUE(judge(glue, strict).policy_findings.empty());
  for (const auto& o : {hybrid, off, kb}) EXPECT_EQ(judge(hidden, o).outcome, Outcome::passed) << policy::to_string(o.policy_profile);
  // Without the op trace (aten_traced false) nothing is decided.
  hidden.launch->aten_traced = false;
  EXPECT_EQ(judge(hidden, strict).outcome, Outcome::passed);
}

TEST(CpuOpGate, RecordRoundTrips) {
  Measurements m = passing_cpu();
  m.launch->aten_compute_calls = 2;
  nlohmann::json j = m;
  EXPECT_EQ(j["launch"]["aten_compute_calls"], 2);
  Measurements back = j.get<Measurements>();
  EXPECT_TRUE(back.launch->aten_traced);
  EXPECT_EQ(back.launch->aten_compute_calls, 2);
  EXPECT_EQ(back.launch->aten_glue_calls, 6);
  EXPECT_EQ(back.launch->aten_ops.size(), 2u);
  EXPECT_EQ(nlohmann::json(back), j);
  // A record without the op trace keeps its old JSON shape.
  LaunchRecord plain;
  EXPECT_FALSE(nlohmann::json(plain).contains("aten_ops"));
}

}  // namespace
}  // namespace kgym
