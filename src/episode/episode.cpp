// Episodes: turns, rewards, returns and observations (episode.hpp).
#include <algorithm>

#include "kgym/episode.hpp"
#include "kgym/returns.hpp"

namespace kgym {

Episode::Episode(std::string id, Task task, EpisodeOptions options)
    : id_(std::move(id)), task_(std::move(task)), options_(std::move(options)) {
  if (options_.max_turns < 1 || options_.max_turns > 64) {
    throw RequestError(RequestProblem::malformed,
                       "max_turns must be between 1 and 64, got " + std::to_string(options_.max_turns));
  }
  if (!(options_.gamma >= 0.0 && options_.gamma <= 1.0)) {
    throw RequestError(RequestProblem::malformed, "gamma must be in [0, 1], got " + std::to_string(options_.gamma));
  }
  if (options_.return_kind != "sum" && options_.return_kind != "max") {
    throw RequestError(RequestProblem::malformed,
                       "return must be \"sum\" or \"max\", got \"" + options_.return_kind + "\"");
  }
  if (options_.reward.needs_roofline_floor() && !(options_.roofline_floor_ms && *options_.roofline_floor_ms > 0)) {
    throw RequestError(RequestProblem::malformed,
                       "reward `" + std::string(options_.reward.name()) + "` needs a roofline floor for task " + task_.id +
                           "; pass options.roofline_floor_ms or choose kevin, log_speed or stepped");
  }
  options_.prompt.max_turns = options_.max_turns;
  try {
    prompt_ = build_prompt(task_, options_.prompt);
  } catch (const Error& e) {
    throw RequestError(RequestProblem::malformed, e.what());
  }
}

Observation Episode::base_observation() const {
  Observation o;
  o.episode_id = id_;
  o.task_id = task_.id;
  o.turn = turns_used();
  o.max_turns = options_.max_turns;
  o.done = done_;
  if (done_) o.returns = returns();
  return o;
}

Observation Episode::start() const {
  Observation o = base_observation();
  o.prompt = prompt_;
  return o;
}

void Episode::check_submission(const std::string& code) const {
  if (done_) {
    throw RequestError(RequestProblem::episode_done,
                       "episode " + id_ + " has ended; call reset to start a new one");
  }
  if (code.size() > options_.max_code_bytes) {
    throw RequestError(RequestProblem::too_large,
                       "submitted code is " + std::to_string(code.size()) + " bytes; the limit is " +
                           std::to_string(options_.max_code_bytes) + " bytes");
  }
  if (code.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw RequestError(RequestProblem::malformed, "submit_kernel needs non-empty `code` defining ModelNew");
  }
}

Observation Episode::record_submission(std::string code, Verdict verdict) {
  check_submission(code);
  ++step_count_;
  Turn t;
  t.index = turns_used() + 1;
  t.code = std::move(code);
  t.feedback = make_feedback(verdict);
  t.feedback_text = render_feedback(t.feedback, options_.feedback_chars);
  t.reward = options_.reward(verdict, RewardContext{.roofline_floor_ms = options_.roofline_floor_ms, .noise_gate = std::nullopt});
  t.verdict = std::move(verdict);
  turns_.push_back(std::move(t));
  if (turns_used() >= options_.max_turns) finish();

  const Turn& last = turns_.back();
  Observation o = base_observation();
  o.feedback_turn = last.index;
  o.feedback = last.feedback;
  o.feedback_text = last.feedback_text;
  o.reward = last.reward;
  if (!done_) {
    o.prompt = "Verdict of your submission " + std::to_string(last.index) + " of " +
               std::to_string(options_.max_turns) + ":\n" + last.feedback_text +
               "\nRevise your ModelNew and answer with the complete code block.\n";
    o.history = compress_history(turns_, options_.history_tokens);
  }
  return o;
}

Observation Episode::inspect(int turn) {
  if (turn < 1 || turn > turns_used()) {
    throw RequestError(RequestProblem::malformed,
                       "inspect_evaluation: turn " + std::to_string(turn) + " does not exist; turns 1.." +
                           std::to_string(turns_used()) + " were taken");
  }
  ++step_count_;
  const Turn& t = turns_[static_cast<std::size_t>(turn - 1)];
  Observation o = base_observation();
  o.feedback_turn = t.index;
  o.feedback = t.feedback;
  o.feedback_text = render_feedback(t.feedback, std::string::npos);  // full, not cut
  return o;
}

Observation Episode::finalize() {
  if (done_) {
    throw RequestError(RequestProblem::episode_done, "episode " + id_ + " has already ended");
  }
  ++step_count_;
  finish();
  Observation o = base_observation();
  o.reward = o.returns->final_reward;
  return o;
}

void Episode::finish() { done_ = true; }

EpisodeReturns Episode::returns() const {
  EpisodeReturns r;
  r.return_kind = options_.return_kind;
  r.gamma = options_.gamma;
  for (const auto& t : turns_) r.rewards.push_back(t.reward);
  r.returns = options_.return_kind == "max" ? discounted_max_returns(r.rewards, options_.gamma)
                                            : discounted_sum_returns(r.rewards, options_.gamma);
  for (const auto& t : turns_) {
    if (!t.verdict.correct) continue;
    if (!r.best_turn || t.reward > r.rewards[static_cast<std::size_t>(*r.best_turn - 1)]) r.best_turn = t.index;
  }
  if (r.best_turn) r.final_reward = r.rewards[static_cast<std::size_t>(*r.best_turn - 1)];
  return r;
}

EpisodeState Episode::state() const {
  EpisodeState s;
  s.episode_id = id_;
  s.task_id = task_.id;
  s.step_count = step_count_;
  s.turns_used = turns_used();
  s.max_turns = options_.max_turns;
  s.done = done_;
  s.reward_name = options_.reward.name();
  for (const auto& t : turns_) {
    s.turns.push_back({t.index, t.verdict.outcome, t.reward, t.verdict.speedup_eager, summarize_feedback(t.feedback)});
  }
  if (done_) s.returns = returns();
  return s;
}

std::string compress_history(const std::vector<Turn>& turns, std::size_t budget_tokens) {
  if (turns.empty()) return {};
  // Decide newest first what each turn keeps, then write oldest first.
  enum class Keep { none, summary, code, full };
  std::vector<Keep> keep(turns.size(), Keep::none);
  std::vector<std::string> parts(turns.size());
  std::size_t used = 0;
  const std::size_t note_reserve = 12;  // room for the "(N earlier turns omitted)" line
  const std::size_t budget = budget_tokens > note_reserve ? budget_tokens - note_reserve : 0;
  for (std::size_t k = turns.size(); k-- > 0;) {
    const Turn& t = turns[k];
    const std::string head = "Turn " + std::to_string(t.index) + ": " + summarize_feedback(t.feedback) + "\n";
    const std::string code = "```python\n" + t.code + (t.code.empty() || t.code.back() == '\n' ? "" : "\n") + "```\n";
    const bool newest = k + 1 == turns.size();
    std::vector<std::pair<Keep, std::string>> options;
    if (newest) options.push_back({Keep::full, head + code + "Feedback:\n" + t.feedback_text + "\n"});
    options.push_back({Keep::code, head + code});
    options.push_back({Keep::summary, head});
    for (auto& [kind, text] : options) {
      std::size_t cost = estimate_tokens(text);
      if (used + cost <= budget) {
        keep[k] = kind;
        parts[k] = std::move(text);
        used += cost;
        break;
      }
    }
  }
  std::string out;
  std::size_t dropped = 0;
  for (std::size_t k = 0; k < turns.size(); ++k) {
    if (keep[k] == Keep::none) ++dropped;
  }
  if (dropped > 0) out += "(" + std::to_string(dropped) + " earlier turns omitted)\n";
  for (std::size_t k = 0; k < turns.size(); ++k) out += parts[k];
  return out;
}

}  // namespace kgym
