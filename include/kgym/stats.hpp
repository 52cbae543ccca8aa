#pragma once
// Statistics of evaluation runs: pass@k, best@k, fast_p, geometric means and the paired
// bootstrap. Pure functions, deterministic (the bootstrap takes an explicit seed).

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace kgym::stats {

/// Unbiased pass@k of one task from n samples of which c are correct:
/// 1 - C(n-c, k) / C(n, k), computed as a running product (no large binomials).
/// Source: Chen et al. 2021, "Evaluating Large Language Models Trained on Code", eq. (1) and the
/// numerically stable form in its Figure 3. Requires 0 <= c <= n and 1 <= k <= n, else Error(usage).
double pass_at_k(int n, int c, int k);

/// Expected maximum of a uniformly drawn k-subset of `values` (n = values.size(), 1 <= k <= n):
/// sum_i x_(i) * C(i-1, k-1) / C(n, k) over the ascending order statistics x_(1..n). This is the
/// unbiased best@k of a task (values: per-sample scores, e.g. speedup with 0 for incorrect).
/// Same estimator family as pass@k (pass@k is this with 0/1 values). Error(usage) on bad k.
double expected_max_at_k(std::vector<double> values, int k);

/// Fraction of `speedups` entries that are set (correct and timed) and strictly greater than p.
/// Entries without a value (incorrect, untimed) count in the denominator. KernelBench's fast_p.
/// An empty list gives 0.
double fast_p(const std::vector<std::optional<double>>& speedups, double p);

/// Geometric mean of the positive values; nullopt when there is none.
std::optional<double> geomean(const std::vector<double>& values);

/// Arithmetic mean; 0 for an empty list.
double mean(const std::vector<double>& values);

/// Linear-interpolated quantile q in [0, 1] of `values` (type 7, as numpy's default).
/// Error(usage) on an empty list.
double quantile(std::vector<double> values, double q);

/// A point estimate with a confidence interval.
struct Interval {
  double estimate = 0, low = 0, high = 0;
  int n = 0;          ///< paired units (tasks)
  int resamples = 0;  ///< bootstrap resamples
};

/// Paired bootstrap of mean(a - b) over paired units (a[i], b[i] belong to the same task):
/// `resamples` draws of n indices with replacement, percentile interval at `level` (e.g. 0.95).
/// Deterministic for a given seed: indices come from std::mt19937_64(seed) reduced modulo n (the
/// engine's output sequence is fixed by the standard; no std:: distribution is used).
/// Method: Efron & Tibshirani 1993, ch. 13 (percentile interval). Error(usage) when the sizes
/// differ or are 0.
Interval paired_bootstrap(const std::vector<double>& a, const std::vector<double>& b,
                          int resamples = 10000, double level = 0.95, std::uint64_t seed = 20240611);

}  // namespace kgym::stats
