#include <gtest/gtest.h>

#include <cmath>

#include "kgym/report.hpp"

namespace kgym {
namespace {

Verdict make(Outcome o, std::optional<double> speedup = std::nullopt) {
  Verdict v;
  v.outcome = o;
  v.correct = o == Outcome::passed || o == Outcome::timing_invalid;
  v.speedup_eager = speedup;
  v.reward = v.correct ? 1 : 0;
  return v;
}

TEST(Summary, FastPAndGeomean) {
  std::vector<Verdict> vs = {make(Outcome::passed, 0.5), make(Outcome::passed, 2.0),
                             make(Outcome::passed, 4.0), make(Outcome::incorrect),
                             make(Outcome::timing_invalid, 100.0)};
  Summary s = summarize(vs);
  EXPECT_EQ(s.total, 5);
  EXPECT_EQ(s.correct, 4);
  EXPECT_EQ(s.counts[Outcome::passed], 3);
  EXPECT_DOUBLE_EQ(s.fast_p[0], 3.0 / 5);  // timing_invalid never counts as fast
  EXPECT_DOUBLE_EQ(s.fast_p[1], 2.0 / 5);
  EXPECT_DOUBLE_EQ(s.fast_p[2], 1.0 / 5);  // strictly greater than p
  EXPECT_NEAR(*s.geomean_speedup, std::cbrt(4.0), 1e-12);  // (0.5*2*4)^(1/3)
  std::string table = render_summary(s);
  EXPECT_NE(table.find("timing_invalid"), std::string::npos);
  EXPECT_NE(table.find("fast_1: 0.400"), std::string::npos);
}

TEST(Summary, WithoutTimingFastPIsNotApplicable) {
  Summary s = summarize({make(Outcome::passed), make(Outcome::incorrect)});
  EXPECT_EQ(s.untimed, 1);
  std::string table = render_summary(s);
  EXPECT_NE(table.find("fast_p: n/a (no timing)"), std::string::npos);
  EXPECT_EQ(table.find("fast_0:"), std::string::npos);
}

TEST(Summary, TaskErrorIsLeftOutOfTheDenominators) {
  // A task_error verdict judged nothing of its candidate: it counts neither for nor against it.
  Verdict broken = make(Outcome::task_error);
  broken.reward = 0;
  Summary s = summarize({make(Outcome::passed, 2.0), make(Outcome::incorrect), broken});
  EXPECT_EQ(s.total, 3);
  EXPECT_EQ(s.judged, 2);
  EXPECT_DOUBLE_EQ(s.fast_p[1], 1.0 / 2);
  EXPECT_DOUBLE_EQ(s.mean_reward, 1.0 / 2);
  EXPECT_NE(render_summary(s).find("task_error: 1 not judged"), std::string::npos);
}

TEST(Summary, Empty) {
  Summary s = summarize({});
  EXPECT_EQ(s.total, 0);
  EXPECT_FALSE(s.geomean_speedup);
}

}  // namespace
}  // namespace kgym

namespace kgym {
namespace {

TEST(Summary, FastPCountsOnlyIntervalsClearingP) {
  // KernelBench#166: 1.5x whose interval reaches down to 0.9 is not faster than 1; 1.5x whose
  // interval starts at 1.2 is.
  Verdict noisy = make(Outcome::passed, 1.5), clear = make(Outcome::passed, 1.5);
  noisy.speedup_eager_ci = Interval{0.9, 2.0};
  clear.speedup_eager_ci = Interval{1.2, 1.8};
  Summary s = summarize({noisy, clear});
  EXPECT_DOUBLE_EQ(s.fast_p[0], 1.0);
  EXPECT_DOUBLE_EQ(s.fast_p[1], 0.5);
  EXPECT_DOUBLE_EQ(*fast_p_speedup(noisy), 0.9);
  EXPECT_DOUBLE_EQ(*fast_p_speedup(clear), 1.2);
}

}  // namespace
}  // namespace kgym
