#pragma once
// The Redis Streams work queue (docs/deploy.md): `kgym serve --queue redis://HOST:PORT` puts each
// evaluation on a stream and waits for its verdict (QueueEvaluator, an Evaluator like the
// engine's, so the scheduler and the episodes are the same); `kgym worker` on each device host
// reads the stream with a consumer group, judges with the engine and writes the verdict under the
// job id exactly once. Client library: hiredis (Debian libhiredis-dev).
//
// Redis keys, under a prefix (default "kgym"):
//   <p>:jobs            stream; entry fields `id` (job id) and `job` (JSON: task, candidate, options)
//   <p>:job:<id>        marker (enqueue time, ms since the epoch) written with the entry, EX 1 day
//   <p>:verdict:<id>    JSON {verdict, worker, device, enqueued_ms, started_ms, finished_ms,
//                       judge_ms, attempt}; SET NX (the first write wins), EX 1 day
//   <p>:done:<id>       list; one element pushed by the worker whose SET NX won (wakes the waiter)
//   <p>:workers         hash: worker name -> heartbeat JSON (see WorkerOptions)
//   <p>:stats           hash of counters: verdicts, duplicates, reclaimed, outcome:<name>,
//                       builds_cached, builds_cold
// Consumer group: "judges" on <p>:jobs.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgym/engine.hpp"
#include "kgym/evaluator.hpp"

namespace kgym {

/// A parsed `redis://HOST:PORT[/DB]` address.
struct QueueUrl {
  std::string host;
  int port = 6379;
  int db = 0;
  std::string text;  ///< as given, for messages
};

/// Parses a queue URL. Throws Error(usage) naming the problem for anything but
/// `redis://HOST[:PORT][/DB]` (port 1..65535, default 6379; DB a number, default 0).
QueueUrl parse_queue_url(const std::string& url);

/// EvalOptions as JSON (every field, so that a worker judges with the server's settings) and
/// back; missing keys keep the defaults. from_eval_options_json throws Error(input) on a wrong type.
nlohmann::json eval_options_json(const EvalOptions& options);
EvalOptions eval_options_from_json(const nlohmann::json& j);

/// Settings shared by the server side and the workers.
struct QueueOptions {
  QueueUrl url;
  std::string prefix = "kgym";
  double connect_timeout_s = 2;
  /// A job pending with a worker whose heartbeat stopped for this long is claimed (XAUTOCLAIM) by
  /// another worker and judged again. A live worker refreshes its jobs' idle time every third of it.
  double visibility_timeout_s = 60;
  /// The server gives up on a job after this long without a verdict (Error(worker)); 0: never.
  double job_timeout_s = 0;
};

/// The server side: an Evaluator that enqueues the job and blocks until a worker's verdict is
/// stored. Thread-safe; one Redis connection per waiting call (pooled). When Redis is
/// unreachable it retries with back-off (logged) and keeps waiting; when, after Redis comes
/// back, neither the job's marker nor its verdict exists (Redis lost it), it enqueues it again
/// under the same id. Throws Error(worker) only past QueueOptions::job_timeout_s.
class QueueEvaluator final : public Evaluator {
 public:
  explicit QueueEvaluator(QueueOptions options);
  ~QueueEvaluator() override;
  Verdict evaluate(const Task& task, const Candidate& candidate, const EvalOptions& options) override;
  std::string describe() const override;
  /// For /health and /metrics: {"url", "reachable", "depth" (entries not yet delivered),
  /// "pending" (delivered, not acknowledged), "in_flight" (calls waiting here), "workers": [
  /// heartbeat JSON + "age_s", "alive"], "stats": counters, "queue_wait_ms"/"overhead_ms"
  /// {count,p50,p90,p99,max}, "histograms": {"queue_wait_seconds", "verdict_seconds"}: {buckets
  /// (upper bounds, s), counts (cumulative), sum, count}}. Never throws: an unreachable Redis
  /// gives reachable=false and the error.
  nlohmann::json status() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// `kgym worker`'s settings.
struct WorkerOptions {
  QueueOptions queue;
  std::vector<std::string> devices = {"cpu"};
  int workers_per_device = 1;
  std::string name;               ///< consumer name prefix; default "<hostname>-<pid>"
  /// "stand-in" (busy CPU work of stand_in_ms per job, for bench/queue only), or the name of
  /// the evaluator make_evaluator makes (the CLI's `--evaluator`: "engine", or "scripted" in the
  /// tests' build/kgym-test).
  std::string evaluator = "engine";
  /// Makes one device's evaluator (EngineOptions::device set); unset: the real engine.
  std::function<std::shared_ptr<Evaluator>(const EngineOptions&)> make_evaluator;
  double stand_in_ms = 10;
  EngineOptions engine;           ///< device is set per device
  double heartbeat_s = 1;
};

/// Runs workers until `stop` becomes true: per device one evaluator, workers_per_device threads,
/// each its own consumer of the group. Per job: skip if a verdict is stored (acknowledge), else
/// judge, SET NX the verdict, push the wake-up, count, XACK and XDEL. Between jobs each thread
/// first claims jobs idle past the visibility timeout (XAUTOCLAIM), then reads new ones
/// (XREADGROUP, 1 s block). Unreachable Redis: retries with back-off up to 5 s, logging each
/// attempt. Throws Error(worker) when an evaluator cannot start (e.g. no torch).
void run_workers(const WorkerOptions& options, const std::atomic<bool>& stop);

}  // namespace kgym
