#pragma once
// Episodes of the RL environment: one task, up to max_turns turns; each turn is one submitted
// kernel, its verdict, the feedback the model sees and a reward. Also the prompt builder, the
// feedback schema and its rendered text, and context compression for long trajectories.
// JSON-free: the server turns these structs into JSON at its edge (docs/server.md).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kgym/error.hpp"
#include "kgym/options.hpp"
#include "kgym/outcome.hpp"
#include "kgym/reward.hpp"
#include "kgym/task.hpp"
#include "kgym/verdict.hpp"

namespace kgym {

/// What went wrong with a request to the environment; the server maps each to an error code and
/// an HTTP status (docs/server.md, "Errors").
enum class RequestProblem {
  malformed,        ///< a field is missing, has the wrong type or an invalid value
  unknown_task,     ///< task_id / split selects no task of the suite
  unknown_episode,  ///< no open episode with this id
  episode_done,     ///< a step on an episode that has ended
  episode_busy,     ///< a step while another step of the same episode is in flight
  too_large,        ///< submitted code longer than the limit
  capacity,         ///< too many open episodes
  cancelled,        ///< the client went away; queued work was cancelled
};

/// The error a request gets: an Error(usage) with the problem it names.
class RequestError : public Error {
 public:
  RequestError(RequestProblem problem, const std::string& message,
               std::source_location where = std::source_location::current())
      : Error(ErrorKind::usage, message, where), problem_(problem) {}
  RequestProblem problem() const noexcept { return problem_; }

 private:
  RequestProblem problem_;
};

/// How the prompt is written.
struct PromptOptions {
  std::string backend = "cuda";            ///< "cuda" (load_inline), "triton" or "cpu" (C++ load_inline)
  policy::Profile policy_profile = policy::Profile::strict;  ///< the rules the prompt states (docs/policy_rules.md)
  std::string precision = "fp32";          ///< the precision the outputs must keep
  std::string style = "one_shot";          ///< "one_shot" (KernelBench style, with an example) | "zero_shot"
  int max_turns = 1;                       ///< mentioned in the prompt when > 1
};

/// Per-episode settings, chosen at reset (defaults from the server's command line).
struct EpisodeOptions {
  int max_turns = 4;                 ///< submissions allowed; 1 = single-turn (ends after the first)
  RewardName reward;                 ///< per-turn reward (reward.hpp; default kevin)
  std::optional<double> roofline_floor_ms;  ///< the task's roofline floor, needed by `roofline`
  double gamma = 0.4;                ///< discount of the episode's returns
  std::string return_kind = "sum";   ///< "sum" (discounted sum) or "max" (discounted max)
  PromptOptions prompt;
  std::size_t max_code_bytes = 256 * 1024;  ///< longer submissions are rejected (too_large)
  std::size_t feedback_chars = 2400;  ///< rendered feedback is cut to this (about 600 tokens)
  std::size_t history_tokens = 6000;  ///< budget of the compressed history in observations
};

/// One policy finding, as the model should see it.
struct PolicyHit {
  std::string rule;      ///< rule id, e.g. "no-torch-fallback"
  std::string severity;  ///< "reject" | "warn"
  std::string message;
  int line = 0;          ///< 1-based source line, 0 when unknown
};

/// The first failing correctness case.
struct CaseFeedback {
  int index = 0;
  std::string transform;            ///< value transform of the case (nominal, scale3, ...)
  std::string message;              ///< exception / contract detail, empty for value mismatches
  std::int64_t mismatches = 0, numel = 0;
  std::vector<std::int64_t> first_mismatch_index;  ///< multi-index of the first mismatching element
  double max_abs_error = 0, mean_abs_error = 0, max_rel_error = 0;
  double atol = 0, rtol = 0;
};

/// Timings of a correct candidate (ms, medians over timed calls).
struct TimingFeedback {
  double runtime_ms = 0;
  double spread = 0;                 ///< IQR / median of the candidate's times
  int calls = 0;                     ///< timed calls of the candidate
  std::optional<double> ref_runtime_ms, compile_runtime_ms;
};

/// Machine-readable feedback of one turn (docs/server.md, "Feedback").
struct Feedback {
  Outcome outcome = Outcome::runtime_error;
  Gate gate = Gate::none;
  bool correct = false;
  int cases_passed = 0, cases_total = 0;
  std::vector<std::string> messages;   ///< the verdict's reasons, the first is the headline
  std::vector<PolicyHit> policy_hits;
  std::string log_excerpt;             ///< compiler log or traceback excerpt (errors first)
  std::optional<CaseFeedback> failing_case;
  std::optional<TimingFeedback> timing;
  std::optional<double> speedup_eager, speedup_compile;
  std::optional<Interval> speedup_eager_ci, speedup_compile_ci;  ///< the verdict's 95% intervals
};

/// Builds the feedback of a verdict. The log excerpt keeps at most `log_chars` characters,
/// preferring lines that mention an error.
Feedback make_feedback(const Verdict& v, std::size_t log_chars = 1200);

/// Renders feedback as prompt text, at most `max_chars` characters (cut with a marker).
std::string render_feedback(const Feedback& f, std::size_t max_chars = 2400);

/// One-line summary of a turn's feedback, e.g. "incorrect: 3/5 cases; max abs error 0.5".
std::string summarize_feedback(const Feedback& f);

/// Rough token count of text for budgeting (1 token per 4 characters, rounded up); the same
/// heuristic everywhere so that budgets are consistent, not exact for any tokenizer.
std::size_t estimate_tokens(const std::string& text) noexcept;

/// The prompt for a task in KernelBench's one-shot style: the rules (backend, policy profile,
/// precision, what is forbidden, output format), an example in the task's backend (one_shot
/// style) and the reference source. Throws Error(usage) for an unknown backend, profile or style.
std::string build_prompt(const Task& task, const PromptOptions& options);

/// The code of a submission: the last fenced code block (```python ... ``` or ``` ... ```) when
/// there is one, else the text itself.
std::string extract_code(const std::string& submission);

/// One turn of an episode.
struct Turn {
  int index = 0;          ///< 1-based
  std::string code;       ///< the kernel as judged (reasoning never stored)
  Verdict verdict;
  Feedback feedback;
  std::string feedback_text;  ///< rendered feedback (render_feedback)
  double reward = 0;
};

/// The history the next turn should see (earlier kernels, one-line summaries and feedback, no
/// earlier reasoning), newest first in priority, oldest first in the text, within `budget_tokens`
/// (estimate_tokens). The newest turn keeps its code and full feedback when it fits; older turns
/// keep their code while the budget allows and otherwise shrink to their summary line; turns
/// that do not fit at all are counted in a leading note. Empty for no turns.
std::string compress_history(const std::vector<Turn>& turns, std::size_t budget_tokens);

/// Returns of an ended episode.
struct EpisodeReturns {
  std::vector<double> rewards;        ///< per turn
  std::vector<double> returns;        ///< per turn, `return_kind` with `gamma`
  std::string return_kind;
  double gamma = 0;
  std::optional<int> best_turn;       ///< the correct turn with the highest reward
  double final_reward = 0;            ///< reward of best_turn, 0 when no turn was correct
};

/// What the environment answers after reset and each step.
struct Observation {
  std::string episode_id, task_id;
  int turn = 0;                       ///< turns used so far
  int max_turns = 0;
  std::string prompt;                 ///< reset: the task prompt; after a turn: the next user message
  std::optional<int> feedback_turn;   ///< the turn `feedback` belongs to
  std::optional<Feedback> feedback;
  std::string feedback_text;
  std::string history;                ///< compressed earlier turns (compress_history)
  std::optional<double> reward;       ///< the reward of this step's turn; none for reset/inspect
  bool done = false;
  std::optional<EpisodeReturns> returns;  ///< set once done
};

/// One line per turn in the state.
struct TurnSummary {
  int index = 0;
  Outcome outcome = Outcome::runtime_error;
  double reward = 0;
  std::optional<double> speedup_eager;
  std::string summary;
};

/// The episode's state (OpenEnv `State`: episode_id and step_count plus kgym fields).
struct EpisodeState {
  std::string episode_id, task_id;
  int step_count = 0;                 ///< actions taken (submissions, inspections, finalize)
  int turns_used = 0, max_turns = 0;
  bool done = false;
  std::string reward_name;
  std::vector<TurnSummary> turns;
  std::optional<EpisodeReturns> returns;
};

/// One episode. Not thread-safe: the caller serialises access (the server holds a lock per
/// episode). Evaluation happens outside: the caller judges the code and hands in the verdict.
class Episode {
 public:
  /// Throws RequestError(malformed) for invalid options (max_turns < 1, unknown reward or return
  /// kind, gamma outside [0, 1], roofline without a floor) and Error(usage) from build_prompt.
  Episode(std::string id, Task task, EpisodeOptions options);

  const std::string& id() const noexcept { return id_; }
  const Task& task() const noexcept { return task_; }
  const EpisodeOptions& options() const noexcept { return options_; }
  bool done() const noexcept { return done_; }
  int turns_used() const noexcept { return static_cast<int>(turns_.size()); }
  const std::vector<Turn>& turns() const noexcept { return turns_; }

  /// The reset observation: the prompt, turn 0.
  Observation start() const;
  /// Checks that `code` may be submitted now; throws RequestError(episode_done) after the end and
  /// RequestError(too_large) / RequestError(malformed) for oversized or empty code.
  void check_submission(const std::string& code) const;
  /// Records a judged submission as the next turn: feedback, reward; ends the episode when the
  /// last turn is used. Calls check_submission first.
  Observation record_submission(std::string code, Verdict verdict);
  /// The full feedback of an earlier turn (1-based); RequestError(malformed) for a turn not taken.
  Observation inspect(int turn);
  /// Ends the episode; the best correct turn counts. RequestError(episode_done) when already done.
  Observation finalize();
  EpisodeState state() const;

 private:
  Observation base_observation() const;
  void finish();
  EpisodeReturns returns() const;

  std::string id_;
  Task task_;
  EpisodeOptions options_;
  std::string prompt_;
  std::vector<Turn> turns_;
  int step_count_ = 0;
  bool done_ = false;
};

}  // namespace kgym
