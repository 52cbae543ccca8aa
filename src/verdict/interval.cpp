#include "kgym/interval.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

namespace kgym {
namespace {

double median_of(std::vector<double>& x) {
  const std::size_t h = x.size() / 2;
  std::nth_element(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(h), x.end());
  const double upper = x[h];
  if (x.size() % 2) return upper;
  return 0.5 * (*std::max_element(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(h)) + upper);
}

double median_copy(std::vector<double> x) { return x.empty() ? 0.0 : median_of(x); }

// FNV-1a over the bytes of the values: the bootstrap's seed, so that the judge stays pure.
std::uint64_t seed_of(std::initializer_list<const std::vector<double>*> series) {
  std::uint64_t h = 1469598103934665603ull;
  for (const auto* s : series)
    for (double x : *s) {
      unsigned char b[sizeof(double)];
      std::memcpy(b, &x, sizeof b);
      for (unsigned char c : b) h = (h ^ c) * 1099511628211ull;
    }
  return h;
}

std::optional<Interval> percentile(std::vector<double>& ratios, double level) {
  if (ratios.empty()) return std::nullopt;
  std::sort(ratios.begin(), ratios.end());
  const double a = std::clamp((1.0 - level) / 2.0, 0.0, 0.5);
  auto at = [&](double q) {
    const double pos = q * static_cast<double>(ratios.size() - 1);
    const auto i = static_cast<std::size_t>(std::floor(pos));
    const std::size_t j = std::min(i + 1, ratios.size() - 1);
    return ratios[i] + (pos - static_cast<double>(i)) * (ratios[j] - ratios[i]);
  };
  return Interval{at(a), at(1.0 - a)};
}

// The rounds as [begin, end) ranges of the times; empty when the counts do not add up.
std::vector<std::pair<std::size_t, std::size_t>> ranges(const std::vector<double>& t, const std::vector<int>& rounds) {
  std::vector<std::pair<std::size_t, std::size_t>> r;
  if (rounds.empty()) {
    if (!t.empty()) r.emplace_back(0, t.size());
    return r;
  }
  std::size_t at = 0;
  for (int n : rounds) {
    if (n <= 0) continue;
    r.emplace_back(at, at + static_cast<std::size_t>(n));
    at += static_cast<std::size_t>(n);
  }
  if (at != t.size()) r.clear();
  return r;
}

}  // namespace

std::optional<Interval> ratio_of_medians_interval(const std::vector<double>& baseline_ms,
                                                  const std::vector<int>& baseline_rounds,
                                                  const std::vector<double>& candidate_ms,
                                                  const std::vector<int>& candidate_rounds, double level,
                                                  int resamples) {
  const auto rb = ranges(baseline_ms, baseline_rounds), rc = ranges(candidate_ms, candidate_rounds);
  if (rb.empty() || rc.empty() || resamples <= 0) return std::nullopt;
  if (!(median_copy(baseline_ms) > 0) || !(median_copy(candidate_ms) > 0)) return std::nullopt;
  // Rounds are paired by index; a side with fewer rounds (a baseline that failed in one) pairs
  // the rounds both have.
  const std::size_t rounds = std::min(rb.size(), rc.size());
  std::mt19937_64 rng(seed_of({&baseline_ms, &candidate_ms}));
  std::uniform_int_distribution<std::size_t> pick_round(0, rounds - 1);
  std::vector<double> ratios, b, c;
  ratios.reserve(static_cast<std::size_t>(resamples));
  auto draw = [&](const std::vector<double>& t, std::pair<std::size_t, std::size_t> range, std::vector<double>& into) {
    std::uniform_int_distribution<std::size_t> pick(range.first, range.second - 1);
    for (std::size_t k = range.first; k < range.second; ++k) into.push_back(t[pick(rng)]);
  };
  for (int s = 0; s < resamples; ++s) {
    b.clear();
    c.clear();
    for (std::size_t r = 0; r < rounds; ++r) {
      const std::size_t i = rounds > 1 ? pick_round(rng) : 0;
      draw(baseline_ms, rb[i], b);
      draw(candidate_ms, rc[i], c);
    }
    const double mc = median_of(c);
    if (mc > 0) ratios.push_back(median_of(b) / mc);
  }
  return percentile(ratios, level);
}

std::optional<Interval> paired_ratio_interval(const std::vector<double>& baseline_diffs,
                                              const std::vector<double>& candidate_diffs, double floor_ms,
                                              double level, int resamples) {
  const std::size_t n = candidate_diffs.size();
  if (n < 3 || baseline_diffs.size() != n || resamples <= 0) return std::nullopt;
  const double floor = std::max(floor_ms, 0.0);
  std::mt19937_64 rng(seed_of({&baseline_diffs, &candidate_diffs}));
  std::uniform_int_distribution<std::size_t> pick(0, n - 1);
  std::vector<double> ratios, b(n), c(n);
  ratios.reserve(static_cast<std::size_t>(resamples));
  for (int s = 0; s < resamples; ++s) {
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = pick(rng);
      b[k] = baseline_diffs[i];
      c[k] = candidate_diffs[i];
    }
    const double mb = std::max(median_of(b), floor), mc = std::max(median_of(c), floor);
    if (!(mb > 0) || !(mc > 0)) return std::nullopt;
    ratios.push_back(mb / mc);
  }
  return percentile(ratios, level);
}

}  // namespace kgym
