// The judge's decisions on recorded measurements: one test per outcome and per rule.
#include <gtest/gtest.h>

#include <algorithm>

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
  c.compared = true;
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

TEST(Judge, WindowOverheadOfTheReferenceWorkerIsSubtracted) {
  // Raw windows: candidate 0.05 ms, eager 0.10 ms, of which 0.03 ms is the empty window's cost
  // (device-wide sync inside the window): net 0.02 and 0.07 ms, 3.5x rather than the raw 2x.
  Measurements m = correct_and_timed(0.05, 0.10);
  m.eager_timing->window_overhead_ms = 0.03;
  m.candidate_timing->window_overhead_ms = 0.049;  // a larger value of the candidate's is not used
  Verdict v = judge(m);
  ASSERT_EQ(v.outcome, Outcome::passed);
  EXPECT_NEAR(*v.runtime_ms, 0.02, 1e-12);
  EXPECT_NEAR(*v.ref_runtime_ms, 0.07, 1e-12);
  EXPECT_NEAR(*v.speedup_eager, 3.5, 1e-9);
  // A smaller one is, for the candidate: its subtraction is the smaller of the two processes'
  // measurements. Eager's medians lose the reference's own (larger) overhead: its windows hold
  // it (session 16: one subtraction for both left eager 0.0128 ms of window, 2.1x for eager's
  // very matmul on the H200).
  m.candidate_timing->window_overhead_ms = 0.01;
  v = judge(m);
  EXPECT_NEAR(*v.runtime_ms, 0.04, 1e-12);
  EXPECT_NEAR(*v.ref_runtime_ms, 0.07, 1e-12);
}

TEST(Judge, WindowOverheadNeverTakesAMedianBelowTheMinimum) {
  Measurements m = correct_and_timed(0.0300, 0.10);
  m.eager_timing->window_overhead_ms = 0.0305;  // more than the candidate's whole window
  Verdict v = judge(m);
  ASSERT_EQ(v.outcome, Outcome::passed);
  // Floored at a quarter of the raw window (the resolution), so the speedup stays bounded.
  EXPECT_DOUBLE_EQ(*v.runtime_ms, 0.0300 * JudgeOptions{}.net_floor_fraction);
  EXPECT_NEAR(*v.speedup_eager, (0.10 - 0.0305) / 0.0075, 1e-9);
  // ... and the roofline floor applies to the net time: a floor of 0.02 ms rejects it.
  m.roofline = RooflineRecord{};
  m.roofline->applied = true;
  m.roofline->floor_ms = 0.02;
  EXPECT_EQ(judge(m).outcome, Outcome::timing_invalid);
}

// H200, generated conv_epilogue task: the float32 reference (cuDNN, TF32 by default) is off by
// 9.6e-4 from float64, the honest fp32 solution by 3e-6; against the reference 31% of the elements
// were outside the tolerance. Numbers from that verdict.
CaseRecord tf32_reference_case(double fp64_error) {
  CaseRecord c = good_case(0);
  c.numel = 1498176;
  c.mismatches = 464966;
  c.mismatches_outside_fp64 = 0;  // every mismatch where the float64 cross-check looked
  c.fp64_atol_ratio = fp64_error / c.atol;
  c.max_abs_error = 9.62e-4;
  c.tolerance_ratio = 17.3;
  c.atol = 4.02584e-05;
  c.fp64_checked = true;
  c.fp64_error = fp64_error;
  c.fp64_reference_error = 9.6168e-4;
  c.fp64_scale = 0.4;
  c.dtype_eps = 1.1920928955078125e-07;
  return c;
}

TEST(Judge, OutputExactToFloat64PassesWhenTheReferenceIsTheInexactOne) {
  Measurements m = loaded();
  m.cases.push_back(tf32_reference_case(3.0078e-06));
  EXPECT_TRUE(judge(m).correct);
}

TEST(Judge, OutputFarFromBothReferencesStaysIncorrect) {
  Measurements m = loaded();
  m.cases.push_back(tf32_reference_case(2e-4));  // above the case's atol against float64 too
  Verdict v = judge(m);
  EXPECT_EQ(v.outcome, Outcome::incorrect);
  Measurements n = loaded();
  CaseRecord c = tf32_reference_case(3e-6);
  c.fp64_checked = false;  // no float64 reference (too large): the task-dtype reference decides
  n.cases.push_back(c);
  EXPECT_EQ(judge(n).outcome, Outcome::incorrect);
}

// Red team rt16 (CPU): log(randn) with NaN replaced by 0. Half the elements are wrong, all where
// the reference is NaN, which the float64 cross-check skips, so its error (4.4e-7) was within
// atol and the float64 rule excused every mismatch: passed. A mismatch outside the cross-check
// (or a reference that did not say) now stands.
TEST(Judge, TheFloat64RuleDoesNotExcuseMismatchesItDidNotCheck) {
  Measurements m = loaded();
  CaseRecord c = tf32_reference_case(4.4e-7);
  c.mismatches = 32593;
  c.mismatches_outside_fp64 = 32593;
  m.cases.push_back(c);
  EXPECT_EQ(judge(m).outcome, Outcome::incorrect);
  Measurements one = loaded();
  c.mismatches_outside_fp64 = 1;  // one is enough
  one.cases.push_back(c);
  EXPECT_EQ(judge(one).outcome, Outcome::incorrect);
  Measurements unknown = loaded();
  c.mismatches_outside_fp64 = -1;  // not reported
  unknown.cases.push_back(c);
  EXPECT_EQ(judge(unknown).outcome, Outcome::incorrect);
}

// Red team rt17 (CPU): a task returning (2x, softmax(20x)); the candidate adds 6e-6 to every
// softmax weight. The case's atol was the first output's (2e-4), so the worst output's float64
// error (6e-6) looked small beside it and the rule excused the softmax's mismatches: passed.
TEST(Judge, TheFloat64RuleTakesEachOutputsOwnTolerance) {
  Measurements m = loaded();
  CaseRecord c = tf32_reference_case(6e-6);
  c.atol = 2e-4;              // output 0's
  c.fp64_atol_ratio = 4.1;    // the softmax: 6e-6 against its own 1.45e-6
  m.cases.push_back(c);
  EXPECT_EQ(judge(m).outcome, Outcome::incorrect);
  Measurements unknown = loaded();
  c.fp64_atol_ratio = -1;     // not reported: the rule does not apply
  unknown.cases.push_back(c);
  EXPECT_EQ(judge(unknown).outcome, Outcome::incorrect);
}

TEST(Judge, SupervisorWallClockBoundsAShrunkTimer) {
  // Red team: a self-restoring patch of the in-process timer reported 1 us per call; 100
  // synchronised calls took 30 ms on the supervisor's clock. The wall-check factor alone lets it
  // through (CPU: 0.001 * 8 + 1 ms > 0.3 ms), so the runtime must come from the wall clock.
  Measurements m = correct_and_timed(0.001, 0.25);
  m.candidate_timing->method = "monotonic_clock";
  m.eager_timing->method = "monotonic_clock";
  m.candidate_timing->wall_check_calls = 100;
  m.candidate_timing->wall_check_ms = 33.0;
  Verdict v = judge(m);
  ASSERT_EQ(v.outcome, Outcome::passed);
  EXPECT_NEAR(*v.runtime_ms, 0.33, 1e-9);  // CPU: the wall clock per call itself
  EXPECT_LT(*v.speedup_eager, 1.0);
}

TEST(Judge, SyntaxErrorIsBuildFailed) {
  Measurements m;
  m.load.failure = Failure{"parse", "SyntaxError", "line 3, column 5: invalid syntax", "", 0, 0};
  Verdict v = judge(m);
  EXPECT_EQ(v.outcome, Outcome::build_failed);
  EXPECT_NE(v.messages.front().find("line 3"), std::string::npos);
}

// The compiler's own error line leads the message (fresh-user run, session 17: the progress line
// was cut inside the ninja command line before it).
TEST(Judge, BuildFailureLeadsWithTheCompilersErrorLine) {
  Measurements m;
  m.load.parsed = m.load.model_new_defined = true;
  m.load.failure = Failure{"import", "RuntimeError",
                           "Error building extension 'bad': [1/2] c++ -MMD -MF main.o.d -DTORCH_EXTENSION_NAME=bad -O3 -c "
                           "/root/.cache/kgym/build/ab/torch_extensions/bad/main.cpp -o main.o\n"
                           "/root/.cache/kgym/build/ab/torch_extensions/bad/main.cpp:15:35: error: expected ';' before '}' token\n"
                           "ninja: build stopped: subcommand failed.",
                           "", 0, 0};
  Verdict v = judge(m);
  EXPECT_EQ(v.outcome, Outcome::build_failed);
  EXPECT_EQ(v.messages.front().rfind("build failed: main.cpp:15:35: error: expected ';' before '}' token", 0), 0u)
      << v.messages.front();
  // nvcc's form, found in the log when the message has none
  m.load.failure->message = "Error building extension 'bad'";
  m.load.failure->traceback = "x\n/tmp/e/cuda.cu(22): error: too few arguments in function call\n";
  v = judge(m);
  EXPECT_NE(v.messages.front().find("cuda.cu(22): error: too few arguments"), std::string::npos) << v.messages.front();
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

// --- Run-time integrity (issue 4) ---------------------------------------------------------

TEST(JudgeIntegrity, TamperAtImportIsContractViolation) {
  Measurements m = correct_and_timed(1, 2);
  m.load.tampered = {"torch.cuda.Event.elapsed_time"};
  Verdict v = judge(m);
  EXPECT_EQ(v.outcome, Outcome::contract_violation);
  EXPECT_EQ(v.gate, Gate::build);
  EXPECT_NE(v.messages.front().find("[tamper]"), std::string::npos);
}

TEST(JudgeIntegrity, CpuTimeAboveTheBaselinesCoresIsTimingInvalid) {
  Measurements m = correct_and_timed(1, 2);
  m.candidate_timing->wall_check_cores = 1;
  m.candidate_timing->wall_check_cpu_wall_ms = 255;
  m.candidate_timing->wall_check_cpu_ms = 270;  // within 1.1 x 255 + 20
  EXPECT_EQ(judge(m).outcome, Outcome::passed);
  m.candidate_timing->wall_check_cpu_ms = 350;  // a forked helper on a second core
  Verdict v = judge(m);
  EXPECT_EQ(v.outcome, Outcome::timing_invalid);
  EXPECT_NE(v.messages.front().find("[cpu]"), std::string::npos);
  m.candidate_timing->wall_check_cores = 2;  // KGYM_CPU_THREADS=2: the baselines use two
  EXPECT_EQ(judge(m).outcome, Outcome::passed);
}

TEST(JudgeIntegrity, AnotherProcessHoldingTheGpuIsContractViolation) {
  Measurements m = correct_and_timed(1, 2);
  EXPECT_EQ(judge(m).outcome, Outcome::passed);
  m.candidate_timing->foreign_gpu_processes = {"pid 4242 (python3) holds /dev/nvidia0"};
  Verdict v = judge(m);
  EXPECT_EQ(v.outcome, Outcome::contract_violation);
  EXPECT_EQ(v.gate, Gate::timing);
  EXPECT_NE(v.messages.front().find("[process]"), std::string::npos);
  EXPECT_NE(v.messages.front().find("pid 4242"), std::string::npos);
  // It survives the verdict file (to_json / from_json).
  nlohmann::json j = m;
  Measurements back = j.get<Measurements>();
  EXPECT_EQ(judge(back).outcome, Outcome::contract_violation);
}

TEST(JudgeIntegrity, CaseContractObservations) {
  Measurements thread = correct_and_timed(1, 2);
  thread.cases[1].threads_leaked = true;
  thread.cases[1].thread_detail = "1 Python thread(s) still running after the call returned";
  Verdict v = judge(thread);
  EXPECT_EQ(v.outcome, Outcome::contract_violation);
  EXPECT_NE(v.messages.front().find("Python thread"), std::string::npos);
  Measurements unstable = correct_and_timed(1, 2);
  unstable.cases[0].output_stable = false;
  EXPECT_EQ(judge(unstable).outcome, Outcome::contract_violation);
  Measurements tampered = correct_and_timed(1, 2);
  tampered.cases[2].tampered = {"precision flag cuda.matmul.allow_tf32=True (was False)"};
  EXPECT_EQ(judge(tampered).outcome, Outcome::contract_violation);
}

TEST(JudgeIntegrity, RerunDisagreementIsIncorrect) {
  Measurements m = correct_and_timed(1, 2);
  m.cases[0].rerun_nonfinite_mismatches = 12;
  Verdict v = judge(m);
  EXPECT_EQ(v.outcome, Outcome::incorrect);
  EXPECT_NE(v.messages.front().find("uninitialised"), std::string::npos);
  Measurements drift = correct_and_timed(1, 2);
  drift.cases[0].rerun_tolerance_ratio = 0.5;  // nondeterministic but inside tolerance: fine
  EXPECT_EQ(judge(drift).outcome, Outcome::passed);
  drift.cases[0].rerun_tolerance_ratio = 3;
  EXPECT_EQ(judge(drift).outcome, Outcome::incorrect);
}

TEST(JudgeIntegrity, Float64CrossCheckCatchesReducedPrecision) {
  auto with_fp64 = [](double err, double ref_err) {
    Measurements m = correct_and_timed(1, 2);
    for (auto& c : m.cases) {
      c.fp64_checked = true;
      c.fp64_error = err;
      c.fp64_reference_error = ref_err;
      c.fp64_scale = 10;
      c.dtype_eps = 1.1920928955078125e-07;
    }
    return m;
  };
  // A GEMM: the fp32 reference's own error 2e-5; an honest kernel with another summation order
  // has a few times that; fp16/TF32 has ~100x.
  EXPECT_EQ(judge(with_fp64(8e-5, 2e-5)).outcome, Outcome::passed);
  Verdict v = judge(with_fp64(3e-3, 2e-5));
  EXPECT_EQ(v.outcome, Outcome::incorrect);
  EXPECT_NE(v.messages.front().find("float64"), std::string::npos);
  // An exact op (ReLU), or a reference exact by accumulating in double (ATen's CPU cumsum): the
  // floor 256 eps * max|ref64| applies. An honest float32 running sum over 32,768 elements is off
  // by about 84 eps * max|ref64| (red team rt35: rejected under the old floor of 64 eps); a
  // float16 rounding of the output by about 2048 eps.
  EXPECT_EQ(judge(with_fp64(5e-5, 0)).outcome, Outcome::passed);
  EXPECT_EQ(judge(with_fp64(84 * 1.1920928955078125e-07 * 10, 0)).outcome, Outcome::passed);
  EXPECT_EQ(judge(with_fp64(2048 * 1.1920928955078125e-07 * 10, 0)).outcome, Outcome::incorrect);
  EXPECT_EQ(judge(with_fp64(4e-4, 0)).outcome, Outcome::incorrect);
}

TEST(JudgeIntegrity, OtherShapeCaseIsLabelled) {
  Measurements m = correct_and_timed(1, 2);
  CaseRecord c = good_case(3);
  c.shape_variant = "other";
  c.mismatches = 7;
  c.tolerance_ratio = 40;
  m.cases.push_back(c);
  Verdict v = judge(m);
  EXPECT_EQ(v.outcome, Outcome::incorrect);
  EXPECT_NE(v.messages.front().find("other sizes"), std::string::npos);
}

TEST(JudgeIntegrity, RecheckedTimedOutputMustBeRight) {
  Measurements m = correct_and_timed(0.01, 2);
  CaseRecord r = good_case(4);
  r.transform = "timed";
  m.candidate_timing->rechecks.push_back(r);
  EXPECT_EQ(judge(m).outcome, Outcome::passed);
  m.candidate_timing->rechecks.back().mismatches = 100;
  m.candidate_timing->rechecks.back().tolerance_ratio = 1e3;
  Verdict v = judge(m);
  EXPECT_EQ(v.outcome, Outcome::incorrect);
  EXPECT_EQ(v.gate, Gate::timing);
  EXPECT_NE(v.messages.front().find("timed call 4"), std::string::npos);
  EXPECT_TRUE(v.correct);  // the correctness cases passed; a timed output did not
}

TEST(JudgeIntegrity, EveryTimedCallsSpotCheckMustHold) {
  // The spot check (docs/timing.md): sampled elements of every timed output against eager's.
  Measurements m = correct_and_timed(0.01, 2);
  m.candidate_timing->spot_checked_calls = 20;
  EXPECT_EQ(judge(m).outcome, Outcome::passed);
  m.candidate_timing->spot_failed_calls = {7, 13};
  m.candidate_timing->spot_detail = "timed call 7: 120 of 256 sampled elements wrong";
  Verdict v = judge(m);
  EXPECT_EQ(v.outcome, Outcome::incorrect);
  EXPECT_EQ(v.gate, Gate::timing);
  EXPECT_NE(v.messages.front().find("2 of 20 timed calls"), std::string::npos) << v.messages.front();
  EXPECT_NE(v.messages.front().find("timed call 7"), std::string::npos);
  EXPECT_TRUE(v.correct);
  Measurements unread = correct_and_timed(0.01, 2);
  unread.candidate_timing->spot_unreadable = true;
  unread.candidate_timing->spot_detail = "no spot samples in the reply";
  EXPECT_EQ(judge(unread).outcome, Outcome::contract_violation);
  // Recorded and read back with the verdict.
  nlohmann::json j = *m.candidate_timing;
  TimingRecord back = j.get<TimingRecord>();
  EXPECT_EQ(back.spot_failed_calls, (std::vector<int>{7, 13}));
  EXPECT_EQ(back.spot_checked_calls, 20);
}

TEST(JudgeIntegrity, TimedCallsLeavingThreadsOrPersistingL2) {
  Measurements threads = correct_and_timed(1, 2);
  threads.candidate_timing->threads_leaked = 3;
  EXPECT_EQ(judge(threads).outcome, Outcome::contract_violation);
  Measurements l2 = correct_and_timed(1, 2);
  l2.candidate_timing->l2_persist_violations = 10;
  EXPECT_EQ(judge(l2).outcome, Outcome::timing_invalid);
  Measurements tamper = correct_and_timed(1, 2);
  tamper.candidate_timing->tampered = {"kgym_worker.common.time_calls"};
  EXPECT_EQ(judge(tamper).outcome, Outcome::contract_violation);
}

TEST(JudgeIntegrity, WallClockFloorOnTheGpu) {
  // Events say 0.01 ms per call; 100 back-to-back calls took 500 ms on the supervisor's clock
  // (a timer patch, or GPU work on a side stream under the launch cover): the runtime is the
  // wall clock per call / 1.1, never the event time, and the verdict says why.
  Measurements forged = correct_and_timed(0.01, 2);
  forged.candidate_timing->wall_check_calls = 100;
  forged.candidate_timing->wall_check_ms = 500;
  Verdict v = judge(forged);
  ASSERT_EQ(v.outcome, Outcome::passed);
  EXPECT_NEAR(*v.runtime_ms, 5.0 / 1.1, 1e-9);
  EXPECT_NEAR(*v.speedup_eager, 2.0 / (5.0 / 1.1), 1e-9);
  bool said = false;
  for (const auto& msg : v.messages) said = said || msg.find("wall-clock floor") != std::string::npos;
  EXPECT_TRUE(said);
  // Honest and GPU-bound: back-to-back calls on warm caches take a little less than the cold
  // event window; the event time stands.
  Measurements honest = correct_and_timed(1.0, 2);
  honest.candidate_timing->wall_check_calls = 50;
  honest.candidate_timing->wall_check_ms = 45;
  EXPECT_EQ(judge(honest).outcome, Outcome::passed);
  EXPECT_DOUBLE_EQ(*judge(honest).runtime_ms, 1.0);
}

TEST(JudgeIntegrity, BaselinesGetTheSameWallClockFloor) {
  // A host-bound candidate (GPU 0.02 ms, 0.06 ms per call back to back) against a host-bound
  // eager baseline (GPU 0.03 ms, 0.12 ms per call): both floors apply (0.06 and 0.12 ms), not
  // the candidate's alone (0.5x). Their 2x is above the event times' 1.5x, and a floor never
  // raises a speedup (session 16): 1.5x, eager's time on the candidate's basis.
  Measurements m = correct_and_timed(0.02, 0.03);
  m.candidate_timing->wall_check_calls = 100;
  m.candidate_timing->wall_check_ms = 6.6;
  m.eager_timing->wall_check_calls = 50;
  m.eager_timing->wall_check_ms = 6.6;
  Verdict v = judge(m);
  ASSERT_EQ(v.outcome, Outcome::passed);
  EXPECT_NEAR(*v.runtime_ms, 0.06, 1e-9);
  EXPECT_NEAR(*v.speedup_eager, 1.5, 1e-9);
  EXPECT_NEAR(*v.ref_runtime_ms, 0.09, 1e-9);
  bool said = false;
  for (const auto& msg : v.messages) said = said || msg.find("capped at the event times' 1.5x") != std::string::npos;
  EXPECT_TRUE(said);
  // A floor below the event times' speedup stands (it only ever lowers one): eager's floor 0.07.
  m.eager_timing->wall_check_ms = 50 * 0.077;
  v = judge(m);
  EXPECT_NEAR(*v.speedup_eager, 0.07 / 0.06, 1e-9);
}

TEST(JudgeIntegrity, AFloorNeverRaisesASpeedupAboveTheEventTimes) {
  // H200, session 16: eager's very matmul with a forked busy child (busy_child_a): its events
  // 0.0255 ms stood (its floor 0.028 / 1.1), eager's floor came out at 0.0675 ms per call
  // against its 0.025 ms of events and set eager's time: 2.41x. By the event times, 0.98x.
  Measurements m = correct_and_timed(0.0255, 0.025);
  m.candidate_timing->wall_check_calls = 2000;
  m.candidate_timing->wall_check_ms = 2000 * 0.028;
  m.eager_timing->wall_check_calls = 2000;
  m.eager_timing->wall_check_ms = 2000 * 0.0675 * 1.1;
  Verdict v = judge(m);
  ASSERT_EQ(v.outcome, Outcome::passed);
  EXPECT_NEAR(*v.runtime_ms, 0.0255, 1e-9);
  EXPECT_NEAR(*v.speedup_eager, 0.025 / 0.0255, 1e-9);
  // A timer that lies (events 0.001 ms) is still taken by its floor: the events' bound is far
  // above and the floors decide.
  m.candidate_timing->times_ms.assign(10, 0.001);
  m.eager_timing->wall_check_ms = 2000 * 0.028;
  v = judge(m);
  ASSERT_EQ(v.outcome, Outcome::passed);
  EXPECT_NEAR(*v.runtime_ms, 0.028 / 1.1, 1e-9);
  EXPECT_LE(*v.speedup_eager, 1.0 + 1e-9);
}

TEST(JudgeIntegrity, ACandidateTakenByItsFloorIsComparedWithTheBaselinesFloor) {
  // rt9_tick_hide_mm on the H200 (session 14): events 0.006 ms (the matmul ran outside the
  // window), 947 back-to-back calls 0.02636 ms each: runtime 0.02396 ms (its floor). Eager's
  // events 0.0266 ms, its own back-to-back calls 0.0264 ms (floor 0.024). Each side's larger gave
  // 1.11x for eager's very operator; one basis gives 1.01x (eager's side is never below its
  // events over the same factor: its floor, 1% under them, is noise).
  Measurements m = correct_and_timed(0.006, 0.0266);
  m.candidate_timing->wall_check_calls = 947;
  m.candidate_timing->wall_check_ms = 947 * 0.02636;
  m.eager_timing->wall_check_calls = 947;
  m.eager_timing->wall_check_ms = 947 * 0.0264;
  Verdict v = judge(m);
  ASSERT_EQ(v.outcome, Outcome::passed);
  EXPECT_NEAR(*v.runtime_ms, 0.02636 / 1.1, 1e-9);
  EXPECT_NEAR(*v.ref_runtime_ms, 0.0266 / 1.1, 1e-9);
  EXPECT_NEAR(*v.speedup_eager, 0.0266 / 0.02636, 1e-9);
  bool said = false;
  for (const auto& msg : v.messages) said = said || msg.find("eager taken by its wall-clock floor too") != std::string::npos;
  EXPECT_TRUE(said);
  // A candidate whose events stand (GPU-bound) keeps each side's larger: eager's events here.
  m.candidate_timing->times_ms.assign(10, 0.02);
  m.candidate_timing->wall_check_ms = 947 * 0.021;
  v = judge(m);
  ASSERT_EQ(v.outcome, Outcome::passed);
  EXPECT_NEAR(*v.runtime_ms, 0.02, 1e-9);
  EXPECT_NEAR(*v.ref_runtime_ms, 0.0266, 1e-9);
}

TEST(JudgeIntegrity, ABaselineTakenByItsFloorIsNeverBelowItsEvents) {
  // H200, session 16 (sigstop_a, eager's very matmul): eager's own loop read 0.0003 ms per call
  // (noise), its events 0.0122 ms; the candidate's events 0.0157 ms, its floor 0.0465 ms. Taken
  // by that floor, eager made the candidate 0.007x; back-to-back calls cannot beat their GPU
  // time, so eager's side is its events over the floor factor.
  Measurements m = correct_and_timed(0.0157, 0.0122);
  m.candidate_timing->wall_check_calls = 613;
  m.candidate_timing->wall_check_ms = 613 * 0.0465;
  m.eager_timing->wall_check_calls = 100;
  m.eager_timing->wall_check_ms = 100 * 0.0003;
  Verdict v = judge(m);
  ASSERT_EQ(v.outcome, Outcome::passed);
  EXPECT_NEAR(*v.runtime_ms, 0.0465 / 1.1, 1e-9);
  EXPECT_NEAR(*v.ref_runtime_ms, 0.0122 / 1.1, 1e-9);
  EXPECT_NEAR(*v.speedup_eager, 0.0122 / 0.0465, 1e-9);
}

TEST(JudgeIntegrity, AFloorBoundCandidateGainsNothingFromTheFloorFactorOverAGpuBoundBaseline) {
  // Full size: eager GPU-bound (events 3.0 ms; its own loop 3.05 ms per call, kept as its floor
  // though the supervisor's requests were skipped: runner::baseline_floor_can_bind). A candidate
  // at eager's true speed whose events read 0.5 ms (a timer that lies): its floor (3.05 / 1.1)
  // sets its runtime. Against eager's events it read 1.1x; against eager's floor, 1.0x.
  Measurements m = correct_and_timed(0.5, 3.0);
  m.candidate_timing->wall_check_calls = 5;
  m.candidate_timing->wall_check_ms = 5 * 3.05;
  m.eager_timing->wall_check_calls = 7;
  m.eager_timing->wall_check_ms = 7 * 3.05;
  Verdict v = judge(m);
  ASSERT_EQ(v.outcome, Outcome::passed);
  EXPECT_NEAR(*v.speedup_eager, 1.0, 1e-9);
  EXPECT_NEAR(*v.runtime_ms, 3.05 / 1.1, 1e-9);
}

TEST(JudgeIntegrity, CpuBaselinesTakeTheirTrustedTimerAsItIs) {
  // CPU: the reference's synchronous timer is trusted; a noisy wall-clock difference of its own
  // (6 ms per call here against a 2 ms timer) must not inflate the baseline and so the speedup.
  Measurements m = correct_and_timed(1.0, 2.0);
  m.candidate_timing->method = "monotonic_clock";
  m.eager_timing->method = "monotonic_clock";
  m.eager_timing->wall_check_calls = 10;
  m.eager_timing->wall_check_ms = 60;
  Verdict v = judge(m);
  ASSERT_EQ(v.outcome, Outcome::passed);
  EXPECT_NEAR(*v.ref_runtime_ms, 2.0, 1e-9);
  EXPECT_NEAR(*v.speedup_eager, 2.0, 1e-9);
}

TEST(JudgeIntegrity, WallClockCrossCheckOnTheCpu) {
  // CPU: a loaded machine slows the wall-clock calls (x3 here); only a gross gap counts.
  Measurements cpu = correct_and_timed(1.0, 2);
  cpu.candidate_timing->method = "monotonic_clock";
  cpu.eager_timing->method = "monotonic_clock";
  cpu.candidate_timing->wall_check_calls = 50;
  cpu.candidate_timing->wall_check_ms = 150;
  EXPECT_EQ(judge(cpu).outcome, Outcome::passed);
  cpu.candidate_timing->times_ms.assign(10, 0.01);
  Verdict v = judge(cpu);
  EXPECT_EQ(v.outcome, Outcome::timing_invalid);
  EXPECT_NE(v.messages.front().find("wall clock"), std::string::npos);
}

TEST(JudgeIntegrity, CpuTimerFarBelowTheWallCheckGetsItsPessimisticFigure) {
  // CPU: a timer that reads 0.001 ms against a wall check of 0.05 ms per call is not believed; the
  // runtime is the check's pessimistic figure (0.08 ms per call), not its median (0.05). A
  // consistent timer (0.04 ms) keeps the median floor.
  Measurements m = correct_and_timed(0.001, 0.1);
  m.candidate_timing->method = "monotonic_clock";
  m.eager_timing->method = "monotonic_clock";
  m.candidate_timing->wall_check_calls = 100;
  m.candidate_timing->wall_check_ms = 5.0;
  m.candidate_timing->wall_check_upper_ms = 8.0;
  Verdict v = judge(m);
  ASSERT_EQ(v.outcome, Outcome::passed);
  EXPECT_NEAR(*v.runtime_ms, 0.08, 1e-9);
  EXPECT_NEAR(*v.speedup_eager, 1.25, 1e-9);
  EXPECT_TRUE(std::any_of(v.messages.begin(), v.messages.end(),
                          [](const std::string& s) { return s.find("not believed") != std::string::npos; }));
  m.candidate_timing->times_ms.assign(10, 0.04);
  v = judge(m);
  ASSERT_EQ(v.outcome, Outcome::passed);
  EXPECT_NEAR(*v.runtime_ms, 0.05, 1e-9);
  // The GPU keeps its own rule (host-bound calls run several times their event time).
  m.candidate_timing->method = "cuda_events";
  m.candidate_timing->times_ms.assign(10, 0.001);
  m.candidate_timing->wall_check_upper_ms = 0;
  v = judge(m);
  ASSERT_EQ(v.outcome, Outcome::passed);
  EXPECT_NEAR(*v.runtime_ms, 0.05 / 1.1, 1e-9);
}

TEST(JudgeIntegrity, ProcessIgnoringSigchldIsAContractViolation) {
  // CPU with /proc accounting: a process whose children the kernel reaps hides their CPU time.
  Measurements m = correct_and_timed(0.5, 0.5);
  m.candidate_timing->method = "monotonic_clock";
  m.candidate_timing->unreaping_processes = {"pid 7 (python3) ignores SIGCHLD"};
  Verdict v = judge(m);
  EXPECT_EQ(v.outcome, Outcome::contract_violation);
  EXPECT_NE(v.messages.front().find("[reap]"), std::string::npos);
}

TEST(JudgeIntegrity, RooflineFloor) {
  Measurements m = correct_and_timed(0.001, 2);
  RooflineRecord roof;
  roof.bytes = 1LL << 30;
  roof.bandwidth_gbps = 4000;
  roof.peak_tflops = 700;
  roof.floor_ms = 0.268;
  roof.applied = true;
  m.roofline = roof;
  Verdict v = judge(m);
  EXPECT_EQ(v.outcome, Outcome::timing_invalid);
  EXPECT_NE(v.messages.front().find("roofline"), std::string::npos);
  m.candidate_timing->times_ms.assign(10, 0.25);  // below the floor but within the safety factor
  EXPECT_EQ(judge(m).outcome, Outcome::passed);
  m.roofline->applied = false;  // CPU: recorded only
  m.candidate_timing->times_ms.assign(10, 0.001);
  EXPECT_EQ(judge(m).outcome, Outcome::passed);
}

TEST(JudgeIntegrity, BaselinePrecisionFlagsMustMatch) {
  Measurements m = correct_and_timed(1, 2);
  m.candidate_timing->precision_flags = {{"cuda.matmul.allow_tf32", "False"}};
  m.eager_timing->precision_flags = {{"cuda.matmul.allow_tf32", "True"}};
  EXPECT_EQ(judge(m).outcome, Outcome::timing_invalid);
  m.eager_timing->precision_flags = m.candidate_timing->precision_flags;
  EXPECT_EQ(judge(m).outcome, Outcome::passed);
}

TEST(JudgeIntegrity, LaunchGatePerProfile) {
  auto traced = [](double own, double lib, int outside, int graphs) {
    Measurements m = correct_and_timed(1, 2);
    LaunchRecord l;
    l.traced = true;
    l.calls = 3;
    l.own_ms = own;
    l.library_ms = lib;
    l.outside_window = outside;
    l.graph_launches = graphs;
    m.launch = l;
    return m;
  };
  JudgeOptions strict, hybrid, off;
  strict.policy_profile = policy::Profile::strict;
  hybrid.policy_profile = policy::Profile::hybrid;
  off.policy_profile = policy::Profile::off;
  // Decoy: the custom kernel never ran, all time in ATen.
  Verdict decoy = judge(traced(0, 1.0, 0, 0), strict);
  EXPECT_EQ(decoy.outcome, Outcome::policy_rejected);
  EXPECT_EQ(decoy.gate, Gate::launch);
  EXPECT_NE(decoy.messages.front().find("decoy"), std::string::npos);
  ASSERT_EQ(decoy.policy_findings.size(), 1u);
  EXPECT_EQ(decoy.policy_findings[0]["rule_id"], "launch_gate");
  EXPECT_EQ(decoy.policy_findings[0]["severity"], "reject");
  EXPECT_TRUE(judge(traced(1.0, 0, 2, 0), off).policy_findings.empty());  // timing_invalid: not a policy finding
  EXPECT_EQ(judge(traced(0, 1.0, 0, 0), hybrid).outcome, Outcome::policy_rejected);
  EXPECT_EQ(judge(traced(0, 1.0, 0, 0), off).outcome, Outcome::passed);  // recorded only
  // Library GEMM with a small custom epilogue: hybrid yes, strict no.
  EXPECT_EQ(judge(traced(0.05, 1.0, 0, 0), hybrid).outcome, Outcome::passed);
  EXPECT_EQ(judge(traced(0.05, 1.0, 0, 0), strict).outcome, Outcome::policy_rejected);
  EXPECT_EQ(judge(traced(1.0, 0.05, 0, 0), strict).outcome, Outcome::passed);
  // Graph replay under strict; work outside the window under every profile.
  EXPECT_EQ(judge(traced(1.0, 0, 0, 2), strict).outcome, Outcome::policy_rejected);
  EXPECT_EQ(judge(traced(1.0, 0, 0, 2), off).outcome, Outcome::passed);
  EXPECT_EQ(judge(traced(1.0, 0, 2, 0), off).outcome, Outcome::timing_invalid);
  // CPU: no trace, nothing decided.
  Measurements cpu = correct_and_timed(1, 2);
  cpu.launch = LaunchRecord{};
  cpu.launch->skipped = "cpu: no kernel trace";
  EXPECT_EQ(judge(cpu, strict).outcome, Outcome::passed);
}

TEST(JudgeIntegrity, MeasurementsRoundTripNewFields) {
  Measurements m = correct_and_timed(1, 2);
  m.cases[0].fp64_checked = true;
  m.cases[0].fp64_error = 1e-6;
  m.cases[0].trivial_passing = {"zeros"};
  m.cases[0].shape_variant = "other";
  m.candidate_timing->rechecks.push_back(good_case(2));
  m.candidate_timing->precision_flags = {{"a", "b"}};
  m.candidate_timing->wall_check_calls = 7;
  m.launch = LaunchRecord{};
  m.launch->traced = true;
  m.launch->kernels = {nlohmann::json{{"name", "k"}}};
  m.roofline = RooflineRecord{};
  m.roofline->floor_ms = 0.5;
  m.audit.trivial_passing = {"zeros"};
  m.audit.other_shape = "skipped: x";
  m.phase_ms = {{"cases", 12.5}, {"trace", 300.0}};
  nlohmann::json j = m;
  EXPECT_DOUBLE_EQ(j.at("phase_ms").at("trace").get<double>(), 300.0);
  Measurements back = j.get<Measurements>();
  EXPECT_DOUBLE_EQ(back.phase_ms.at("cases"), 12.5);
  EXPECT_EQ(nlohmann::json(back), j);
  EXPECT_EQ(back.cases[0].trivial_passing, std::vector<std::string>{"zeros"});
  EXPECT_EQ(back.candidate_timing->rechecks.size(), 1u);
  EXPECT_DOUBLE_EQ(back.roofline->floor_ms, 0.5);
  EXPECT_EQ(back.audit.other_shape, "skipped: x");
}

TEST(Judge, CaseWithoutComparisonNeverPasses) {
  // A candidate reply that carries no output (forged on the result channel) leaves every error
  // statistic at its zero default: without the comparison flag it would look like a perfect case.
  Measurements m = loaded();
  CaseRecord forged;
  forged.index = 0;
  m.cases.push_back(forged);
  Verdict v = judge(m);
  EXPECT_EQ(v.outcome, Outcome::runtime_error);
  EXPECT_EQ(v.cases_passed, 0);
  EXPECT_FALSE(v.correct);
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


// The engine's spot check trusts the rechecked calls that hold as the judge decides them.
TEST(JudgeIntegrity, RecheckHoldsAsTheJudgeDecides) {
  CaseRecord r = good_case(4);
  r.transform = "timed";
  EXPECT_TRUE(recheck_holds(r));
  CaseRecord wrong = r;
  wrong.mismatches = 100;
  wrong.tolerance_ratio = 40;
  EXPECT_FALSE(recheck_holds(wrong));
  CaseRecord dtype = r;
  dtype.dtype_matches = false;
  EXPECT_FALSE(recheck_holds(dtype));
  CaseRecord subclass = r;
  subclass.output_plain_tensor = false;
  EXPECT_FALSE(recheck_holds(subclass));
  // outside the tolerance but within atol of float64 everywhere (a TF32 reference): holds
  CaseRecord tf32 = wrong;
  tf32.fp64_checked = true;
  tf32.mismatches_outside_fp64 = 0;
  tf32.fp64_atol_ratio = 0.5;
  EXPECT_TRUE(recheck_holds(tf32));
}

}  // namespace
}  // namespace kgym

namespace kgym {
namespace {

// CPU measurements as the engine records them when eager went through the candidate's wall check
// (issue 33): timer times over two rounds, and each side's paired wall-check differences between
// the same calibrations.
Measurements cpu_like_for_like(double cand_ms, double ref_ms, std::vector<double> cand_pairs,
                               std::vector<double> ref_pairs, double resolution_ms = 0.2) {
  Measurements m = correct_and_timed(cand_ms, ref_ms);
  auto& c = *m.candidate_timing;
  auto& e = *m.eager_timing;
  for (TimingRecord* r : {&c, &e}) {
    r->method = "monotonic_clock";
    // two rounds of 10 calls, a little spread so that the bootstrap has something to resample
    const double base = r->times_ms.front();
    r->times_ms.clear();
    for (int i = 0; i < 20; ++i) r->times_ms.push_back(base * (1.0 + 0.01 * ((i * 7) % 5 - 2)));
    r->round_calls = {10, 10};
    r->wall_check_calls = 100;
    r->wall_check_spread_ms = resolution_ms;
  }
  c.wall_check_paired_ms = std::move(cand_pairs);
  e.wall_check_paired_ms = std::move(ref_pairs);
  auto med = [](std::vector<double> x) {
    std::sort(x.begin(), x.end());
    return 0.5 * (x[x.size() / 2 - 1] + x[x.size() / 2]);
  };
  c.wall_check_ms = med(c.wall_check_paired_ms);
  e.wall_check_ms = med(e.wall_check_paired_ms);
  // The check overstates a small call (the Python loop, copies, hashing): 5x here, on both sides.
  c.wall_check_upper_ms = *std::max_element(c.wall_check_paired_ms.begin(), c.wall_check_paired_ms.end());
  e.wall_check_upper_ms = *std::max_element(e.wall_check_paired_ms.begin(), e.wall_check_paired_ms.end());
  return m;
}

TEST(JudgeLikeForLike, TheSameOperatorReadsOneOnTheCpu) {
  // The reference as its own candidate at a size where the wall check overstates the call 5x
  // (0.05 ms per call against a 0.01 ms timer) on both sides: the one-sided rule took the
  // candidate's pessimistic figure (0.07 ms per call) against eager's timer (0.2x); measured alike,
  // it reads 1.0 and its interval holds 1.0.
  Measurements m = cpu_like_for_like(0.01, 0.01, {5.0, 6.0, 4.5, 5.5, 7.0, 4.8}, {5.1, 5.8, 4.4, 5.7, 6.9, 5.0});
  Verdict v = judge(m);
  ASSERT_EQ(v.outcome, Outcome::passed) << v.messages.front();
  EXPECT_NEAR(*v.speedup_eager, 1.0, 0.02);
  ASSERT_TRUE(v.speedup_eager_ci);
  EXPECT_TRUE(v.speedup_eager_ci->holds(1.0));
  EXPECT_LE(v.speedup_eager_ci->lo, *v.speedup_eager);
  EXPECT_GE(v.speedup_eager_ci->hi, *v.speedup_eager);
  EXPECT_NEAR(*v.runtime_ms, 0.01, 0.001);  // its timer, believed
  EXPECT_TRUE(std::any_of(v.messages.begin(), v.messages.end(), [](const std::string& s) {
    return s.find("no measurable change vs eager") != std::string::npos;
  }));
  // ... and the headline (the console's line) says so beside the figure.
  EXPECT_NE(v.messages.front().find("vs eager (no measurable change)"), std::string::npos) << v.messages.front();
  EXPECT_FALSE(std::any_of(v.messages.begin(), v.messages.end(), [](const std::string& s) {
    return s.find("pessimistic") != std::string::npos;
  }));
  // The verdict's JSON carries the interval as [lo, hi] and reads back.
  nlohmann::json j = v;
  ASSERT_TRUE(j["speedup_eager_ci"].is_array());
  EXPECT_DOUBLE_EQ(j["speedup_eager_ci"][0].get<double>(), v.speedup_eager_ci->lo);
  EXPECT_TRUE(j["speedup_compile_ci"].is_null());
  Verdict back = j.get<Verdict>();
  ASSERT_TRUE(back.speedup_eager_ci);
  EXPECT_DOUBLE_EQ(back.speedup_eager_ci->hi, v.speedup_eager_ci->hi);
}

TEST(JudgeLikeForLike, AShrunkTimerIsStillCaughtByTheWallCheck) {
  // A self-restoring timer patch: the candidate's timer says 0.001 ms (10x eager's), but its
  // wall-check requests take what eager's take. The timers' speedup lies above the wall check's
  // interval, so the timer is not believed and the speedup is the wall check's, about 1.
  Measurements m = cpu_like_for_like(0.001, 0.01, {5.0, 6.0, 4.5, 5.5, 7.0, 4.8}, {5.1, 5.8, 4.4, 5.7, 6.9, 5.0});
  Verdict v = judge(m);
  ASSERT_EQ(v.outcome, Outcome::passed) << v.messages.front();
  EXPECT_LT(*v.speedup_eager, 1.1);
  ASSERT_TRUE(v.speedup_eager_ci);
  EXPECT_LT(v.speedup_eager_ci->hi, 1.3);
  EXPECT_TRUE(std::any_of(v.messages.begin(), v.messages.end(), [](const std::string& s) {
    return s.find("not believed") != std::string::npos;
  }));
  // Work hidden outside the timed window shows the same way: a timer at eager's speed x2 whose
  // wall-check requests take twice eager's.
  Measurements hidden = cpu_like_for_like(0.005, 0.01, {10, 12, 9, 11, 14, 9.6}, {5.1, 5.8, 4.4, 5.7, 6.9, 5.0});
  v = judge(hidden);
  ASSERT_EQ(v.outcome, Outcome::passed) << v.messages.front();
  EXPECT_LT(*v.speedup_eager, 0.7);
}

TEST(JudgeLikeForLike, AFasterCandidateKeepsItsSpeedupAndAnIntervalAboveOne) {
  // Honest and twice as fast: the wall check agrees (half of eager's paired time), so the timers'
  // 2x stands and the interval clears 1.
  Measurements m = cpu_like_for_like(0.05, 0.1, {2.5, 3.0, 2.3, 2.8, 3.4, 2.4}, {5.1, 5.8, 4.4, 5.7, 6.9, 5.0});
  Verdict v = judge(m);
  ASSERT_EQ(v.outcome, Outcome::passed) << v.messages.front();
  EXPECT_NEAR(*v.speedup_eager, 2.0, 0.05);
  ASSERT_TRUE(v.speedup_eager_ci);
  EXPECT_GT(v.speedup_eager_ci->lo, 1.0);
  EXPECT_FALSE(v.speedup_eager_ci->holds(1.0));
}

TEST(JudgeLikeForLike, GpuVerdictsCarryTheTimersInterval) {
  Measurements m = correct_and_timed(1.0, 2.0);
  m.candidate_timing->times_ms = {1.0, 1.02, 0.98, 1.01, 0.99, 1.0, 1.03, 0.97, 1.0, 1.01};
  m.candidate_timing->round_calls = {5, 5};
  m.eager_timing->times_ms = {2.0, 2.04, 1.96, 2.02, 1.98, 2.0, 2.06, 1.94, 2.0, 2.02};
  m.eager_timing->round_calls = {5, 5};
  Verdict v = judge(m);
  ASSERT_EQ(v.outcome, Outcome::passed);
  ASSERT_TRUE(v.speedup_eager_ci);
  EXPECT_TRUE(v.speedup_eager_ci->holds(2.0));
  EXPECT_GT(v.speedup_eager_ci->lo, 1.8);
}

TEST(JudgeLikeForLike, AGpuSpeedupSetByTheFloorsCarriesTheirNoise) {
  // Both sides host-bound at x0.1 (H100): events 0.02 ms each, 500 back-to-back calls about
  // 0.06 ms each on either side, but the requests varied by 30%. The speedup comes from the
  // floors, so its interval holds their paired interval too, and that holds 1.0.
  Measurements m = correct_and_timed(0.02, 0.02);
  m.candidate_timing->times_ms = {0.02, 0.0202, 0.0198, 0.0201, 0.0199, 0.02, 0.0203, 0.0197, 0.02, 0.0201};
  m.candidate_timing->round_calls = {5, 5};
  m.eager_timing->times_ms = m.candidate_timing->times_ms;
  m.eager_timing->round_calls = {5, 5};
  m.candidate_timing->wall_check_calls = 500;
  m.candidate_timing->wall_check_ms = 500 * 0.066;
  m.candidate_timing->wall_check_paired_ms = {33.0, 22.0, 36.0};
  m.candidate_timing->wall_check_spread_ms = 4.0;
  m.eager_timing->wall_check_calls = 500;
  m.eager_timing->wall_check_ms = 500 * 0.06;
  m.eager_timing->wall_check_paired_ms = {30.0, 38.0, 24.0};
  m.eager_timing->wall_check_spread_ms = 4.0;
  Verdict v = judge(m);
  ASSERT_EQ(v.outcome, Outcome::passed);
  ASSERT_TRUE(v.speedup_eager);
  EXPECT_NEAR(*v.speedup_eager, 0.06 / 0.066, 1e-9);
  ASSERT_TRUE(v.speedup_eager_ci);
  EXPECT_TRUE(v.speedup_eager_ci->holds(1.0));
  // Without the baseline's pairs (its requests skipped) the timers' interval alone: it does not
  // hold 1.0 (0.91x by floors whose noise it does not see).
  m.eager_timing->wall_check_paired_ms.clear();
  v = judge(m);
  ASSERT_TRUE(v.speedup_eager_ci);
  EXPECT_FALSE(v.speedup_eager_ci->holds(1.0));
  // A candidate whose events stand is not widened by the floors' pairs.
  m.eager_timing->wall_check_paired_ms = {30.0, 38.0, 24.0};
  m.candidate_timing->wall_check_ms = 500 * 0.015;
  m.eager_timing->wall_check_ms = 500 * 0.015;
  v = judge(m);
  ASSERT_TRUE(v.speedup_eager_ci);
  EXPECT_LT(v.speedup_eager_ci->hi - v.speedup_eager_ci->lo, 0.1);
}

}  // namespace
}  // namespace kgym
