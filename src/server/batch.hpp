#pragma once
// Batch routes of the server (internal to src/server; docs/server.md "Batches"): one request
// carries a group of N evaluations and gets N answers in request order.
//   POST /evaluate_many  {"task_id", "codes": [N strings], "options"?, "wait_s"?}
//   POST /step_many      {"steps": [{"episode_id", "action"}, ...], "wait_s"?}
//   GET  /batch?handle=H[&wait_s=S]    the answer of a batch that was still running
//   POST /reward         OpenRLHF's remote reward model: {"query", "prompts", "labels"}
//                        -> {"rewards", "scores", "extra_logs"}
// A batch runs in the background (one thread per item; each waits on its own scheduler ticket, so
// the scheduler's fair queue and worker count bound the work). The route waits up to `wait_s`
// (default 120 s, below the 180 s and 300 s timeouts of OpenRLHF and verl); a batch not done by
// then is answered 202 {"status": "running", "handle", "done", "total"} and polled with
// GET /batch. No route answers 504 and none gives up silently. POST /reward, whose caller cannot
// poll, is idempotent instead: a retried identical body (OpenRLHF retries after its timeout)
// joins the batch already running or finished rather than evaluating again.

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgym/gym.hpp"

namespace kgym::api {

class BatchRunner {
 public:
  /// `keep`: finished batches remembered for GET /batch and /reward retries (oldest dropped first).
  explicit BatchRunner(Gym& gym, std::size_t keep = 256) : gym_(gym), keep_(keep) {}
  ~BatchRunner() { stop(); }
  BatchRunner(const BatchRunner&) = delete;
  BatchRunner& operator=(const BatchRunner&) = delete;

  /// POST /evaluate_many: N single-turn episodes on one task, one per code (the episode's options
  /// from "options", as in POST /reset; max_turns forced to 1). Each answer is the step's
  /// {"observation", "reward", "done"} or the error shape {"type": "error", "data", "status"}.
  /// RequestError(malformed) for a bad body. Returns (HTTP status, body).
  std::pair<int, nlohmann::json> evaluate_many(const nlohmann::json& body);
  /// POST /step_many: one action per open episode, run concurrently; answers as evaluate_many.
  std::pair<int, nlohmann::json> step_many(const nlohmann::json& body);
  /// GET /batch: waits up to `wait_s` seconds for the batch; RequestError(malformed) for an
  /// unknown handle (never given, or dropped after `keep` newer batches finished).
  std::pair<int, nlohmann::json> poll(const std::string& handle, double wait_s);
  /// POST /reward (OpenRLHF `--remote_rm_url`): labels[i] names the task (a task id, or a JSON
  /// object text {"task_id", ...episode options}); the candidate is the part of query[i] after
  /// prompts[i] (all of query[i] when it does not start with it), its last fenced block when it
  /// has one. Waits for the whole batch (no handle: the caller cannot poll). rewards = scores =
  /// the per-sample reward (0 for a sample whose evaluation failed; extra_logs says why).
  nlohmann::json reward(const nlohmann::json& body, const std::string& raw_body);
  /// Cancels queued evaluations of every batch and waits for the running ones (server stop).
  void stop();

 private:
  struct Batch;
  using Job = std::function<nlohmann::json(const std::function<bool()>& cancelled)>;
  std::shared_ptr<Batch> launch(std::vector<Job> jobs, const std::string& key = {});
  std::pair<int, nlohmann::json> answer(const std::shared_ptr<Batch>& b, double wait_s);
  void finished(const std::shared_ptr<Batch>& b);

  Gym& gym_;
  std::size_t keep_;
  std::mutex mutex_;
  std::condition_variable idle_;
  std::map<std::string, std::shared_ptr<Batch>> batches_;  // by handle
  std::map<std::string, std::string> by_key_;              // request hash -> handle (POST /reward)
  std::vector<std::string> finished_order_;                // handles, oldest first
  std::size_t running_threads_ = 0;
  std::uint64_t next_ = 0;
  bool stopping_ = false;
};

}  // namespace kgym::api
