#pragma once
// Confidence intervals of a speedup (docs/timing.md, "Speedup and its interval").

#include <cstdint>
#include <optional>
#include <vector>

namespace kgym {

/// A two-sided confidence interval [lo, hi] of a speedup (a ratio of times, dimensionless).
struct Interval {
  double lo = 0, hi = 0;
  /// Whether `x` lies inside (both ends included).
  bool holds(double x) const { return lo <= x && x <= hi; }
};

/// Resamples of the bootstraps below; 2000 keeps the percentile ends' Monte Carlo error below
/// about 1% of the interval's width (Efron & Tibshirani 1993, ch. 19) at well under 1 ms here.
inline constexpr int kBootstrapResamples = 2000;

/// Interval of median(baseline) / median(candidate) from interleaved timing rounds: a two-stage
/// (clustered) percentile bootstrap (Davison & Hinkley 1997, "Bootstrap Methods and their
/// Application", sec. 3.8: resample the clusters, then the units within each drawn cluster;
/// percentile interval, Efron & Tibshirani 1993, "An Introduction to the Bootstrap", ch. 13).
/// The rounds are the clusters: round r of the candidate and round r of the baseline ran one
/// after the other, so each resample draws round indices once, with replacement, for both sides
/// (paired by round: drift between rounds moves both), then the calls of each drawn round with
/// replacement, per side. Times in ms, in the order taken; `*_rounds` holds the number of calls
/// of each round in order (summing to the times' size; empty = one round). `level` is the
/// coverage (0.95: the 2.5th and 97.5th percentiles). Deterministic: the resampling's seed is a
/// hash of the times, so one set of measurements always gives one interval. nullopt when either
/// side has no positive time or the round counts do not add up.
std::optional<Interval> ratio_of_medians_interval(const std::vector<double>& baseline_ms,
                                                  const std::vector<int>& baseline_rounds,
                                                  const std::vector<double>& candidate_ms,
                                                  const std::vector<int>& candidate_rounds, double level = 0.95,
                                                  int resamples = kBootstrapResamples);

/// Interval of max(median(baseline_diffs), floor) / max(median(candidate_diffs), floor) for the
/// wall check's paired requests: element k of each is request k's time minus the mean of the
/// calibrations around it (ms for all N calls; runner::WallCheckSeries::differences), taken
/// between the same two calibrations on both sides, so each resample draws the indices k once
/// for both sides (a paired percentile bootstrap, Efron & Tibshirani 1993, ch. 13). `floor_ms`
/// is the check's resolution: a side whose calls do not stand above it is taken at it, on both
/// sides alike (runner::WallCheckSeries::calls_ms). nullopt when the two have other sizes, fewer
/// than 3 pairs, or a non-positive ratio can arise.
std::optional<Interval> paired_ratio_interval(const std::vector<double>& baseline_diffs,
                                              const std::vector<double>& candidate_diffs, double floor_ms,
                                              double level = 0.95, int resamples = kBootstrapResamples);

}  // namespace kgym
