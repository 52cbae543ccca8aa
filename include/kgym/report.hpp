#pragma once
// Summaries of a set of verdicts: counts per outcome, fast_p, geometric-mean speedup.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kgym/verdict.hpp"

namespace kgym {

/// Aggregate over verdicts (one per candidate).
struct Summary {
  int total = 0;
  std::map<Outcome, int> counts;     ///< verdicts per outcome
  int correct = 0;                   ///< verdicts with correct == true
  /// fast_p as KernelBench defines it: the fraction of all verdicts that are correct and have a
  /// speedup over eager strictly greater than p (fast_0 = correct and timed). Keys: 0, 1, 2.
  std::map<double, double> fast_p;
  std::optional<double> geomean_speedup;  ///< over passed verdicts with a speedup
  int timed = 0;                          ///< passed verdicts with a speedup
  double mean_reward = 0;
};

/// Computes the summary; the fast_p thresholds are `ps` (default 0, 1, 2).
Summary summarize(const std::vector<Verdict>& verdicts, const std::vector<double>& ps = {0, 1, 2});

/// A plain-text table of the summary for the terminal.
std::string render_summary(const Summary& s);

}  // namespace kgym
