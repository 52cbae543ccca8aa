#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "kgym/error.hpp"
#include "kgym/generate.hpp"
#include "kgym/hash.hpp"
#include "kgym/run.hpp"

namespace kgym {
namespace fs = std::filesystem;

namespace {

using Key = std::tuple<std::string, int, int>;  // task, sample, turn

/// Appends JSON lines to a file, flushed per line, under one mutex.
class JsonlWriter {
 public:
  explicit JsonlWriter(const fs::path& file) : out_(file, std::ios::app) {
    if (!out_) throw Error(ErrorKind::input, "cannot write " + file.string());
  }
  void write(const nlohmann::json& j) {
    std::lock_guard lock(mutex_);
    out_ << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    out_.flush();
  }

 private:
  std::ofstream out_;
  std::mutex mutex_;
};

std::map<Key, nlohmann::json> read_generations(const fs::path& file) {
  std::map<Key, nlohmann::json> out;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("task_id")) continue;  // a torn last line: that turn is asked again
    out[{j["task_id"].get<std::string>(), j.value("sample", 0), j.value("turn", 0)}] = j;
  }
  return out;
}

}  // namespace

std::vector<ChatMessage> turn_messages(const Episode& episode, const Observation& last, std::size_t history_tokens) {
  const std::string task_prompt = episode.start().prompt;
  const auto& turns = episode.turns();
  if (turns.empty()) return {{"user", task_prompt}};
  std::vector<Turn> older(turns.begin(), turns.end() - 1);
  std::string first = task_prompt;
  if (!older.empty())
    first += "\n\nYour earlier submissions and their verdicts:\n" + compress_history(older, history_tokens);
  return {{"user", first}, {"assistant", "```python\n" + turns.back().code + "\n```"}, {"user", last.prompt}};
}

namespace {

/// One generation run's shared state: the turns already recorded (kept: a resumed run asks only
/// the others), the output files, and the statistics and token count the worker threads share.
struct GenerateState {
  const ChatClient& client;
  const GenerateOptions& o;
  Engine* engine;
  const std::map<Key, nlohmann::json> done;
  JsonlWriter generations, candidates;
  std::unique_ptr<JsonlWriter> verdicts;  ///< multi-turn runs only
  GenerateStats stats;
  std::mutex stats_mutex;
  std::atomic<long> tokens_used{0};
  std::atomic<bool> budget_hit{false};

  GenerateState(const fs::path& run_dir, const ChatClient& chat, const GenerateOptions& options, Engine* eng)
      : client(chat), o(options), engine(eng), done(read_generations(run_dir / run::kGenerations)),
        generations(run_dir / run::kGenerations), candidates(run_dir / run::kCandidates) {
    if (o.turns > 1) verdicts = std::make_unique<JsonlWriter>(run_dir / run::kVerdicts);
    for (const auto& [k, j] : done)
      tokens_used += j.value("prompt_tokens", 0L) + j.value("completion_tokens", 0L);
  }

  void run_episode(const Task& task, int sample);
  bool ask_turn(const Task& task, int sample, int turn, Episode& episode, Observation& obs, std::size_t history_tokens,
                bool& complete);
};

/// One episode (task, sample): each turn reused from `done` where recorded (with its verdict, for
/// several turns), else asked, until the turns or the token budget run out or the episode refuses
/// a submission. Counted complete or incomplete.
void GenerateState::run_episode(const Task& task, int sample) {
  EpisodeOptions eopt = o.episode;
  eopt.max_turns = o.turns;
  Episode episode(run::make_candidate_id(task.id, sample, 0), task, eopt);
  Observation obs = episode.start();
  bool complete = true;
  for (int turn = 0; turn < o.turns; ++turn) {
    auto it = done.find({task.id, sample, turn});
    const bool judged_record = it != done.end() && it->second.contains("verdict");
    if (it != done.end() && (o.turns == 1 || judged_record)) {
      if (o.turns > 1) obs = episode.record_submission(it->second.value("code", ""), it->second["verdict"].get<Verdict>());
      std::lock_guard lock(stats_mutex);
      ++stats.turns_reused;
      continue;
    }
    if (o.token_budget && tokens_used.load() >= *o.token_budget) {
      budget_hit = true;
      complete = false;
      break;
    }
    if (!ask_turn(task, sample, turn, episode, obs, eopt.history_tokens, complete)) break;
  }
  std::lock_guard lock(stats_mutex);
  ++(complete ? stats.samples_complete : stats.samples_incomplete);
}

/// One turn asked of the model: its code extracted, judged for feedback when there are several
/// turns, and written (candidates, generations, verdicts). Returns false when the episode
/// refused the submission (the episode ends; `complete` is cleared).
bool GenerateState::ask_turn(const Task& task, int sample, int turn, Episode& episode, Observation& obs,
                             std::size_t history_tokens, bool& complete) {
  const auto t0 = std::chrono::steady_clock::now();
  nlohmann::json extra = nlohmann::json::object();
  if (o.temperature > 0) extra["seed"] = static_cast<long>(sample * 1000 + turn);
  ChatResult r = client.complete(o.model, turn_messages(episode, obs, history_tokens), o.temperature,
                                 o.max_tokens, extra);
  tokens_used += r.prompt_tokens + r.completion_tokens;
  // The server's extraction: the last fenced block, else the text itself.
  std::string code = extract_code(r.content);
  if (code.find_first_not_of(" \t\r\n") == std::string::npos) code = "# the completion held no code\n";
  const std::string cid = run::make_candidate_id(task.id, sample, turn);
  nlohmann::json rec = {{"task_id", task.id}, {"sample", sample}, {"turn", turn}, {"candidate_id", cid},
                        {"model", o.model}, {"completion", r.content}, {"code", code},
                        {"finish_reason", r.finish_reason}, {"prompt_tokens", r.prompt_tokens},
                        {"completion_tokens", r.completion_tokens}, {"attempts", r.attempts},
                        {"request_seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}};
  if (o.turns > 1) {
    Candidate cand;
    cand.id = cid;
    cand.task_id = task.id;
    cand.code = code;
    Verdict v = engine->evaluate(task, cand, o.eval);
    rec["outcome"] = to_string(v.outcome);
    rec["verdict"] = v;
    verdicts->write(nlohmann::json(v));
    try {
      obs = episode.record_submission(code, v);
      rec["feedback"] = obs.feedback_text;
    } catch (const RequestError& e) {  // e.g. code above the episode's size limit
      rec["episode_error"] = e.what();
      complete = false;
    }
  }
  candidates.write({{"task_id", task.id}, {"candidate_id", cid}, {"code", code}, {"sample", sample}, {"turn", turn}});
  generations.write(rec);
  {
    std::lock_guard lock(stats_mutex);
    ++stats.requests;
    stats.retries += r.attempts - 1;
    stats.prompt_tokens += r.prompt_tokens;
    stats.completion_tokens += r.completion_tokens;
    ++stats.turns_asked;
  }
  return !rec.contains("episode_error");
}

/// The run's manifest: the tasks, the generation options, the tokens used, the first prompt's
/// hash and this phase's statistics.
void write_generate_manifest(const fs::path& run_dir, const std::vector<Task>& tasks, const GenerateOptions& o,
                             const GenerateStats& stats, long tokens_used) {
  std::vector<std::string> ids;
  for (const auto& t : tasks) ids.push_back(t.id);
  EpisodeOptions first_opts = o.episode;
  first_opts.max_turns = o.turns;
  const std::string prompt_hash = sha256_hex(Episode("manifest", tasks.front(), first_opts).start().prompt);
  nlohmann::json phase = {{"seconds", stats.seconds}, {"requests", stats.requests}, {"retries", stats.retries},
                          {"prompt_tokens", stats.prompt_tokens}, {"completion_tokens", stats.completion_tokens},
                          {"turns_asked", stats.turns_asked}, {"turns_reused", stats.turns_reused},
                          {"samples_complete", stats.samples_complete}, {"samples_incomplete", stats.samples_incomplete},
                          {"budget_exhausted", stats.budget_exhausted}, {"finished", run::utc_now()}};
  run::update_manifest(run_dir, {{"kgym", KGYM_VERSION},
                                 {"tasks", ids},
                                 {"generate",
                                  {{"model", o.model},
                                   {"samples", o.samples},
                                   {"turns", o.turns},
                                   {"temperature", o.temperature},
                                   {"max_tokens", o.max_tokens},
                                   {"concurrency", o.concurrency},
                                   {"token_budget", o.token_budget ? nlohmann::json(*o.token_budget) : nlohmann::json(nullptr)},
                                   {"tokens_used", tokens_used},
                                   {"history_tokens", o.episode.history_tokens},
                                   {"backend", o.episode.prompt.backend},
                                   {"prompt_style", o.episode.prompt.style},
                                   {"policy_profile", policy::to_string(o.episode.prompt.policy_profile)},
                                   {"first_prompt_sha256", prompt_hash},
                                   {"last_phase", phase}}}});
}

}  // namespace

GenerateStats generate_run(const fs::path& run_dir, const std::vector<Task>& tasks, const ChatClient& client,
                           const GenerateOptions& o, Engine* engine) {
  if (o.samples < 1 || o.turns < 1) throw Error(ErrorKind::usage, "--samples and --turns must be at least 1");
  if (o.turns > 1 && !engine) throw Error(ErrorKind::usage, "multi-turn generation needs an engine for feedback");
  if (tasks.empty()) throw Error(ErrorKind::input, "no task selected");
  fs::create_directories(run_dir);
  const auto started = std::chrono::steady_clock::now();
  GenerateState state(run_dir, client, o, engine);

  struct Slot {
    const Task* task;
    int sample;
  };
  std::vector<Slot> episodes;
  for (int s = 0; s < o.samples; ++s)
    for (const auto& t : tasks) episodes.push_back({&t, s});

  std::atomic<std::size_t> next{0};
  std::exception_ptr fatal;
  auto worker = [&] {
    for (;;) {
      const std::size_t i = next++;
      if (i >= episodes.size()) return;
      try {
        state.run_episode(*episodes[i].task, episodes[i].sample);
      } catch (...) {
        std::lock_guard lock(state.stats_mutex);
        if (!fatal) fatal = std::current_exception();
        next = episodes.size();
        return;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(1, std::min<int>(o.concurrency, static_cast<int>(episodes.size()))); ++t)
    threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  GenerateStats& stats = state.stats;
  stats.budget_exhausted = state.budget_hit;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  write_generate_manifest(run_dir, tasks, o, stats, state.tokens_used.load());
  if (fatal) std::rethrow_exception(fatal);
  return stats;
}

}  // namespace kgym
