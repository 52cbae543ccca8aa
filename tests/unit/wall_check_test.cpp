// The wall-clock check's estimate (src/runner/wall_check.hpp).
#include <gtest/gtest.h>
#include <random>

#include "../../src/runner/wall_check.hpp"

using kgym::runner::WallCheckSeries;

namespace {
/// c0 t0 c1 t1 ... cK: calibrations `cal`, timed requests `cal + calls` (ms) with `drift` added
/// at every step (the machine getting slower).
WallCheckSeries series(double cal, double calls, double drift, int pairs = 4) {
  WallCheckSeries s;
  s.clear();
  double now = 0;
  for (int k = 0; k < pairs; ++k) {
    s.add_calibration(cal + now);
    now += drift;
    s.add_timed(cal + calls + now);
    now += drift;
  }
  s.add_calibration(cal + now);
  return s;
}
}  // namespace

TEST(WallCheck, PairedTimeCancelsADriftThatTheLeastOfEachSeriesDoesNot) {
  // 100 ms of inputs and hashing per request, 10 ms of calls, the machine 5 ms slower each step.
  const WallCheckSeries s = series(100, 10, 5);
  EXPECT_NEAR(s.paired(), 10.0, 1e-9);
  EXPECT_NEAR(s.timed - s.calibration, 15.0, 1e-9);  // the least of each: 50% too high
  EXPECT_NEAR(s.resolution(), 10.0, 1e-9);           // successive calibrations 10 ms apart
  EXPECT_FALSE(s.conclusive(false));                 // 10 ms of calls is not above 2 x 10 ms
  EXPECT_NEAR(s.calls_ms(false), 10.0, 1e-9);
}

TEST(WallCheck, CpuCallsAboveTheNoiseAreTakenAsMeasured) {
  const WallCheckSeries s = series(100, 40, 0.5);
  EXPECT_TRUE(s.conclusive(false));
  EXPECT_NEAR(s.calls_ms(false), 40.0, 1e-9);
}

TEST(WallCheck, CpuCallsBelowTheResolutionAreTakenAtTheResolution) {
  // A shrunk timer cannot gain below what the clock resolves: calls of 1 ms in a request whose
  // calibrations move by 8 ms count as 8 ms.
  WallCheckSeries s;
  s.clear();
  for (double c : {100.0, 108.0, 100.0, 108.0, 100.0}) {
    s.add_calibration(c);
    if (s.calibrations.size() < 5) s.add_timed(105.0);
  }
  EXPECT_NEAR(s.resolution(), 8.0, 1e-9);
  EXPECT_NEAR(s.paired(), 1.0, 1e-9);
  EXPECT_FALSE(s.conclusive(false));
  EXPECT_NEAR(s.calls_ms(false), 8.0, 1e-9);
}

TEST(WallCheck, CpuReplyFasterThanTheCalibrationNeverCountsBelowTheResolution) {
  WallCheckSeries s;
  s.clear();
  for (int k = 0; k < 4; ++k) {
    s.add_calibration(100 + k);
    s.add_timed(60);  // faster than generating the inputs: the commitment catches it
  }
  s.add_calibration(104);
  EXPECT_LT(s.paired(), 0.0);
  EXPECT_NEAR(s.calls_ms(false), s.resolution(), 1e-9);
  EXPECT_GE(s.calls_ms(false), 0.0);
}

TEST(WallCheck, GpuKeepsTheLeastOfEachAndTheUpperBound) {
  WallCheckSeries s;
  s.clear();
  s.add_calibration(10);
  s.add_timed(20);
  s.add_calibration(11);
  s.add_timed(19);
  s.add_calibration(12);
  EXPECT_TRUE(s.conclusive(true));
  EXPECT_NEAR(s.calls_ms(true), 9.0, 1e-9);
  WallCheckSeries flat;
  flat.clear();
  flat.add_calibration(100);
  flat.add_timed(101);
  flat.add_calibration(100);
  EXPECT_FALSE(flat.conclusive(true));  // 1% of the request
  EXPECT_NEAR(flat.calls_ms(true), 101.0, 1e-9);
}

TEST(WallCheck, UpperFigureIsTheLargestPairedDifferenceAndAtLeastTwiceTheResolution) {
  // Calibrations 100, 102, 100, 102, 100 (resolution 2); timed requests 0.5, 6, 1 and 3 ms above
  // their neighbours' mean: the median (2 ms) is inside the noise, the largest is 6.
  WallCheckSeries s;
  s.clear();
  const double cal[] = {100, 102, 100, 102, 100};
  const double over[] = {0.5, 6, 1, 3};
  for (int k = 0; k < 4; ++k) {
    s.add_calibration(cal[k]);
    s.add_timed(0.5 * (cal[k] + cal[k + 1]) + over[k]);
  }
  s.add_calibration(cal[4]);
  EXPECT_NEAR(s.resolution(), 2.0, 1e-9);
  EXPECT_NEAR(s.paired(), 2.0, 1e-9);
  EXPECT_NEAR(s.calls_ms(false), 2.0, 1e-9);
  EXPECT_NEAR(s.upper(), 6.0, 1e-9);
  // All differences inside the noise: the top of the band the check cannot resolve.
  const WallCheckSeries quiet = series(100, 0.1, 0.0);
  EXPECT_NEAR(quiet.upper(), 0.1, 1e-9);  // no noise at all: resolution 0, the difference itself
  WallCheckSeries noisy;
  noisy.clear();
  for (int k = 0; k < 3; ++k) {
    noisy.add_calibration(k % 2 ? 105 : 100);
    noisy.add_timed(102.6);
  }
  noisy.add_calibration(105);
  EXPECT_NEAR(noisy.resolution(), 5.0, 1e-9);
  EXPECT_NEAR(noisy.upper(), 10.0, 1e-9);
}

namespace {
/// A GPU series: calibrations of `cal` ms and baseline requests of `cal + calls` ms.
kgym::runner::WallCheckSeries gpu_series(double cal, double calls) {
  kgym::runner::WallCheckSeries s;
  s.clear();
  for (int i = 0; i < 3; ++i) {
    s.add_calibration(cal + 0.1 * i);
    s.add_timed(cal + calls + 0.1 * i);
  }
  return s;
}
}  // namespace

TEST(WallCheck, BaselineFloorIsTheLesserOfTheTwoMeasures) {
  using kgym::runner::baseline_floor_per_call;
  // Host-bound matmul (x0.1): the reference's own loop charged more than the supervisor's rule.
  EXPECT_DOUBLE_EQ(baseline_floor_per_call(gpu_series(20, 3), 100, 0.041), 0.03);
  // Full size: the supervisor's request paid its kept outputs' allocation.
  EXPECT_DOUBLE_EQ(baseline_floor_per_call(gpu_series(20, 39.5), 5, 3.05), 3.05);
}

TEST(WallCheck, BaselineGetsNoFloorWhenTheSupervisorsMeasureIsMissingOrInconclusive) {
  using kgym::runner::baseline_floor_per_call;
  EXPECT_EQ(baseline_floor_per_call(gpu_series(100, 0.5), 10, 0.05), 0.0);  // calls 0.5% of the request
  kgym::runner::WallCheckSeries none;
  none.clear();
  EXPECT_EQ(baseline_floor_per_call(none, 100, 0.041), 0.0);  // no baseline request served
}

TEST(WallCheck, WithoutTheOwnLoopsFigureTheSupervisorsMeasureIsTheFloor) {
  using kgym::runner::baseline_floor_per_call;
  // H200, session 16: eager's own loop was inconclusive at 256x256 (0.0003 ms per call against
  // 0.012 ms of events); the supervisor's measure (3 ms over 100 calls) is the floor alone.
  EXPECT_DOUBLE_EQ(baseline_floor_per_call(gpu_series(20, 3), 100, 0.0), 0.03);
  // ... unless it is inconclusive too.
  EXPECT_EQ(baseline_floor_per_call(gpu_series(100, 0.5), 10, 0.0), 0.0);
}

TEST(WallCheck, ABaselineFloorIsMeasuredOnlyWhereItCanBind) {
  using kgym::runner::baseline_floor_can_bind;
  // Full-size ReLU (H200, session 13): eager's own loop 3.07 ms per call, events 3.06 ms, window
  // overhead 0.012 ms: the floor (at most 3.07 / 1.1) cannot reach the net event time.
  EXPECT_FALSE(baseline_floor_can_bind(3.07, 3.06, 0.012, 1.1));
  // Host-bound (x0.1 matmul): own loop 0.041 ms per call against 0.006 ms of events.
  EXPECT_TRUE(baseline_floor_can_bind(0.041, 0.006, 0.012, 1.1));
  // The window overhead lowers the net time the floor has to beat.
  EXPECT_TRUE(baseline_floor_can_bind(0.1, 0.1, 0.02, 1.1));
  EXPECT_FALSE(baseline_floor_can_bind(0.1, 0.1, 0.0, 1.1));
  // No own figure (inconclusive): nothing bounds the floor, so the supervisor measures. No
  // median or factor: measured.
  EXPECT_TRUE(baseline_floor_can_bind(0.0, 0.006, 0.012, 1.1));
  EXPECT_TRUE(baseline_floor_can_bind(0.041, 0.0, 0.012, 1.1));
  EXPECT_TRUE(baseline_floor_can_bind(0.041, 0.006, 0.012, 0.0));
}

TEST(WallCheck, TheCandidatesOwnCalibrationOnlyRaisesItsFloor) {
  using kgym::runner::candidate_calls_ms;
  // H200, session 10 (rt2/rt8 at 256x256): the reference's calibrations 9.1 ms, the candidate's
  // timed requests 10.4 ms, its own calibrations 6.5 ms: the floor is 3.9 ms, not 1.3 ms.
  kgym::runner::WallCheckSeries reference, own;
  reference.clear();
  own.clear();
  reference.add_calibration(9.1);
  reference.add_timed(10.4);
  reference.add_calibration(9.3);
  reference.add_timed(10.6);
  EXPECT_NEAR(candidate_calls_ms(reference, own), 1.3, 1e-9);  // no own calibration: as before
  own.add_calibration(6.6);
  own.add_calibration(6.5);
  EXPECT_NEAR(candidate_calls_ms(reference, own), 3.9, 1e-9);
  // A slow calibration of its own cannot lower the floor below the reference's figure.
  kgym::runner::WallCheckSeries slow;
  slow.clear();
  slow.add_calibration(50.0);
  EXPECT_NEAR(candidate_calls_ms(reference, slow), 1.3, 1e-9);
  // Inconclusive by the reference's calibrations: the whole request, whatever its own says.
  kgym::runner::WallCheckSeries flat;
  flat.clear();
  flat.add_calibration(10.0);
  flat.add_timed(10.2);
  EXPECT_NEAR(candidate_calls_ms(flat, slow), 10.2, 1e-9);
  EXPECT_NEAR(candidate_calls_ms(flat, own), 10.2, 1e-9);
}

TEST(RecheckPositions, OneEarlyCallAndTheRestAnywhereDistinct) {
  // Red team rt32 gave wrong outputs at timed positions 46 to 51, which a draw among the first
  // min_calls never reached: every position must be drawn sometimes.
  std::mt19937_64 rng(7);
  std::vector<int> seen(100, 0);
  for (int t = 0; t < 2000; ++t) {
    const auto keep = kgym::runner::recheck_positions(10, 100, 2, rng);
    ASSERT_EQ(keep.size(), 2u);
    EXPECT_LT(keep[0], 10);
    EXPECT_NE(keep[0], keep[1]);
    for (int k : keep) {
      ASSERT_GE(k, 0);
      ASSERT_LT(k, 100);
      ++seen[static_cast<std::size_t>(k)];
    }
  }
  for (int k = 0; k < 100; ++k) EXPECT_GT(seen[static_cast<std::size_t>(k)], 0) << "position " << k << " never drawn";
  EXPECT_EQ(kgym::runner::recheck_positions(5, 3, 9, rng).size(), 5u);  // no more than there are
}

// The CPU wall check's shared input file over 2 GiB (red team rt35: task 89 at --scale 0.1 wrote
// 2,147,614,720 bytes; its size read back as an int was negative and the candidate's mmap failed).
TEST(WallCheck, SharedInputsMapKeepsSizesPast2GiB) {
  const nlohmann::json reply = {{"ok", true}, {"path", "/tmp/w.bin"}, {"bytes", 2147614720LL}};
  const nlohmann::json m = kgym::runner::shared_inputs_map(reply);
  EXPECT_EQ(m.at("path"), "/tmp/w.bin");
  EXPECT_EQ(m.at("bytes").get<std::int64_t>(), 2147614720LL);
  EXPECT_EQ(kgym::runner::shared_inputs_map(nlohmann::json::object()).at("bytes").get<std::int64_t>(), 0);
}

// CPU: each side's own work outside the calls, as its process measured it, taken out of its
// pairs (runner::without_harness_work, docs/timing.md "Wall check, CPU").
TEST(WallCheck, OwnHarnessWorkIsTakenOutOfThePairsWithinTheBound) {
  // Calibrations of 100 ms, 80 of them the reference's own work; timed requests of 100 + 10 ms
  // of calls, whose own work ran 10% slower in the candidate's process (88 ms): the pairs said
  // 18 ms of calls, and 10 once that is taken out.
  const WallCheckSeries s = series(100, 18, 0);
  const std::vector<double> cal(5, 80.0), timed(4, 88.0);
  std::vector<double> moved;
  const auto pairs = kgym::runner::without_harness_work(s, cal, timed, &moved);
  ASSERT_TRUE(pairs.has_value());
  ASSERT_EQ(pairs->size(), 4u);
  for (double d : *pairs) EXPECT_NEAR(d, 10.0, 1e-9);
  for (double x : moved) EXPECT_NEAR(x, 8.0, 1e-9);
  // A side whose figure strays beyond the bound (it could only have come from that process) is
  // moved by the bound's worth and no more: 80 x 1.25 = 100 at most, 80 / 1.25 = 64 at least.
  const auto high = kgym::runner::without_harness_work(s, cal, std::vector<double>(4, 500.0));
  ASSERT_TRUE(high.has_value());
  for (double d : *high) EXPECT_NEAR(d, 18.0 - 20.0, 1e-9);
  const auto low = kgym::runner::without_harness_work(s, cal, std::vector<double>(4, 0.0));
  ASSERT_TRUE(low.has_value());
  for (double d : *low) EXPECT_NEAR(d, 18.0 + 16.0, 1e-9);
}

TEST(WallCheck, OwnHarnessWorkMissingMovesNothing) {
  const WallCheckSeries s = series(100, 18, 0);
  // a request that did not report it (-1), too few figures, a calibration's missing
  EXPECT_FALSE(kgym::runner::without_harness_work(s, std::vector<double>(5, 80.0), {88, 88, -1, 88}).has_value());
  EXPECT_FALSE(kgym::runner::without_harness_work(s, std::vector<double>(5, 80.0), {88, 88, 88}).has_value());
  EXPECT_FALSE(kgym::runner::without_harness_work(s, {80, 80, -1, 80, 80}, std::vector<double>(4, 88.0)).has_value());
  EXPECT_FALSE(kgym::runner::without_harness_work(s, std::vector<double>(4, 80.0), std::vector<double>(4, 88.0)).has_value());
}
