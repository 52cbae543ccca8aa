#pragma once
// Summaries of a set of verdicts: counts per outcome, fast_p, geometric-mean speedup.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kgym/verdict.hpp"

namespace kgym {

/// The speedup that fast_p compares with p: the lower bound of the verdict's 95% interval when it
/// has one (KernelBench issue #166: a candidate counts as faster than p only when its interval
/// clears p), else the point speedup. nullopt without a speedup. `compile` picks the
/// torch.compile baseline instead of eager.
std::optional<double> fast_p_speedup(const Verdict& v, bool compile = false);

/// Aggregate over verdicts (one per candidate).
struct Summary {
  int total = 0;
  std::map<Outcome, int> counts;     ///< verdicts per outcome
  int correct = 0;                   ///< verdicts with correct == true
  /// Verdicts that judged the candidate: total less the `task_error` ones (the task's reference
  /// failed; nothing of the candidate was judged, so they count neither for nor against it).
  int judged = 0;
  /// fast_p as KernelBench defines it: the fraction of the judged verdicts that are correct and
  /// have a speedup over eager strictly greater than p (fast_0 = correct and timed). Keys: 0, 1, 2.
  std::map<double, double> fast_p;
  std::optional<double> geomean_speedup;  ///< over passed verdicts with a speedup
  int timed = 0;                          ///< passed verdicts with a speedup
  int untimed = 0;                        ///< passed verdicts without one (timing not requested)
  double mean_reward = 0;                 ///< over the judged verdicts (task_error left out)
};

/// Computes the summary; the fast_p thresholds are `ps` (default 0, 1, 2).
Summary summarize(const std::vector<Verdict>& verdicts, const std::vector<double>& ps = {0, 1, 2});

/// A plain-text table of the summary for the terminal.
std::string render_summary(const Summary& s);

}  // namespace kgym

// ---------------------------------------------------------------------------------------------
// Study reports (kgym report): metrics per level / family / split over a run's verdicts, with
// samples (pass@k, best@k) and turns (first turn vs best of turns), and paired comparisons.

#include <cstdint>

#include <nlohmann/json.hpp>

#include "kgym/stats.hpp"

namespace kgym {

/// Grouping keys of one task.
struct TaskInfo {
  std::string level;   ///< "L1".."L3" for KernelBench ids, "gen" for generated tasks, else "other"
  std::string family;  ///< KernelBench level 1: matmul, activation, normalization, pooling,
                       ///< reduction, convolution, scan, loss, attention; level 2/3: fused /
                       ///< architecture; generated: the family of gen/<family>/<seed>
  std::string split;   ///< "kernelbench", or train / transfer / heldout from the generated seed
};

/// Derives the grouping keys from a task id ("L1/19_ReLU", "gen/relu/42-small").
TaskInfo task_info(const std::string& task_id);

/// Options of build_report.
struct ReportOptions {
  std::vector<double> ps = {0, 0.5, 0.8, 1, 1.5, 2};  ///< fast_p thresholds
  double implausible_speedup = 10;                      ///< speedups above this are flagged
  std::map<std::string, double> floor_ms;               ///< roofline floor per task id (ms)
  /// When set (GB/s, e.g. 4800 for an H200), each correct verdict also gets a write floor: its
  /// output elements (measured numel of the first case) x 2 bytes / bandwidth. No kernel can
  /// write its output faster; 2 bytes is the smallest float element (fp16/bf16), so the floor is
  /// conservative for float32 outputs.
  std::optional<double> bandwidth_gbs;
  /// Claimed speedups per candidate id (e.g. CUDA-L1's score_default / score_torch_compile_default)
  std::map<std::string, std::pair<std::optional<double>, std::optional<double>>> claims;
  int resamples = 10000;                                ///< paired bootstrap resamples
  std::uint64_t seed = 20240611;                        ///< bootstrap seed (fixed: reports are reproducible)
};

/// Metrics of one group of tasks. Unit: an attempt = one (task, sample); its verdict is the best
/// of its turns (passed with the highest eager speedup, then correct, then built), and its
/// first-turn verdict is turn 0. Rates are fractions of attempts.
struct GroupMetrics {
  std::string key;        ///< "all", "level", "family" or "split"
  std::string value;      ///< e.g. "L1", "matmul"; "all" for the whole run
  int tasks = 0, attempts = 0, verdicts = 0;
  std::map<std::string, int> outcomes;  ///< of the best-of-turns verdicts
  double build_rate = 0;    ///< built and loaded: not no_candidate/policy_rejected/build_failed/load timeout
  double correct_rate = 0;  ///< correct on every case (timing_invalid included)
  std::map<double, double> fast_p_eager, fast_p_compile;  ///< KernelBench fast_p (passed and speedup > p)
  std::optional<double> geomean_eager, geomean_compile;   ///< over passed attempts with that speedup
  int timed_eager = 0, timed_compile = 0;
  double first_turn_correct = 0, first_turn_fast1 = 0;  ///< turn 0 only
  double best_turn_correct = 0, best_turn_fast1 = 0;    ///< best of turns
  int max_turns = 1, min_samples = 0;   ///< turns seen; fewest samples of a task in the group
  std::map<int, double> pass_at_k;      ///< unbiased pass@k (correct), mean over tasks
  std::map<int, double> fast1_at_k;     ///< same estimator with "passed and speedup > 1"
  std::map<int, double> best_at_k;      ///< expected best eager speedup of k samples (0 if none correct)
  double hybrid_share = 0;  ///< correct attempts whose policy findings include hybrid_library_call
  int hybrid = 0;
};

/// A verdict flagged as implausible (to read by hand before trusting the number).
struct Flag {
  std::string task_id, candidate_id, reason;
  double speedup = 0;
  std::optional<double> runtime_ms, floor_ms;
};

/// Measured vs claimed speedups of one candidate (when claims are given).
struct ClaimRow {
  std::string task_id, candidate_id, outcome;
  std::optional<double> measured_eager, measured_compile, claimed_eager, claimed_compile;
};

/// One difference between two runs on their common tasks, with a paired bootstrap interval.
struct Difference {
  std::string metric;   ///< correct, fast_1, log_speedup (per task, over its attempts)
  double run = 0, baseline = 0;
  stats::Interval diff; ///< run - baseline
};

struct Comparison {
  std::string baseline_name;
  int common_tasks = 0;
  std::vector<Difference> differences;
  std::vector<std::string> fixed, broken;  ///< tasks correct now and not in the baseline / the reverse
};

/// Claimed vs measured, over the rows that carry a claim.
struct ClaimSummary {
  int rows = 0;                  ///< rows with a claimed eager speedup
  int passed = 0;                ///< of those, measured passed with an eager speedup
  double claimed_fast1 = 0;      ///< fraction of rows claimed > 1x
  double measured_fast1 = 0;     ///< fraction of rows measured passed and > 1x
  std::optional<double> claimed_geomean;          ///< over all rows with a claim
  std::optional<double> claimed_geomean_passed;   ///< over the rows that passed here
  std::optional<double> measured_geomean_passed;  ///< the same rows, measured
  std::optional<double> median_ratio;             ///< median measured / claimed (passed rows)
  std::optional<double> claimed_compile_geomean_passed, measured_compile_geomean_passed;
  int compile_pairs = 0;         ///< rows with both a claimed and a measured compile speedup
};

struct Report {
  std::string name;
  std::optional<ClaimSummary> claim_summary;
  std::vector<GroupMetrics> groups;  ///< "all" first, then per level, family, split
  std::vector<Flag> implausible;
  std::vector<ClaimRow> claims;      ///< empty without claims
  std::optional<Comparison> comparison;
  nlohmann::json manifest;           ///< the run's manifest (may be empty)
};

/// Computes the report of a run's verdicts. Verdicts of one attempt are told apart by their
/// candidate ids ("<task>@s<sample>t<turn>", run.hpp); other ids are numbered as samples in
/// file order, turn 0.
Report build_report(const std::vector<Verdict>& verdicts, const ReportOptions& options = {});

/// Adds the paired comparison with a baseline run: per task (common to both) the mean over its
/// attempts of correct, of fast_1, and of log speedup (0 when not passed), a paired bootstrap of
/// each difference, and the tasks fixed/broken (any attempt correct).
Comparison compare_runs(const std::vector<Verdict>& run, const std::vector<Verdict>& baseline,
                        const ReportOptions& options = {});

/// Reads CUDA-L1 style claims from a JSONL file: candidate id "<file name>:<line>" (as
/// load_evaluations names rows) or the row's candidate_id -> (score_default,
/// score_torch_compile_default). Error(input) when the file cannot be read.
std::map<std::string, std::pair<std::optional<double>, std::optional<double>>> read_claims(
    const std::filesystem::path& jsonl);

nlohmann::json to_json(const Report& report);
/// The terminal tables of a report.
std::string render_report(const Report& report);
/// A markdown version of the main tables (for notes in bench/).
std::string render_report_markdown(const Report& report);

}  // namespace kgym
