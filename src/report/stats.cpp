#include "kgym/stats.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "kgym/error.hpp"

namespace kgym::stats {

double pass_at_k(int n, int c, int k) {
  if (n < 1 || c < 0 || c > n || k < 1 || k > n)
    throw Error(ErrorKind::usage, "pass@k needs 0 <= c <= n and 1 <= k <= n (got n=" + std::to_string(n) +
                                      ", c=" + std::to_string(c) + ", k=" + std::to_string(k) + ")");
  if (n - c < k) return 1.0;
  // 1 - prod_{i=n-c+1}^{n} (1 - k/i)
  double prod = 1.0;
  for (int i = n - c + 1; i <= n; ++i) prod *= 1.0 - static_cast<double>(k) / i;
  return 1.0 - prod;
}

double expected_max_at_k(std::vector<double> values, int k) {
  const int n = static_cast<int>(values.size());
  if (n < 1 || k < 1 || k > n)
    throw Error(ErrorKind::usage, "best@k needs 1 <= k <= n (got n=" + std::to_string(n) + ", k=" + std::to_string(k) + ")");
  std::sort(values.begin(), values.end());
  // weight of x_(i) (1-based) = C(i-1, k-1) / C(n, k); computed by the ratio recurrence
  // w_i = w_{i-1} * (i-1) / (i-k) for i > k, starting at w_k = 1 / C(n, k).
  double log_cnk = std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0);
  double w = std::exp(-log_cnk), sum = 0;
  for (int i = k; i <= n; ++i) {
    if (i > k) w *= static_cast<double>(i - 1) / (i - k);
    sum += w * values[i - 1];
  }
  return sum;
}

double fast_p(const std::vector<std::optional<double>>& speedups, double p) {
  if (speedups.empty()) return 0.0;
  int n = 0;
  for (const auto& s : speedups)
    if (s && *s > p) ++n;
  return static_cast<double>(n) / speedups.size();
}

std::optional<double> geomean(const std::vector<double>& values) {
  double log_sum = 0;
  int n = 0;
  for (double v : values)
    if (v > 0 && std::isfinite(v)) {
      log_sum += std::log(v);
      ++n;
    }
  if (!n) return std::nullopt;
  return std::exp(log_sum / n);
}

double mean(const std::vector<double>& values) {
  if (values.empty()) return 0.0;
  double s = 0;
  for (double v : values) s += v;
  return s / values.size();
}

double quantile(std::vector<double> values, double q) {
  if (values.empty()) throw Error(ErrorKind::usage, "quantile of an empty list");
  std::sort(values.begin(), values.end());
  q = std::clamp(q, 0.0, 1.0);
  const double h = (values.size() - 1) * q;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const auto hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (h - lo) * (values[hi] - values[lo]);
}

Interval paired_bootstrap(const std::vector<double>& a, const std::vector<double>& b, int resamples,
                          double level, std::uint64_t seed) {
  if (a.size() != b.size() || a.empty())
    throw Error(ErrorKind::usage, "paired bootstrap needs two equally long, non-empty lists (got " +
                                      std::to_string(a.size()) + " and " + std::to_string(b.size()) + ")");
  if (resamples < 1) throw Error(ErrorKind::usage, "paired bootstrap needs at least one resample");
  const std::size_t n = a.size();
  std::vector<double> d(n);
  for (std::size_t i = 0; i < n; ++i) d[i] = a[i] - b[i];
  Interval out;
  out.estimate = mean(d);
  out.n = static_cast<int>(n);
  out.resamples = resamples;
  std::mt19937_64 rng(seed);
  std::vector<double> means(resamples);
  for (int r = 0; r < resamples; ++r) {
    double s = 0;
    for (std::size_t i = 0; i < n; ++i) s += d[rng() % n];
    means[r] = s / n;
  }
  const double alpha = (1.0 - level) / 2;
  out.low = quantile(means, alpha);
  out.high = quantile(std::move(means), 1.0 - alpha);
  return out;
}

}  // namespace kgym::stats
