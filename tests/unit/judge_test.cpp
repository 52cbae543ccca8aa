// The judge's decisions on recorded measurements: one test per outcome and per rule.
#include <gtest/gtest.h>

#include "kgym/verdict.hpp"

namespace kgym {
namespace {

Measurements loaded() {
  Measurements m;
  m.load.ok = m.load.parsed = m.load.model_new_defined = true;
  return m;
}

CaseRecord good_case(int i) {
  CaseRecord c;
  c.index = i;
  c.numel = 100;
  c.max_abs_error = 1e-6;
  c.tolerance_ratio = 0.01;
  c.atol = c.rtol = 1e-4;
  return c;
}

TimingRecord timing(std::vector<double> t, double wall = 0) {
  TimingRecord r;
  r.method = "cuda_events";
  r.times_ms = std::move(t);
  r.wall_ms = wall;
  return r;
}

Measurements correct_and_timed(double cand_ms, double ref_ms) {
  Measurements m = loaded();
  for (int i = 0; i < 3; ++i) m.cases.push_back(good_case(i));
  m.candidate_timing = timing(std::vector<double>(10, cand_ms), 1000);
  m.eager_timing = timing(std::vector<double>(10, ref_ms), 1000);
  return m;
}

TEST(Judge, PassedWithSpeedup) {
  Verdict v = judge(correct_and_timed(1.0, 2.5));
  EXPECT_EQ(v.outcome, Outcome::passed);
  EXPECT_EQ(v.gate, Gate::timing);
  EXPECT_TRUE(v.correct);
  EXPECT_EQ(v.cases_passed, 3);
  ASSERT_TRUE(v.speedup_eager);
  EXPECT_DOUBLE_EQ(*v.speedup_eager, 2.5);
  EXPECT_DOUBLE_EQ(*v.runtime_ms, 1.0);
  EXPECT_FALSE(v.speedup_compile);
}

TEST(Judge, SyntaxErrorIsBuildFailed) {
  Measurements m;
  m.load.failure = Failure{"parse", "SyntaxError", "line 3, column 5: invalid syntax", "", 0, 0};
  Verdict v = judge(m);
  EXPECT_EQ(v.outcome, Outcome::build_failed);
  EXPECT_NE(v.messages.front().find("line 3"), std::string::npos);
}

TEST(Judge, MissingModelNewIsPolicyRejected) {
  Measurements m;
  m.load.parsed = true;
  EXPECT_EQ(judge(m).outcome, Outcome::policy_rejected);
}

TEST(Judge, ImportFailureIsBuildFailedAndInitFailureIsRuntimeError) {
  Measurements m;
  m.load.parsed = m.load.model_new_defined = true;
  m.load.failure = Failure{"import", "RuntimeError", "Error building extension 'x'", "nvcc log", 0, 0};
  EXPECT_EQ(judge(m).outcome, Outcome::build_failed);
  m.load.failure->stage = "init";
  EXPECT_EQ(judge(m).outcome, Outcome::runtime_error);
}

TEST(Judge, TimeoutsPerGate) {
  Measurements m;
  m.load.parsed = m.load.model_new_defined = true;
  m.timed_out_stage = "load";
  EXPECT_EQ(judge(m).outcome, Outcome::timeout);
  Measurements c = loaded();
  c.cases.push_back(good_case(0));
  c.timed_out_stage = "case";
  Verdict v = judge(c);
  EXPECT_EQ(v.outcome, Outcome::timeout);
  EXPECT_EQ(v.gate, Gate::correctness);
  Measurements t = correct_and_timed(1, 1);
  t.candidate_timing.reset();
  t.timed_out_stage = "timing";
  v = judge(t);
  EXPECT_EQ(v.outcome, Outcome::timeout);
  EXPECT_EQ(v.gate, Gate::timing);
  EXPECT_TRUE(v.correct);
}

TEST(Judge, CrashIsRuntimeError) {
  Measurements m = loaded();
  m.cases.push_back(good_case(0));
  m.crash = Failure{"process", "signal", "during case 1", "", 11, 0};
  Verdict v = judge(m);
  EXPECT_EQ(v.outcome, Outcome::runtime_error);
  EXPECT_NE(v.messages.front().find("signal 11"), std::string::npos);
}

TEST(Judge, CandidateExceptionIsRuntimeError) {
  Measurements m = loaded();
  CaseRecord c = good_case(0);
  c.failure = Failure{"case", "ValueError", "boom", "", 0, 0};
  m.cases.push_back(c);
  EXPECT_EQ(judge(m).outcome, Outcome::runtime_error);
}

TEST(Judge, ContractViolations) {
  auto with = [](auto mutate) {
    Measurements m = loaded();
    CaseRecord c = good_case(0);
    mutate(c);
    m.cases.push_back(c);
    return judge(m);
  };
  EXPECT_EQ(with([](CaseRecord& c) { c.output_plain_tensor = false; c.output_type = "Lazy"; }).outcome,
            Outcome::contract_violation);
  EXPECT_EQ(with([](CaseRecord& c) { c.dtype_matches = false; }).outcome, Outcome::contract_violation);
  EXPECT_EQ(with([](CaseRecord& c) { c.shape_matches = false; }).outcome, Outcome::contract_violation);
  EXPECT_EQ(with([](CaseRecord& c) { c.device_matches = false; }).outcome, Outcome::contract_violation);
  EXPECT_EQ(with([](CaseRecord& c) { c.structure_matches = false; }).outcome, Outcome::contract_violation);
  EXPECT_EQ(with([](CaseRecord& c) { c.inputs_unchanged = false; }).outcome, Outcome::contract_violation);
  EXPECT_EQ(with([](CaseRecord& c) { c.output_aliases_input = true; }).outcome, Outcome::contract_violation);
}

TEST(Judge, WrongValuesAndNaNAreIncorrect) {
  Measurements m = loaded();
  CaseRecord c = good_case(0);
  c.tolerance_ratio = 3.0;
  c.mismatches = 7;
  c.first_mismatch_index = {2, 5};
  m.cases.push_back(c);
  Verdict v = judge(m);
  EXPECT_EQ(v.outcome, Outcome::incorrect);
  EXPECT_FALSE(v.correct);
  EXPECT_NE(v.messages.front().find("[2,5]"), std::string::npos);

  Measurements n = loaded();
  CaseRecord d = good_case(0);
  d.nonfinite_mismatches = 1;  // a NaN where the reference is finite, even with a small ratio
  n.cases.push_back(d);
  EXPECT_EQ(judge(n).outcome, Outcome::incorrect);

  Measurements r = loaded();
  CaseRecord e = good_case(0);
  e.tolerance_ratio = std::nan("");  // a NaN ratio never passes
  r.cases.push_back(e);
  EXPECT_EQ(judge(r).outcome, Outcome::incorrect);
}

TEST(Judge, ContractViolationOutranksIncorrect) {
  Measurements m = loaded();
  CaseRecord a = good_case(0);
  a.mismatches = 1;
  a.tolerance_ratio = 2;
  CaseRecord b = good_case(1);
  b.inputs_unchanged = false;
  m.cases = {a, b};
  Verdict v = judge(m);
  EXPECT_EQ(v.outcome, Outcome::contract_violation);
  EXPECT_EQ(v.cases_passed, 0);
  EXPECT_EQ(v.messages.size(), 2u);
}

TEST(Judge, TimingInvalid) {
  Measurements few = correct_and_timed(1, 1);
  few.candidate_timing->times_ms = {1, 1};
  EXPECT_EQ(judge(few).outcome, Outcome::timing_invalid);
  Measurements zero = correct_and_timed(1, 1);
  zero.candidate_timing->times_ms[3] = 0;
  Verdict v = judge(zero);
  EXPECT_EQ(v.outcome, Outcome::timing_invalid);
  EXPECT_TRUE(v.correct);
  // Reported times that add up to more than the supervisor's wall clock cannot be true.
  Measurements forged = correct_and_timed(50, 1);
  forged.candidate_timing->wall_ms = 100;
  EXPECT_EQ(judge(forged).outcome, Outcome::timing_invalid);
}

TEST(Judge, CaseOutsideTheTasksDomainIsSkipped) {
  Measurements m = loaded();
  m.cases.push_back(good_case(0));
  CaseRecord nan_ref = good_case(1);
  nan_ref.transform = "negate";
  nan_ref.reference_finite = false;  // e.g. log of negated probabilities
  nan_ref.mismatches = 1;
  nan_ref.tolerance_ratio = 1e9;
  m.cases.push_back(nan_ref);
  Verdict v = judge(m);
  EXPECT_EQ(v.outcome, Outcome::passed);
  EXPECT_EQ(v.cases_total, 1);
  // Under the nominal inputs a non-finite reference is compared as it is (NaN must match NaN).
  m.cases[1].transform = "nominal";
  EXPECT_EQ(judge(m).outcome, Outcome::incorrect);
}

TEST(Judge, TaskFailureIsTaskError) {
  Measurements m = loaded();
  m.task_failure = "RuntimeError: shape mismatch";
  EXPECT_EQ(judge(m).outcome, Outcome::task_error);
}

TEST(Judge, MissingBaselineStillPasses) {
  Measurements m = correct_and_timed(1, 1);
  m.eager_timing->failure = Failure{"timing", "RuntimeError", "x", "", 0, 0};
  m.eager_timing->times_ms.clear();
  Verdict v = judge(m);
  EXPECT_EQ(v.outcome, Outcome::passed);
  EXPECT_FALSE(v.speedup_eager);
}

TEST(Judge, VerdictJsonRoundTrip) {
  Verdict v = judge(correct_and_timed(1.0, 2.0));
  v.task_id = "L1/19_ReLU";
  v.candidate_id = "c";
  nlohmann::json j = v;
  EXPECT_EQ(j["outcome"], "passed");
  EXPECT_EQ(j["speedup_eager"], 2.0);
  Verdict back = j.get<Verdict>();
  EXPECT_EQ(back.outcome, Outcome::passed);
  EXPECT_EQ(back.measurements.cases.size(), 3u);
  EXPECT_EQ(nlohmann::json(back), j);
}

TEST(Judge, SummarizeTimes) {
  TimeStats s = summarize_times({4, 1, 3, 2, 100});
  EXPECT_DOUBLE_EQ(s.median_ms, 3);
  EXPECT_DOUBLE_EQ(s.min_ms, 1);
  EXPECT_DOUBLE_EQ(s.iqr_ms, 2);
  EXPECT_THROW(summarize_times({}), std::exception);
}

TEST(Tolerance, PerDtype) {
  EXPECT_DOUBLE_EQ(default_tolerance("float32").atol, 1e-4);
  EXPECT_DOUBLE_EQ(default_tolerance("bfloat16").rtol, 1e-2);
  EXPECT_DOUBLE_EQ(default_tolerance("int64").atol, 1e-4);
}

}  // namespace
}  // namespace kgym
