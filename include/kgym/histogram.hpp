#pragma once
// A cumulative histogram of durations in seconds with fixed bucket bounds, in the shape
// Prometheus's text format wants (le buckets, sum, count). Not thread-safe: the owner locks.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace kgym {

/// Keeps the last `window` samples of a latency series (ms) for its percentiles: appends until
/// the window is full, then overwrites the oldest (`next` is the ring's write position). Used
/// by the server's scheduler and the queue evaluator.
inline void add_sample(std::vector<double>& samples, std::size_t& next, double value,
                       std::size_t window = 4096) {
  if (samples.size() < window) {
    samples.push_back(value);
  } else {
    samples[next] = value;
    next = (next + 1) % window;
  }
}

struct Histogram {
  /// Upper bounds in seconds, from 5 ms (a queue hop) to 10 min (a cold build with full timing).
  static constexpr std::array<double, 16> bounds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                                    2.5,   5,    10,    30,   60,  120,  300, 600};
  std::array<std::uint64_t, bounds.size()> counts{};  ///< per bucket (not cumulative)
  double sum = 0;
  std::uint64_t count = 0;

  void observe(double seconds) {
    for (std::size_t i = 0; i < bounds.size(); ++i) {
      if (seconds <= bounds[i]) {
        ++counts[i];
        break;
      }
    }
    sum += seconds;
    ++count;
  }
  /// {"buckets": [bounds], "counts": [cumulative counts], "sum", "count"}; +Inf is `count`.
  nlohmann::json json() const {
    nlohmann::json cumulative = nlohmann::json::array();
    std::uint64_t c = 0;
    for (auto n : counts) cumulative.push_back(c += n);
    return {{"buckets", bounds}, {"counts", cumulative}, {"sum", sum}, {"count", count}};
  }
};

}  // namespace kgym
