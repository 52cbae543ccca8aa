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

TEST(WallCheck, GpuTakesThePairedTimeAndTheWholeRequestWhenInconclusive) {
  WallCheckSeries s;
  s.clear();
  s.add_calibration(10);
  s.add_timed(20);  // 9.5 above its calibrations' mean
  s.add_calibration(11);
  s.add_timed(19);  // 7.5
  s.add_calibration(12);
  EXPECT_TRUE(s.conclusive(true));
  EXPECT_NEAR(s.calls_ms(true), 8.5, 1e-9);  // the median pair, not the least timed - least calibration (9)
  WallCheckSeries flat;
  flat.clear();
  flat.add_calibration(100);
  flat.add_timed(101);
  flat.add_calibration(100);
  EXPECT_FALSE(flat.conclusive(true));  // 1% of the request
  EXPECT_NEAR(flat.calls_ms(true), 101.0, 1e-9);
  // Conclusive but inside the calibrations' band: the resolution.
  WallCheckSeries noisy;
  noisy.clear();
  for (double c : {100.0, 120.0, 100.0}) {
    noisy.add_calibration(c);
    if (noisy.calibrations.size() < 3) noisy.add_timed(118);
  }
  EXPECT_TRUE(noisy.conclusive(true));  // 8 ms pairs, 6.8% of the request
  EXPECT_NEAR(noisy.calls_ms(true), 20.0, 1e-9);
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
/// A GPU series: 4 calibrations of about `cal` ms (0.1 ms apart) and 3 requests of `cal + calls` ms
/// between them.
kgym::runner::WallCheckSeries gpu_series(double cal, double calls) {
  kgym::runner::WallCheckSeries s;
  s.clear();
  for (int i = 0; i < 4; ++i) {
    s.add_calibration(cal + 0.1 * i);
    if (i < 3) s.add_timed(cal + calls + 0.1 * i + 0.05);
  }
  return s;
}
}  // namespace

TEST(WallCheck, BaselineFloorIsTheCandidatesEstimatorOnTheSameCalibrations) {
  using kgym::runner::baseline_floor_per_call;
  // Host-bound matmul (x0.1): 3 ms of calls over 100: 0.03 ms a call, by the paired rule.
  EXPECT_NEAR(baseline_floor_per_call(gpu_series(20, 3), 100, true), 0.03, 1e-12);
  // Full size: 39.5 ms over 5 calls.
  EXPECT_NEAR(baseline_floor_per_call(gpu_series(20, 39.5), 5, true), 7.9, 1e-12);
}

TEST(WallCheck, BaselineFloorFollowsTheCandidatesCheckWhenItsOwnCallsAreInsideTheNoise) {
  using kgym::runner::baseline_floor_per_call;
  // The candidate's check conclusive, the baseline's calls below the resolution: the resolution
  // (an H100's eager request faster than its calibration had left eager without a floor, 0.12x).
  kgym::runner::WallCheckSeries s;
  s.clear();
  for (double c : {130.0, 125.0, 132.0, 126.0}) {
    s.add_calibration(c);
    if (s.calibrations.size() < 4) s.add_timed(120.5);
  }
  EXPECT_NEAR(s.resolution(), 6.0, 1e-9);
  EXPECT_NEAR(baseline_floor_per_call(s, 500, true), 6.0 / 500, 1e-12);
  // The candidate's check inconclusive: the whole median request, as the candidate's is taken.
  EXPECT_NEAR(baseline_floor_per_call(gpu_series(100, 0.5), 10, false), 100.65 / 10, 1e-9);
  kgym::runner::WallCheckSeries none;
  none.clear();
  EXPECT_EQ(baseline_floor_per_call(none, 100, true), 0.0);  // no baseline request served
  EXPECT_EQ(baseline_floor_per_call(gpu_series(20, 3), 0, true), 0.0);
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
  // H200 (rt2/rt8 at 256x256): the reference's calibrations about 9.2 ms, the candidate's timed
  // requests 10.4 to 10.6 ms, its own calibrations 6.5 ms: the floor is its own figure (the
  // median of 3.8, 4.1, 4.0), not the reference's 1.3 ms.
  kgym::runner::WallCheckSeries reference, own;
  reference.clear();
  own.clear();
  const double cal[] = {9.1, 9.3, 9.1, 9.3}, timed[] = {10.4, 10.6, 10.5};
  for (int k = 0; k < 4; ++k) {
    reference.add_calibration(cal[k]);
    if (k < 3) reference.add_timed(timed[k]);
  }
  EXPECT_NEAR(reference.calls_ms(true), 1.3, 1e-9);
  EXPECT_NEAR(candidate_calls_ms(reference, own), 1.3, 1e-9);  // no own calibration: the reference's
  for (double x : {6.6, 6.5, 6.5}) own.add_calibration(x);
  EXPECT_NEAR(candidate_calls_ms(reference, own), 4.0, 1e-9);
  // A slow calibration of its own cannot lower the floor below the reference's figure.
  kgym::runner::WallCheckSeries slow;
  slow.clear();
  for (double x : {50.0, 50.0, 50.0}) slow.add_calibration(x);
  EXPECT_NEAR(candidate_calls_ms(reference, slow), 1.3, 1e-9);
  // Inconclusive by the reference's calibrations: the whole request, whatever its own says.
  kgym::runner::WallCheckSeries flat;
  flat.clear();
  flat.add_calibration(10.0);
  flat.add_timed(10.2);
  flat.add_calibration(10.0);
  EXPECT_NEAR(candidate_calls_ms(flat, slow), 10.2, 1e-9);
  EXPECT_NEAR(candidate_calls_ms(flat, own), 10.2, 1e-9);
}

TEST(WallCheck, CandidateAndBaselineAreTakenByOneEstimator) {
  using kgym::runner::baseline_floor_per_call;
  using kgym::runner::candidate_calls_ms;
  // The same requests on either side give the same floor: the candidate's own calibrations
  // standing where a baseline's own process's (the reference's next calibration) stand.
  const double cal[] = {95.6, 87.1, 96.3, 90.0}, timed[] = {144.2, 151.3, 142.0};
  kgym::runner::WallCheckSeries side, own;
  side.clear();
  own.clear();
  for (int k = 0; k < 4; ++k) {
    side.add_calibration(cal[k]);
    if (k < 3) side.add_timed(timed[k]);
    if (k > 0) own.add_calibration(cal[k]);
  }
  EXPECT_DOUBLE_EQ(candidate_calls_ms(side, own) / 500, baseline_floor_per_call(side, 500, true));
  // Its own process faster at the request's own work raises either side alike.
  kgym::runner::WallCheckSeries fast;
  fast.clear();
  for (double x : {70.0, 70.0, 70.0}) fast.add_calibration(x);
  EXPECT_NEAR(candidate_calls_ms(side, fast), 74.2, 1e-9);
  EXPECT_GT(candidate_calls_ms(side, fast), candidate_calls_ms(side, own));
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

// Red team rt38: GPU work the candidate queued before it was stopped time-slices the device against
// the reference's timing; the reference waits for a quiet device, and a wait that gave up is a
// finding (the candidate's release drained its own queue, so only work queued after outlives it).
TEST(WallCheck, QuietDeviceFindingOnlyWhenTheWaitGaveUp) {
  using kgym::runner::quiet_device_finding;
  double waited = 0;
  EXPECT_FALSE(quiet_device_finding(nlohmann::json{{"ok", true}}, "x", &waited));
  EXPECT_EQ(waited, 0.0);
  EXPECT_FALSE(quiet_device_finding(nlohmann::json{{"quiet_wait_ms", 12.5}, {"quiet_timeout", false}}, "x", &waited));
  EXPECT_DOUBLE_EQ(waited, 12.5);
  const auto f = quiet_device_finding(nlohmann::json{{"quiet_wait_ms", 3000.4}, {"quiet_timeout", true}},
                                      "a wall-check calibration", &waited);
  ASSERT_TRUE(f);
  EXPECT_NE(f->find("3000 ms"), std::string::npos) << *f;
  EXPECT_NE(f->find("a wall-check calibration"), std::string::npos) << *f;
  EXPECT_DOUBLE_EQ(waited, 3012.9);
  // a reply from elsewhere: not an object, or the flag of another type, says nothing
  EXPECT_FALSE(quiet_device_finding(nlohmann::json::array(), "x"));
  EXPECT_FALSE(quiet_device_finding(nlohmann::json{{"quiet_timeout", "yes"}}, "x"));
}
