// The speedup intervals (kgym/interval.hpp): coverage of the true ratio, separation, pairing,
// determinism and refusals.
#include <gtest/gtest.h>

#include <random>

#include "kgym/interval.hpp"

namespace kgym {
namespace {

std::vector<double> noisy(double median_ms, int n, std::uint64_t seed, double spread = 0.05) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, spread);
  std::vector<double> t;
  for (int i = 0; i < n; ++i) t.push_back(median_ms * (1.0 + z(rng)));
  return t;
}

TEST(Interval, SameOperatorHoldsOneAndAFasterOneClearsIt) {
  const auto eager = noisy(1.0, 40, 1), same = noisy(1.0, 40, 2), faster = noisy(0.5, 40, 3);
  const auto a = ratio_of_medians_interval(eager, {20, 20}, same, {20, 20});
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->holds(1.0)) << a->lo << " " << a->hi;
  EXPECT_LT(a->hi - a->lo, 0.2);
  const auto b = ratio_of_medians_interval(eager, {20, 20}, faster, {20, 20});
  ASSERT_TRUE(b);
  EXPECT_GT(b->lo, 1.5);
  EXPECT_TRUE(b->holds(2.0)) << b->lo << " " << b->hi;
}

TEST(Interval, DriftBetweenRoundsWidensTheInterval) {
  // Round 2 of both sides ran 30% slower (the machine's speed drifted): calls within a round
  // agree, rounds do not. The clustered bootstrap sees the rounds; one pooled sample would not.
  auto eager = noisy(1.0, 20, 4, 0.01), cand = noisy(1.0, 20, 5, 0.01);
  auto e2 = noisy(1.3, 20, 6, 0.01), c2 = noisy(1.0, 20, 7, 0.01);
  eager.insert(eager.end(), e2.begin(), e2.end());
  cand.insert(cand.end(), c2.begin(), c2.end());
  const auto pooled = ratio_of_medians_interval(eager, {}, cand, {});
  const auto rounds = ratio_of_medians_interval(eager, {20, 20}, cand, {20, 20});
  ASSERT_TRUE(pooled && rounds);
  EXPECT_GT(rounds->hi - rounds->lo, pooled->hi - pooled->lo);
}

TEST(Interval, DeterministicAndRefusesMismatchedRounds) {
  const auto eager = noisy(1.0, 30, 8), cand = noisy(0.9, 30, 9);
  const auto a = ratio_of_medians_interval(eager, {15, 15}, cand, {15, 15});
  const auto b = ratio_of_medians_interval(eager, {15, 15}, cand, {15, 15});
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->lo, b->lo);
  EXPECT_EQ(a->hi, b->hi);
  EXPECT_FALSE(ratio_of_medians_interval(eager, {10, 10}, cand, {15, 15}));  // counts do not add up
  EXPECT_FALSE(ratio_of_medians_interval({}, {}, cand, {}));
}

TEST(Interval, PairedWallDifferencesAndTheirResolution) {
  // Paired requests: both sides moved together by drift (the same calibrations).
  const std::vector<double> drift = {0.0, 3.0, -2.0, 5.0, 1.0, -1.0};
  const std::vector<double> jitter = {0.3, -0.2, 0.1, -0.3, 0.2, -0.1};
  std::vector<double> eager, same, half;
  for (std::size_t k = 0; k < drift.size(); ++k) {
    eager.push_back(10.0 + drift[k]);
    same.push_back(10.0 + drift[k] + jitter[k]);  // the same calls, their own noise
    half.push_back(5.0 + drift[k] / 2);
  }
  const auto a = paired_ratio_interval(eager, same, 0.5);
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->holds(1.0)) << a->lo << " " << a->hi;
  const auto b = paired_ratio_interval(eager, half, 0.5);
  ASSERT_TRUE(b);
  EXPECT_GT(b->lo, 1.5);
  // Below the resolution both sides are taken at it: no speedup can be told.
  const auto c = paired_ratio_interval({0.1, 0.2, 0.1, 0.3}, {0.01, 0.02, 0.01, 0.01}, 1.0);
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->lo, 1.0);
  EXPECT_DOUBLE_EQ(c->hi, 1.0);
  EXPECT_FALSE(paired_ratio_interval({1, 2, 3}, {1, 2}, 0.0));  // unpaired
  EXPECT_FALSE(paired_ratio_interval({1, 2}, {1, 2}, 0.0));     // too few pairs
}

}  // namespace
}  // namespace kgym
