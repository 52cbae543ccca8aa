// Rewards of the episode layer (stepped, roofline), returns and group-relative advantages.
#include <gtest/gtest.h>

#include "kgym/error.hpp"
#include "kgym/returns.hpp"

using namespace kgym;

namespace {
Verdict verdict(Outcome o, std::optional<double> speedup = std::nullopt, int passed = 0, int total = 5) {
  Verdict v;
  v.outcome = o;
  v.correct = o == Outcome::passed || o == Outcome::timing_invalid;
  v.cases_passed = v.correct ? total : passed;
  v.cases_total = total;
  if (speedup) {
    v.speedup_eager = speedup;
    v.ref_runtime_ms = 1.0;
    v.runtime_ms = 1.0 / *speedup;
  }
  return v;
}
}  // namespace

TEST(SteppedReward, StepsFollowTheGates) {
  EXPECT_EQ(stepped_reward(verdict(Outcome::build_failed)), 0.0);
  EXPECT_EQ(stepped_reward(verdict(Outcome::policy_rejected)), 0.0);
  EXPECT_EQ(stepped_reward(verdict(Outcome::no_candidate)), 0.0);
  EXPECT_EQ(stepped_reward(verdict(Outcome::incorrect)), 0.25);
  EXPECT_EQ(stepped_reward(verdict(Outcome::runtime_error)), 0.25);
  EXPECT_EQ(stepped_reward(verdict(Outcome::timing_invalid)), 0.5);
  EXPECT_EQ(stepped_reward(verdict(Outcome::passed, 0.8)), 0.5);
  EXPECT_EQ(stepped_reward(verdict(Outcome::passed, 1.01)), 0.5);  // inside the noise band
  EXPECT_EQ(stepped_reward(verdict(Outcome::passed, 1.5)), 1.0);
}

TEST(SteppedReward, PartialCreditScalesWithPassedCases) {
  SteppedOptions o;
  o.partial_credit = true;
  EXPECT_DOUBLE_EQ(stepped_reward(verdict(Outcome::incorrect, std::nullopt, 4, 5), o), 0.2);
  EXPECT_DOUBLE_EQ(stepped_reward(verdict(Outcome::incorrect, std::nullopt, 0, 5), o), 0.1);
}

TEST(RooflineReward, FractionOfGapClosed) {
  // ref 1 ms, floor 0.2 ms: t = 0.6 ms closes half of the 0.8 ms gap.
  Verdict v = verdict(Outcome::passed, 1.0 / 0.6);
  EXPECT_NEAR(roofline_reward(v, 0.2), 0.5, 1e-12);
  EXPECT_EQ(roofline_reward(verdict(Outcome::passed, 0.5), 0.2), 0.0);   // slower than eager
  EXPECT_EQ(roofline_reward(verdict(Outcome::passed, 10.0), 0.2), 1.0);  // below floor: clamped
  EXPECT_EQ(roofline_reward(verdict(Outcome::incorrect), 0.2), 0.0);
  EXPECT_THROW(roofline_reward(v, 0.0), Error);
}

TEST(EpisodeReward, ResolvesNamesAndRejectsUnknown) {
  Verdict v = verdict(Outcome::passed, 2.0);
  EXPECT_EQ(compute_reward("stepped", v), 1.0);
  EXPECT_NEAR(compute_reward("roofline", v, {.roofline_floor_ms = 0.25, .noise_gate = std::nullopt}), (1.0 - 0.5) / (1.0 - 0.25), 1e-12);
  EXPECT_THROW(compute_reward("roofline", v), Error);
  try {
    compute_reward("speedy", v);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("stepped"), std::string::npos);
  }
}

TEST(Returns, DiscountedSum) {
  auto g = discounted_sum_returns({1.0, 0.0, 2.0}, 0.5);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_DOUBLE_EQ(g[2], 2.0);
  EXPECT_DOUBLE_EQ(g[1], 1.0);
  EXPECT_DOUBLE_EQ(g[0], 1.5);
  EXPECT_DOUBLE_EQ(two_turn_return(0.3, 1.3), discounted_sum_returns({0.3, 1.3}, 0.4)[0]);
  EXPECT_TRUE(discounted_sum_returns({}, 0.4).empty());
  EXPECT_THROW(discounted_sum_returns({1.0}, 1.5), Error);
}

TEST(Returns, DiscountedMaxCreditsTheBestLaterTurn) {
  auto g = discounted_max_returns({0.3, 0.0, 2.0}, 0.8);
  EXPECT_DOUBLE_EQ(g[2], 2.0);
  EXPECT_DOUBLE_EQ(g[1], 1.6);
  EXPECT_DOUBLE_EQ(g[0], 0.8 * 0.8 * 2.0);
  auto h = discounted_max_returns({3.0, 1.0}, 0.8);
  EXPECT_DOUBLE_EQ(h[0], 3.0);  // own reward beats the discounted later one
}

TEST(Advantages, GrpoNormalisesBySampleStd) {
  auto a = grpo_advantages({1.0, 2.0, 3.0}, 0.0);
  EXPECT_DOUBLE_EQ(a[0], -1.0);  // sample std of {1,2,3} is 1
  EXPECT_DOUBLE_EQ(a[1], 0.0);
  EXPECT_DOUBLE_EQ(a[2], 1.0);
  auto same = grpo_advantages({0.5, 0.5, 0.5});
  for (double x : same) EXPECT_DOUBLE_EQ(x, 0.0);
  EXPECT_EQ(grpo_advantages({4.0}), std::vector<double>{0.0});
  EXPECT_THROW(grpo_advantages({}), Error);
}

TEST(Advantages, DrGrpoOnlyCentres) {
  auto a = dr_grpo_advantages({1.0, 2.0, 6.0});
  EXPECT_DOUBLE_EQ(a[0], -2.0);
  EXPECT_DOUBLE_EQ(a[1], -1.0);
  EXPECT_DOUBLE_EQ(a[2], 3.0);
  EXPECT_THROW(dr_grpo_advantages({}), Error);
}
