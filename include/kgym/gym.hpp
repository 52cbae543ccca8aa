#pragma once
// The environment behind the server: open episodes keyed by episode id, reset / step / state /
// close, with evaluations run by the Scheduler. JSON-free: the HTTP layer turns requests into
// these structs at once. Thread-safe; steps of different episodes run concurrently, a step waits
// only for its own evaluation.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kgym/episode.hpp"
#include "kgym/journal.hpp"
#include "kgym/scheduler.hpp"

namespace kgym {

/// Settings of the environment (from `kgym serve`'s command line).
struct GymConfig {
  EpisodeOptions episode;          ///< defaults of every episode; reset may override some
  EvalOptions eval;                ///< evaluation settings of every turn
  std::size_t max_episodes = 4096; ///< open episodes; when full, the oldest ended one is dropped
  /// The task's roofline floor in ms (for the `roofline` reward), or nullopt; from a cost model.
  std::function<std::optional<double>(const Task&)> roofline_floor;
  /// Episodes and turns written as they happen (`kgym serve --store`); a Gym built on a journal
  /// resumes its open episodes with their turns. Null: episodes live in memory only.
  std::shared_ptr<EpisodeJournal> journal;
  /// close_idle() closes an episode that has seen no action for this long (seconds; 0: never).
  double idle_timeout_s = 0;
};

/// Reset parameters; each optional overrides GymConfig::episode when set.
struct ResetRequest {
  std::optional<std::string> task_id;  ///< an exact task id; wins over split
  std::optional<std::string> split;    ///< "all", a task pattern of select_tasks ("L1", "L1/1*", "*ReLU*") or an id prefix "gen/relu"
  std::optional<std::uint64_t> seed;   ///< picks the task within the split (index seed % n)
  std::optional<std::string> episode_id;  ///< caller-chosen id (must not be open already)
  std::optional<int> max_turns;
  std::optional<bool> single_turn;     ///< true means max_turns = 1
  std::optional<RewardName> reward;
  std::optional<std::string> return_kind;
  std::optional<double> gamma, roofline_floor_ms;
  std::optional<policy::Profile> policy_profile;
  std::optional<std::string> backend, precision, prompt_style;
};

/// One action of a step.
struct Action {
  enum class Type { submit_kernel, inspect_evaluation, finalize };
  Type type = Type::submit_kernel;
  std::string code;  ///< submit_kernel: the code (a fenced block is extracted)
  int turn = 0;      ///< inspect_evaluation: 1-based turn
};

/// Server-wide counters for /metrics.
struct GymMetrics {
  std::size_t open_episodes = 0, active_steps = 0;
  std::uint64_t resets = 0, steps = 0, errors = 0;
  LatencySummary step_ms;  ///< wall time of submit_kernel steps (queue wait + evaluation)
};

class Gym {
 public:
  /// `tasks` is the suite. Throws Error(usage) when it is empty.
  Gym(std::vector<Task> tasks, Scheduler& scheduler, GymConfig config);

  /// Opens an episode. RequestError(unknown_task) when the task/split selects nothing,
  /// RequestError(malformed) for bad options or a duplicate episode_id, RequestError(capacity)
  /// when max_episodes are open and none has ended.
  Observation reset(const ResetRequest& request);
  /// Takes one action. submit_kernel queues an evaluation and waits for it; while waiting it calls
  /// `client_gone` every 50 ms and, when that returns true, cancels the queued evaluation and
  /// throws RequestError(cancelled). RequestError(unknown_episode / episode_busy / episode_done /
  /// too_large / malformed) for bad requests; evaluator errors propagate (the turn is not used).
  Observation step(const std::string& episode_id, const Action& action,
                   const std::function<bool()>& client_gone = {});
  /// RequestError(unknown_episode) for an id that is not open.
  EpisodeState state(const std::string& episode_id) const;
  /// Forgets the episode and cancels its queued evaluations; no error for an unknown id.
  void close(const std::string& episode_id);
  /// Closes every episode idle (no step in flight, no action) for GymConfig::idle_timeout_s, with
  /// that reason (a later request for it gets unknown_episode saying so); returns how many.
  std::size_t close_idle();
  /// Stops writing to the journal (server shutdown: the episodes its hang-ups close stay open
  /// there, for the next server to resume).
  void detach_journal();

  const std::vector<Task>& tasks() const noexcept { return tasks_; }
  GymMetrics metrics() const;
  void count_error() { ++errors_; }

 private:
  struct Slot {
    std::mutex mutex;
    Episode episode;
    bool busy = false;  // a step is in flight (guarded by mutex)
    std::uint64_t order = 0;
    std::chrono::steady_clock::time_point active = std::chrono::steady_clock::now();  // last action
    explicit Slot(Episode e) : episode(std::move(e)) {}
  };
  std::shared_ptr<Slot> find(const std::string& episode_id) const;
  const Task& pick_task(const ResetRequest& r) const;
  void resume();
  std::shared_ptr<EpisodeJournal> journal() const;

  std::map<std::string, std::string> closed_;  // recently closed by the gym: id -> reason (guarded by mutex_)

  std::vector<Task> tasks_;
  Scheduler& scheduler_;
  GymConfig config_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Slot>> episodes_;
  std::uint64_t next_order_ = 0;
  std::atomic<std::uint64_t> resets_{0}, steps_{0}, errors_{0};
  std::atomic<std::size_t> active_steps_{0};
  std::vector<double> step_samples_;
  std::size_t step_next_ = 0;
};

}  // namespace kgym
