#pragma once
// The evaluation scheduler of the server: one evaluator per device, K worker threads per device,
// and one fair queue in front of all workers (round-robin over the owners that have work queued,
// so one busy session cannot starve the others). Each submission gets its own ticket; a step
// waits only on its ticket. Queued work can be cancelled by ticket or by owner.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kgym/evaluator.hpp"
#include "kgym/histogram.hpp"

namespace kgym {

/// Percentiles of recent latencies (ms), over the last 4,096 samples (nearest-rank method).
struct LatencySummary {
  std::size_t count = 0;  ///< samples in the window
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
};

/// Percentiles of `samples_ms` (nearest-rank); all zero for no samples.
LatencySummary summarize_latencies(std::vector<double> samples_ms);

/// A snapshot of the scheduler for /health and /metrics.
struct SchedulerMetrics {
  struct DeviceLoad {
    std::string device;
    int workers = 0, busy = 0;
  };
  std::size_t queue_length = 0;  ///< evaluations waiting for a worker
  int workers = 0, busy_workers = 0;
  std::vector<DeviceLoad> devices;
  std::uint64_t submitted = 0, completed = 0, failed = 0, cancelled = 0;
  LatencySummary eval_ms;   ///< evaluator time per evaluation
  LatencySummary wait_ms;   ///< time from submit to a worker taking it
  Histogram eval_seconds, wait_seconds;  ///< the same two, since start, for Prometheus
  std::map<std::string, std::uint64_t> outcomes;  ///< verdicts per outcome name, since start
  /// Evaluations whose candidate source the scheduler had sent before (its evaluator's
  /// content-addressed build cache holds that build) and first seen, since start.
  std::uint64_t builds_cached = 0, builds_cold = 0;
};

class Scheduler;

/// One queued or running evaluation. Shared by the submitter and the scheduler.
class EvaluationTicket {
 public:
  /// Waits up to `timeout`; true when the result (verdict or error) is ready.
  bool wait_for(std::chrono::milliseconds timeout) const {
    return future_.wait_for(timeout) == std::future_status::ready;
  }
  /// The verdict; rethrows the evaluator's error, or RequestError(cancelled) when cancelled.
  /// Blocks until ready.
  Verdict get() const { return future_.get(); }

 private:
  friend class Scheduler;
  enum class Status { queued, running, finished };
  std::string owner_;
  Task task_;
  Candidate candidate_;
  EvalOptions options_;
  Status status_ = Status::queued;  // guarded by the scheduler's mutex
  std::chrono::steady_clock::time_point submitted_at_;
  std::promise<Verdict> promise_;
  std::shared_future<Verdict> future_;
};

/// Runs evaluations on device workers. Thread-safe.
class Scheduler {
 public:
  /// One device: its name ("cpu", "cuda:0") and the evaluator its workers share.
  struct Device {
    std::string name;
    std::shared_ptr<Evaluator> evaluator;
  };
  /// Starts workers_per_device threads per device. Throws Error(usage) for no devices or
  /// workers_per_device < 1.
  Scheduler(std::vector<Device> devices, int workers_per_device);
  /// Cancels queued work (RequestError(cancelled)), waits for running evaluations, joins workers.
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// Queues one evaluation for `owner` (an episode id: the unit of fairness).
  std::shared_ptr<EvaluationTicket> submit(const std::string& owner, Task task, Candidate candidate,
                                           EvalOptions options);
  /// Cancels the ticket if it is still queued (its get() throws RequestError(cancelled)); true
  /// when it was. A running evaluation finishes and its result is dropped by the caller.
  bool cancel(const std::shared_ptr<EvaluationTicket>& ticket);
  /// Cancels every queued evaluation of `owner`; returns how many.
  std::size_t cancel_owner(const std::string& owner);
  SchedulerMetrics metrics() const;
  /// "engine cpu, engine cuda:0" etc., for /metadata.
  std::vector<std::string> describe() const;

 private:
  void work(std::size_t device_index);
  std::shared_ptr<EvaluationTicket> take_locked();
  void remove_locked(const std::shared_ptr<EvaluationTicket>& ticket);

  std::vector<Device> devices_;
  std::vector<std::thread> threads_;
  std::vector<int> device_busy_;
  int workers_per_device_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::map<std::string, std::deque<std::shared_ptr<EvaluationTicket>>> queues_;
  std::deque<std::string> rotation_;  // owners with queued work, in round-robin order
  std::size_t queued_ = 0;
  int busy_ = 0;
  std::uint64_t submitted_ = 0, completed_ = 0, failed_ = 0, cancelled_ = 0;
  std::vector<double> eval_samples_, wait_samples_;
  Histogram eval_hist_, wait_hist_;
  std::map<std::string, std::uint64_t> outcomes_;
  std::set<std::string> sources_;  // SHA-256 of every candidate source taken
  std::uint64_t builds_cached_ = 0, builds_cold_ = 0;
  std::size_t eval_next_ = 0, wait_next_ = 0;
};

}  // namespace kgym
