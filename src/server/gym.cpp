// The environment: episodes keyed by id, reset / step / state / close (gym.hpp).
#include <chrono>
#include <random>

#include <fmt/format.h>

#include "kgym/gym.hpp"

namespace kgym {
namespace {

std::string new_episode_id() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* hex = "0123456789abcdef";
  std::string id = "ep-";
  std::uint64_t x = rng();
  for (int i = 0; i < 16; ++i, x >>= 4) id += hex[x & 15];
  return id;
}

bool in_split(const Task& t, const std::string& split) {
  if (split.empty() || split == "all") return true;
  return task_matches(t, split) || t.id.rfind(split + "/", 0) == 0;
}

}  // namespace

Gym::Gym(std::vector<Task> tasks, Scheduler& scheduler, GymConfig config)
    : tasks_(std::move(tasks)), scheduler_(scheduler), config_(std::move(config)) {
  if (tasks_.empty()) throw Error(ErrorKind::usage, "the environment needs at least one task (an empty suite?)");
  if (config_.journal) resume();
}

std::shared_ptr<EpisodeJournal> Gym::journal() const {
  std::lock_guard lock(mutex_);
  return config_.journal;
}

void Gym::detach_journal() {
  std::lock_guard lock(mutex_);
  config_.journal.reset();
}

void Gym::resume() {
  // Rebuild each open episode of the journal: the same options, its turns replayed in order.
  for (auto& j : config_.journal->open_episodes()) {
    const Task* task = nullptr;
    for (const auto& t : tasks_) {
      if (t.id == j.task_id) task = &t;
    }
    if (!task) {
      config_.journal->close(j.id, "its task " + j.task_id + " is not in the suite of the restarted server");
      continue;
    }
    auto slot = std::make_shared<Slot>(Episode(j.id, *task, j.options));
    for (auto& turn : j.turns) {
      if (slot->episode.done()) break;
      slot->episode.record_submission(std::move(turn.code), std::move(turn.verdict));
    }
    slot->order = next_order_++;
    episodes_.emplace(j.id, slot);
  }
}

const Task& Gym::pick_task(const ResetRequest& r) const {
  if (r.task_id) {
    // its id, or a short form `kgym eval --tasks` takes ("L1/19", "19_ReLU") naming one task
    int matched = 0;
    if (const Task* t = resolve_task(tasks_, *r.task_id, &matched)) return *t;
    throw RequestError(RequestProblem::unknown_task,
                       "unknown task_id \"" + *r.task_id + "\"" +
                           (matched > 1 ? " (it names " + std::to_string(matched) + " tasks: give one id, or pass it as \"split\" to draw one)"
                                        : "") +
                           "; the suite has " + std::to_string(tasks_.size()) + " tasks (e.g. \"" + tasks_.front().id +
                           "\"; also \"L1/19\" and \"19_ReLU\" forms); see GET /metadata");
  }
  std::vector<const Task*> pool;
  for (const auto& t : tasks_) {
    if (in_split(t, r.split.value_or("all"))) pool.push_back(&t);
  }
  if (pool.empty()) {
    throw RequestError(RequestProblem::unknown_task,
                       "split \"" + *r.split + "\" selects no task; use \"all\", a level (\"L1\") or an id prefix");
  }
  std::uint64_t seed = r.seed ? *r.seed : std::random_device{}();
  return *pool[seed % pool.size()];
}

Observation Gym::reset(const ResetRequest& r) {
  const Task& task = pick_task(r);
  EpisodeOptions o = config_.episode;
  if (r.max_turns) o.max_turns = *r.max_turns;
  if (r.single_turn && *r.single_turn) o.max_turns = 1;
  if (r.reward) o.reward = *r.reward;
  if (r.return_kind) o.return_kind = *r.return_kind;
  if (r.gamma) o.gamma = *r.gamma;
  if (r.backend) o.prompt.backend = *r.backend;
  if (r.policy_profile) o.prompt.policy_profile = *r.policy_profile;
  if (r.precision) o.prompt.precision = *r.precision;
  if (r.prompt_style) o.prompt.style = *r.prompt_style;
  o.roofline_floor_ms = r.roofline_floor_ms;
  if (!o.roofline_floor_ms && config_.roofline_floor) o.roofline_floor_ms = config_.roofline_floor(task);
  std::string id = r.episode_id ? *r.episode_id : new_episode_id();
  if (id.empty() || id.size() > 255) throw RequestError(RequestProblem::malformed, "episode_id must have 1 to 255 characters");
  auto slot = std::make_shared<Slot>(Episode(id, task, o));  // validates the options
  Observation obs = slot->episode.start();
  {
    std::lock_guard lock(mutex_);
    if (episodes_.count(id)) {
      throw RequestError(RequestProblem::malformed, "episode_id \"" + id + "\" is already open; choose another or omit it");
    }
    if (episodes_.size() >= config_.max_episodes) {
      // Drop the oldest ended episode; refuse when every open one is still running.
      std::string victim;
      std::uint64_t oldest = UINT64_MAX;
      for (auto& [eid, s] : episodes_) {
        std::unique_lock sl(s->mutex, std::try_to_lock);
        if (sl.owns_lock() && !s->busy && s->episode.done() && s->order < oldest) {
          oldest = s->order;
          victim = eid;
        }
      }
      if (victim.empty()) {
        throw RequestError(RequestProblem::capacity,
                           std::to_string(episodes_.size()) + " episodes are open (the limit); finalize or close some");
      }
      episodes_.erase(victim);
    }
    slot->order = next_order_++;
    episodes_.emplace(id, slot);
    closed_.erase(id);
  }
  if (auto journal = this->journal()) journal->open(id, task.id, o);
  ++resets_;
  return obs;
}

std::shared_ptr<Gym::Slot> Gym::find(const std::string& episode_id) const {
  std::lock_guard lock(mutex_);
  auto it = episodes_.find(episode_id);
  if (it == episodes_.end()) {
    auto closed = closed_.find(episode_id);
    std::optional<std::string> reason;
    if (closed != closed_.end()) reason = closed->second;
    else if (config_.journal) reason = config_.journal->close_reason(episode_id);
    if (reason) {
      throw RequestError(RequestProblem::unknown_episode, "episode \"" + episode_id + "\" was closed: " + *reason +
                                                              "; call reset for a new one");
    }
    throw RequestError(RequestProblem::unknown_episode,
                       "no open episode \"" + episode_id + "\"; call reset first (episodes are dropped on close)");
  }
  return it->second;
}

Observation Gym::step(const std::string& episode_id, const Action& action, const std::function<bool()>& client_gone) {
  auto slot = find(episode_id);
  ++steps_;
  if (action.type != Action::Type::submit_kernel) {
    std::lock_guard sl(slot->mutex);
    if (slot->busy) throw RequestError(RequestProblem::episode_busy, "a step of episode " + episode_id + " is in flight");
    slot->active = std::chrono::steady_clock::now();
    if (action.type != Action::Type::finalize) return slot->episode.inspect(action.turn);
    Observation obs = slot->episode.finalize();
    if (auto journal = this->journal()) journal->close(episode_id, "finalized");
    return obs;
  }
  std::string code = extract_code(action.code);
  Task task;
  Candidate candidate;
  {
    std::lock_guard sl(slot->mutex);
    if (slot->busy) {
      throw RequestError(RequestProblem::episode_busy,
                         "a step of episode " + episode_id + " is in flight; wait for its observation");
    }
    slot->episode.check_submission(code);
    slot->busy = true;
    task = slot->episode.task();
    candidate.id = episode_id + "/turn" + std::to_string(slot->episode.turns_used() + 1);
    candidate.task_id = task.id;
    candidate.code = code;
  }
  struct Release {  // clears `busy` however the step ends
    Slot& s;
    ~Release() {
      std::lock_guard sl(s.mutex);
      s.busy = false;
      s.active = std::chrono::steady_clock::now();
    }
  } release{*slot};
  ++active_steps_;
  struct Active {
    std::atomic<std::size_t>& n;
    ~Active() { --n; }
  } active{active_steps_};
  auto started = std::chrono::steady_clock::now();
  EvalOptions eval = config_.eval;
  eval.reward = slot->episode.options().reward;
  eval.reward_context.roofline_floor_ms = slot->episode.options().roofline_floor_ms;
  eval.policy_profile = slot->episode.options().prompt.policy_profile;
  auto ticket = scheduler_.submit(episode_id, std::move(task), std::move(candidate), std::move(eval));
  while (!ticket->wait_for(std::chrono::milliseconds(50))) {
    if (client_gone && client_gone()) {
      scheduler_.cancel(ticket);
      throw RequestError(RequestProblem::cancelled, "the client went away; the evaluation was cancelled");
    }
  }
  Verdict verdict = ticket->get();  // rethrows evaluator errors and cancellation
  std::lock_guard sl(slot->mutex);
  const std::string judged_code = code;
  Observation obs = slot->episode.record_submission(std::move(code), std::move(verdict));
  if (auto journal = this->journal()) {
    journal->add_turn(episode_id, slot->episode.turns_used(), judged_code, slot->episode.turns().back().verdict);
    if (obs.done) journal->close(episode_id, "done: all " + std::to_string(obs.max_turns) + " turns used");
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  std::lock_guard lock(mutex_);
  if (step_samples_.size() < 4096) {
    step_samples_.push_back(ms);
  } else {
    step_samples_[step_next_] = ms;
    step_next_ = (step_next_ + 1) % 4096;
  }
  return obs;
}

EpisodeState Gym::state(const std::string& episode_id) const {
  auto slot = find(episode_id);
  std::lock_guard sl(slot->mutex);
  return slot->episode.state();
}

void Gym::close(const std::string& episode_id) {
  bool was_open = false;
  {
    std::lock_guard lock(mutex_);
    was_open = episodes_.erase(episode_id) > 0;
  }
  if (auto journal = this->journal(); journal && was_open) journal->close(episode_id, "closed by the client");
  scheduler_.cancel_owner(episode_id);
}

std::size_t Gym::close_idle() {
  if (config_.idle_timeout_s <= 0) return 0;
  const auto now = std::chrono::steady_clock::now();
  const auto limit = std::chrono::duration<double>(config_.idle_timeout_s);
  const std::string reason =
      fmt::format("idle for more than {:g} s (kgym serve --episode-idle-timeout)", config_.idle_timeout_s);
  std::vector<std::string> idle;
  {
    std::lock_guard lock(mutex_);
    for (auto it = episodes_.begin(); it != episodes_.end();) {
      std::unique_lock sl(it->second->mutex, std::try_to_lock);
      if (sl.owns_lock() && !it->second->busy && now - it->second->active > limit) {
        idle.push_back(it->first);
        if (closed_.size() >= 4096) closed_.erase(closed_.begin());
        closed_[it->first] = reason;
        sl.unlock();
        it = episodes_.erase(it);
      } else {
        ++it;
      }
    }
  }
  auto journal = this->journal();
  for (const auto& id : idle) {
    if (journal) journal->close(id, reason);
    scheduler_.cancel_owner(id);
  }
  return idle.size();
}

GymMetrics Gym::metrics() const {
  GymMetrics m;
  std::vector<double> samples;
  {
    std::lock_guard lock(mutex_);
    m.open_episodes = episodes_.size();
    samples = step_samples_;
  }
  m.active_steps = active_steps_;
  m.resets = resets_;
  m.steps = steps_;
  m.errors = errors_;
  m.step_ms = summarize_latencies(std::move(samples));
  return m;
}

}  // namespace kgym
