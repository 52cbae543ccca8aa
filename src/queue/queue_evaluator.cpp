// The server side of the Redis Streams queue (queue.hpp): enqueue a job, wait for its verdict.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <random>
#include <thread>

#include <spdlog/spdlog.h>

#include "keys.hpp"
#include "kgym/histogram.hpp"
#include "kgym/queue.hpp"
#include "kgym/scheduler.hpp"
#include "redis.hpp"

namespace kgym {

using nlohmann::json;
using queue::Connection;
using queue::Reply;
using queue::Unreachable;

namespace {

std::string new_job_id() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* hex = "0123456789abcdef";
  std::string id = "job-";
  for (int part = 0; part < 2; ++part) {
    std::uint64_t x = rng();
    for (int i = 0; i < 16; ++i, x >>= 4) id += hex[x & 15];
  }
  return id;
}


json latency_json(const LatencySummary& s) {
  return {{"count", s.count}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"max", s.max}};
}

}  // namespace

struct QueueEvaluator::Impl {
  QueueOptions options;
  queue::Keys keys;
  mutable std::mutex mutex;
  std::vector<std::unique_ptr<Connection>> pool;  // idle connections
  std::atomic<int> in_flight{0};
  Histogram wait_hist, verdict_hist;
  std::vector<double> wait_samples, overhead_samples;
  std::size_t wait_next = 0, overhead_next = 0;
  std::uint64_t reenqueued = 0;
  long long last_warning_ms = 0;

  std::unique_ptr<Connection> acquire() {
    {
      std::lock_guard lock(mutex);
      if (!pool.empty()) {
        auto c = std::move(pool.back());
        pool.pop_back();
        return c;
      }
    }
    return std::make_unique<Connection>(options.url, options.connect_timeout_s);
  }
  void release(std::unique_ptr<Connection> c) {
    if (!c || c->broken()) return;
    std::lock_guard lock(mutex);
    if (pool.size() < 512) pool.push_back(std::move(c));
  }

  /// The marker and the stream entry in one transaction (both or neither survive a crash).
  void enqueue(Connection& c, const std::string& id, const std::string& payload, long long enqueued_ms) {
    c.command({"MULTI"});
    c.command({"SET", keys.marker(id), std::to_string(enqueued_ms), "EX", std::to_string(queue::kKeepSeconds)});
    c.command({"XADD", keys.stream(), "*", "id", id, "job", payload});
    Reply r = c.command({"EXEC"});
    if (r.type != Reply::Type::array || r.elements.size() != 2) {
      throw Error(ErrorKind::worker, "Redis did not run the enqueue transaction of job " + id);
    }
  }
};

QueueEvaluator::QueueEvaluator(QueueOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->keys.prefix = impl_->options.prefix;
  // Create the consumer group up front, so that jobs queued before the first worker starts are
  // delivered ("0": from the stream's start). Redis may be down now: the workers create it too.
  try {
    Connection c(impl_->options.url, impl_->options.connect_timeout_s);
    c.command({"XGROUP", "CREATE", impl_->keys.stream(), queue::kGroup, "0", "MKSTREAM"});
  } catch (const Unreachable& e) {
    spdlog::warn("kgym serve: {} (the queue evaluator will retry when a step needs it)", e.what());
  } catch (const Error& e) {
    if (std::string(e.what()).find("BUSYGROUP") == std::string::npos) throw;
  }
}

QueueEvaluator::~QueueEvaluator() = default;

std::string QueueEvaluator::describe() const { return "redis queue " + impl_->options.url.text; }

Verdict QueueEvaluator::evaluate(const Task& task, const Candidate& candidate, const EvalOptions& options) {
  auto& I = *impl_;
  const std::string id = new_job_id();
  const long long enqueued_ms = queue::now_ms();
  const std::string payload =
      json{{"id", id}, {"task", queue::task_json(task)}, {"candidate", queue::candidate_json(candidate)},
           {"options", eval_options_json(options)}, {"enqueued_ms", enqueued_ms}}
          .dump(-1, ' ', false, json::error_handler_t::replace);
  ++I.in_flight;
  struct Done {
    std::atomic<int>& n;
    ~Done() { --n; }
  } done{I.in_flight};
  const auto started = std::chrono::steady_clock::now();
  bool enqueued = false, check_lost = false;
  double backoff_s = 0.1;
  for (;;) {
    std::unique_ptr<Connection> c;
    try {
      c = I.acquire();
      if (!enqueued) {
        I.enqueue(*c, id, payload, enqueued_ms);
        enqueued = true;
      } else if (check_lost) {
        // Back after a lost connection: a Redis that restarted without the job (no AOF, or the
        // last second before a crash) has neither its marker nor its verdict: queue it again.
        bool known = c->command({"EXISTS", I.keys.verdict(id), I.keys.marker(id)}).integer > 0;
        if (!known) {
          spdlog::warn("kgym serve: job {} was not in Redis after reconnecting; queued again", id);
          I.enqueue(*c, id, payload, enqueued_ms);
          std::lock_guard lock(I.mutex);
          ++I.reenqueued;
        }
      }
      check_lost = false;
      backoff_s = 0.1;
      c->command({"BLPOP", I.keys.done(id), "1"}, 1 + I.options.connect_timeout_s);
      Reply v = c->command({"GET", I.keys.verdict(id)});
      if (!v.nil()) {
        I.release(std::move(c));
        json envelope = json::parse(v.str, nullptr, false);
        if (envelope.is_discarded() || !envelope.is_object()) {
          throw Error(ErrorKind::worker, "the stored result of job " + id + " is not JSON (another program wrote it?)");
        }
        if (!envelope.contains("verdict")) {
          throw Error(ErrorKind::worker, "worker " + envelope.value("worker", std::string("?")) + " could not judge job " + id +
                                             ": " + envelope.value("error", std::string("no verdict")));
        }
        Verdict verdict = envelope.at("verdict").get<Verdict>();
        const double total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
        const double wait_ms = std::max(0.0, static_cast<double>(envelope.value("started_ms", enqueued_ms) - enqueued_ms));
        const double overhead_ms = std::max(0.0, total_ms - envelope.value("judge_ms", 0.0));
        std::lock_guard lock(I.mutex);
        I.wait_hist.observe(wait_ms / 1e3);
        I.verdict_hist.observe(total_ms / 1e3);
        add_sample(I.wait_samples, I.wait_next, wait_ms);
        add_sample(I.overhead_samples, I.overhead_next, overhead_ms);
        return verdict;
      }
      I.release(std::move(c));
    } catch (const Unreachable& e) {
      check_lost = enqueued;
      const long long now = queue::now_ms();
      {
        std::lock_guard lock(I.mutex);
        if (now - I.last_warning_ms > 2000) {  // one line per 2 s, not one per waiting step
          I.last_warning_ms = now;
          spdlog::warn("kgym serve: {}; retrying in {:.1f} s ({} evaluations waiting)", e.what(), backoff_s, I.in_flight.load());
        }
      }
      std::this_thread::sleep_for(std::chrono::duration<double>(backoff_s));
      backoff_s = std::min(backoff_s * 2, 5.0);
    }
    if (I.options.job_timeout_s > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() > I.options.job_timeout_s) {
      throw Error(ErrorKind::worker, "no verdict for job " + id + " (" + candidate.id + ") after " +
                                         std::to_string(static_cast<int>(I.options.job_timeout_s)) +
                                         " s (--queue-job-timeout): are workers running (GET /health)?");
    }
  }
}

json QueueEvaluator::status() const {
  auto& I = *impl_;
  json out = {{"url", I.options.url.text}, {"prefix", I.options.prefix}, {"in_flight", I.in_flight.load()}};
  {
    std::lock_guard lock(I.mutex);
    out["queue_wait_ms"] = latency_json(summarize_latencies(I.wait_samples));
    out["overhead_ms"] = latency_json(summarize_latencies(I.overhead_samples));
    out["histograms"] = {{"queue_wait_seconds", I.wait_hist.json()}, {"verdict_seconds", I.verdict_hist.json()}};
    out["reenqueued"] = I.reenqueued;
  }
  try {
    auto c = const_cast<Impl&>(I).acquire();
    long long length = c->command({"XLEN", I.keys.stream()}).integer;
    long long pending = 0;
    Reply groups = c->command({"XINFO", "GROUPS", I.keys.stream()});
    for (const auto& g : groups.elements) {
      bool ours = false;
      for (std::size_t i = 0; i + 1 < g.elements.size(); i += 2) {
        if (g.elements[i].str == "name") ours = g.elements[i + 1].str == queue::kGroup;
        if (g.elements[i].str == "pending" && ours) pending = g.elements[i + 1].integer;
      }
    }
    out["depth"] = std::max(0LL, length - pending);  // acknowledged entries are deleted
    out["pending"] = pending;
    json workers = json::array();
    const long long now = queue::now_ms();
    Reply w = c->command({"HGETALL", I.keys.workers()});
    for (std::size_t i = 0; i + 1 < w.elements.size(); i += 2) {
      json beat = json::parse(w.elements[i + 1].str, nullptr, false);
      if (beat.is_discarded()) continue;
      const double age_s = static_cast<double>(now - beat.value("ts_ms", 0LL)) / 1e3;
      beat["age_s"] = age_s;
      beat["alive"] = age_s < std::max(5.0, 5 * beat.value("interval_s", 1.0)) && !beat.value("stopped", false);
      workers.push_back(beat);
    }
    out["workers"] = workers;
    json stats = json::object();
    Reply s = c->command({"HGETALL", I.keys.stats()});
    for (std::size_t i = 0; i + 1 < s.elements.size(); i += 2) stats[s.elements[i].str] = std::stoll(s.elements[i + 1].str);
    out["stats"] = stats;
    out["reachable"] = true;
    const_cast<Impl&>(I).release(std::move(c));
  } catch (const std::exception& e) {
    out["reachable"] = false;
    out["error"] = e.what();
  }
  return out;
}

}  // namespace kgym
