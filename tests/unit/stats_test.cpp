#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "kgym/error.hpp"
#include "kgym/stats.hpp"

namespace kgym::stats {
namespace {

// Brute force over all k-subsets of n items (bitmasks): the exact expectations the estimators
// must match.
double brute_pass(int n, int c, int k) {
  int hit = 0, total = 0;
  for (int mask = 0; mask < (1 << n); ++mask) {
    if (__builtin_popcount(mask) != k) continue;
    ++total;
    bool any = false;
    for (int i = 0; i < c; ++i) any = any || (mask >> i & 1);  // items 0..c-1 are correct
    hit += any;
  }
  return static_cast<double>(hit) / total;
}

double brute_max(const std::vector<double>& v, int k) {
  const int n = static_cast<int>(v.size());
  double sum = 0;
  int total = 0;
  for (int mask = 0; mask < (1 << n); ++mask) {
    if (__builtin_popcount(mask) != k) continue;
    ++total;
    double m = -1e300;
    for (int i = 0; i < n; ++i)
      if (mask >> i & 1) m = std::max(m, v[i]);
    sum += m;
  }
  return sum / total;
}

TEST(PassAtK, KnownValues) {
  EXPECT_DOUBLE_EQ(pass_at_k(10, 0, 1), 0.0);
  EXPECT_DOUBLE_EQ(pass_at_k(10, 10, 5), 1.0);
  EXPECT_NEAR(pass_at_k(5, 2, 1), 0.4, 1e-12);
  EXPECT_NEAR(pass_at_k(5, 2, 2), 1.0 - 3.0 / 10.0, 1e-12);  // 1 - C(3,2)/C(5,2)
  EXPECT_DOUBLE_EQ(pass_at_k(4, 2, 3), 1.0);                  // n - c < k
}

TEST(PassAtK, MatchesBruteForce) {
  for (int n = 1; n <= 10; ++n)
    for (int c = 0; c <= n; ++c)
      for (int k = 1; k <= n; ++k) EXPECT_NEAR(pass_at_k(n, c, k), brute_pass(n, c, k), 1e-12) << n << " " << c << " " << k;
}

TEST(PassAtK, RejectsBadArguments) {
  EXPECT_THROW(pass_at_k(5, 6, 1), Error);
  EXPECT_THROW(pass_at_k(5, 2, 6), Error);
  EXPECT_THROW(pass_at_k(5, 2, 0), Error);
}

TEST(ExpectedMaxAtK, MatchesBruteForce) {
  const std::vector<double> v = {0, 1.7, 0.3, 0, 4.2, 2.0, 0.9, 0};
  for (int k = 1; k <= static_cast<int>(v.size()); ++k) EXPECT_NEAR(expected_max_at_k(v, k), brute_max(v, k), 1e-12) << k;
  EXPECT_NEAR(expected_max_at_k({1, 2, 3}, 2), 8.0 / 3.0, 1e-12);
  EXPECT_NEAR(expected_max_at_k(v, 1), mean(v), 1e-12);
  EXPECT_THROW(expected_max_at_k({}, 1), Error);
}

TEST(ExpectedMaxAtK, ZeroOneValuesArePassAtK) {
  std::vector<double> v = {1, 0, 0, 1, 0, 0, 0};
  for (int k = 1; k <= 7; ++k) EXPECT_NEAR(expected_max_at_k(v, k), pass_at_k(7, 2, k), 1e-12);
}

TEST(FastP, StrictlyGreaterAndMissingCount) {
  std::vector<std::optional<double>> s = {2.0, 1.0, std::nullopt, 0.5, 3.0};
  EXPECT_DOUBLE_EQ(fast_p(s, 0), 4.0 / 5);
  EXPECT_DOUBLE_EQ(fast_p(s, 1), 2.0 / 5);  // 1.0 is not > 1
  EXPECT_DOUBLE_EQ(fast_p(s, 2), 1.0 / 5);
  EXPECT_DOUBLE_EQ(fast_p({}, 1), 0.0);
}

TEST(Geomean, PositiveOnly) {
  EXPECT_NEAR(*geomean({2, 8}), 4.0, 1e-12);
  EXPECT_NEAR(*geomean({2, 8, 0, -1}), 4.0, 1e-12);
  EXPECT_FALSE(geomean({0, -3}));
}

TEST(Quantile, NumpyType7) {
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4, 5}, 0.25), 2.0);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.9), 7.0);
  EXPECT_THROW(quantile({}, 0.5), Error);
}

TEST(PairedBootstrap, ConstantDifferenceHasZeroWidth) {
  std::vector<double> b = {0.1, 0.5, 0.2, 0.9, 0.3};
  std::vector<double> a = b;
  for (double& x : a) x += 1.0;
  Interval iv = paired_bootstrap(a, b, 2000);
  EXPECT_NEAR(iv.estimate, 1.0, 1e-12);
  EXPECT_NEAR(iv.low, 1.0, 1e-12);
  EXPECT_NEAR(iv.high, 1.0, 1e-12);
  EXPECT_EQ(iv.n, 5);
}

TEST(PairedBootstrap, FixedSeedIsReproducibleAndCoversEstimate) {
  std::vector<double> a, b;
  for (int i = 0; i < 40; ++i) {
    a.push_back((i * 37 % 11) / 10.0);
    b.push_back((i * 17 % 7) / 10.0);
  }
  Interval x = paired_bootstrap(a, b, 5000, 0.95, 7), y = paired_bootstrap(a, b, 5000, 0.95, 7);
  EXPECT_EQ(x.low, y.low);
  EXPECT_EQ(x.high, y.high);
  EXPECT_LT(x.low, x.estimate);
  EXPECT_GT(x.high, x.estimate);
  Interval z = paired_bootstrap(a, b, 5000, 0.95, 8);
  EXPECT_TRUE(z.low != x.low || z.high != x.high);
  Interval narrow = paired_bootstrap(a, b, 5000, 0.5, 7);  // a lower level gives a narrower interval
  EXPECT_GE(narrow.low, x.low);
  EXPECT_LE(narrow.high, x.high);
  // the percentile interval's width shrinks roughly as 1/sqrt(n): 4x the data, about half the width
  std::vector<double> a4, b4;
  for (int r = 0; r < 4; ++r) a4.insert(a4.end(), a.begin(), a.end()), b4.insert(b4.end(), b.begin(), b.end());
  Interval w = paired_bootstrap(a4, b4, 5000, 0.95, 7);
  EXPECT_LT(w.high - w.low, 0.7 * (x.high - x.low));
}

TEST(PairedBootstrap, RejectsMismatchedSizes) {
  EXPECT_THROW(paired_bootstrap({1, 2}, {1}), Error);
  EXPECT_THROW(paired_bootstrap({}, {}), Error);
}

}  // namespace
}  // namespace kgym::stats
