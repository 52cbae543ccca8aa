#pragma once
// Re-verification of a training corpus of (reference, solution) pairs before supervised
// fine-tuning (`kgym corpus verify`): each pair is scaled to a target input size, judged by the
// engine under a policy profile, decontaminated against a benchmark suite and capped per module
// and per family; the kept rows carry their verdict. The recipe follows the published Triton gym
// that verified KernelBook pairs at about a million elements (issue 30 names it); the code is kgym's.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgym/engine.hpp"
#include "kgym/options.hpp"

namespace kgym::corpus {

/// Options of one verification run. Defaults are written here and nowhere else.
struct VerifyOptions {
  std::filesystem::path input;         ///< JSONL rows: reference, solution, module_id?, family?, source?
  std::filesystem::path out;           ///< kept rows, each with "verdict" (JSONL)
  std::filesystem::path report;        ///< the report (JSON); default <out>.report.json
  std::filesystem::path log;           ///< one decision per input line (JSONL, the resume state); default <out>.log.jsonl
  std::int64_t target_elements = 1'000'000;  ///< the largest input's element count each pair is scaled to
  policy::Profile profile = policy::Profile::strict;  ///< policy profile the solutions are judged under
  std::optional<std::filesystem::path> decontaminate;  ///< benchmark suite to decontaminate against
  double threshold = 0.6;              ///< token-set Jaccard above which a reference is contaminated
  int max_per_module = 2;              ///< kept pairs per module_id (0: no cap)
  int max_per_family = 0;              ///< kept pairs per family (0: no cap)
  std::int64_t max_tokens = 0;         ///< token budget of reference + solution (0: no cap); see approx_tokens
  bool resume = false;                 ///< keep the decisions in `log` and skip their lines
  EvalOptions eval;                    ///< cases, timing, compile baseline (scale and profile are set per row)
};

/// The token count the --max-tokens budget uses: ceil(bytes / 4), the usual approximation of a
/// BPE tokenizer on English and code (about 4 bytes per token for GPT-style vocabularies on
/// Python; a real tokenizer gives within about 25% of it on this corpus's kind of code).
std::int64_t approx_tokens(const std::string& text);

/// Why a row was dropped, or "kept". Stable strings (report keys).
inline constexpr const char* kKept = "kept";

/// The outcome of one input line.
struct Decision {
  int line = 0;                 ///< 1-based line in the input
  std::string status;           ///< "kept", or the reason it was dropped: malformed, over_budget,
                                ///< contaminated, max_per_module, max_per_family, not_scalable,
                                ///< task_error, or the verdict's outcome (incorrect, policy_rejected, ...)
  std::string detail;           ///< the message (the verdict's headline, the matching problem, ...)
  std::string module_id, family;
  nlohmann::json verdict;       ///< for judged rows: outcome, speedups, scale, input_elements

  nlohmann::json to_json() const;
  static Decision from_json(const nlohmann::json& j);
};

/// Counts of a run: kept and dropped by reason, overall and by family.
struct Report {
  int rows = 0, kept = 0;
  std::map<std::string, int> by_reason;                               ///< status -> rows
  std::map<std::string, std::map<std::string, int>> by_family;        ///< family -> status -> rows
  std::vector<nlohmann::json> malformed;                              ///< {line, error}
  nlohmann::json to_json() const;
  std::string render() const;  ///< a short table for the terminal
};

/// The scale at which a row's largest input has about `target` elements: probes the reference at
/// scale 1 and 0.5 to learn how the element count grows with the scale (count ~ scale^k), then
/// returns (target / count(1))^(1/k); 1 when the row has no size constants (ints >= 16) to scale.
/// Throws nothing: a reference that does not run gives std::nullopt and `why`.
std::optional<double> scale_for_target(Engine& engine, const Task& task, std::int64_t target, std::string* why);

/// Runs the verification; `progress` (may be empty) is called once per decided line.
Report verify(Engine& engine, const VerifyOptions& options, const std::function<void(const Decision&)>& progress = {});

}  // namespace kgym::corpus
