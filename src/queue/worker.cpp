// `kgym worker`'s loop (queue.hpp, run_workers): consumers of the Redis Streams group that judge
// jobs with the engine and store each verdict exactly once under its job id.
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <spdlog/spdlog.h>

#include "keys.hpp"
#include "kgym/hash.hpp"
#include "kgym/outcome.hpp"
#include "kgym/queue.hpp"
#include "redis.hpp"

namespace kgym {

using nlohmann::json;
using queue::Connection;
using queue::Reply;
using queue::Unreachable;

namespace {

/// bench/queue's stand-in: `ms` of busy CPU time (the thread's) per job (a fixed cost that occupies a core, as
/// judging does), then a passed verdict. Never used for real judging.
class StandInEvaluator final : public Evaluator {
 public:
  explicit StandInEvaluator(double ms) : ms_(ms) {}
  Verdict evaluate(const Task& task, const Candidate& candidate, const EvalOptions& options) override {
    // The thread's own CPU time, so that a job costs the same CPU however many workers share a core.
    auto cpu_ms = [] {
      timespec t{};
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
      return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
    };
    const double end = cpu_ms() + ms_;
    volatile double x = 0;
    while (cpu_ms() < end) {
      for (int i = 0; i < 1000; ++i) x = x + std::sqrt(static_cast<double>(i));
    }
    Verdict v;
    v.task_id = task.id;
    v.candidate_id = candidate.id;
    v.outcome = Outcome::passed;
    v.gate = Gate::timing;
    v.correct = true;
    v.cases_passed = v.cases_total = options.n_cases;
    v.messages = {"stand-in evaluator (bench/queue): " + std::to_string(ms_) + " ms of CPU work, nothing judged"};
    return v;
  }
  std::string describe() const override { return "stand-in " + std::to_string(ms_) + " ms"; }

 private:
  double ms_;
};

std::string default_name() {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  return std::string(host) + "-" + std::to_string(getpid());
}

/// Sleeps up to `seconds`, waking early when `stop` is set.
void nap(double seconds, const std::atomic<bool>& stop) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!stop && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

struct Pool {
  const WorkerOptions& options;
  const std::atomic<bool>& stop;
  queue::Keys keys;
  std::string name;
  std::vector<std::shared_ptr<Evaluator>> evaluators;  // per device
  long long started_ms = queue::now_ms();
  std::mutex mutex;
  std::map<std::string, std::string> in_flight;  // consumer -> stream entry id
  std::vector<int> busy;                         // per device
  std::vector<double> busy_ms;                   // per device, judging time summed
  std::uint64_t jobs = 0, duplicates = 0, reclaimed = 0;
  std::set<std::string> seen_sources;            // candidate source hashes judged by this process

  Pool(const WorkerOptions& o, const std::atomic<bool>& s) : options(o), stop(s) {
    keys.prefix = o.queue.prefix;
    name = o.name.empty() ? default_name() : o.name;
  }

  std::unique_ptr<Connection> connect(const std::string& who, double& backoff_s, bool& was_down) {
    for (;;) {
      try {
        auto c = std::make_unique<Connection>(options.queue.url, options.queue.connect_timeout_s);
        try {
          c->command({"XGROUP", "CREATE", keys.stream(), queue::kGroup, "0", "MKSTREAM"});
        } catch (const Unreachable&) {
          throw;
        } catch (const Error& e) {
          if (std::string(e.what()).find("BUSYGROUP") == std::string::npos) throw;
        }
        if (was_down) spdlog::info("kgym worker {}: connected to Redis at {}", who, options.queue.url.text);
        was_down = false;
        backoff_s = 0.1;
        return c;
      } catch (const Unreachable& e) {
        if (stop) return nullptr;
        spdlog::warn("kgym worker {}: {}; retrying in {:.1f} s", who, e.what(), backoff_s);
        was_down = true;
        nap(backoff_s, stop);
        backoff_s = std::min(backoff_s * 2, 5.0);
        if (stop) return nullptr;
      }
    }
  }

  /// Writes the result of one job in one Redis script, so that a worker killed mid-store leaves
  /// either nothing or everything: the verdict under the job id if it is the first (SET NX), its
  /// done signal and stats counters (verdicts, outcome:<outcome> and the build's kind, or errors;
  /// duplicates when another worker stored first), then XACK and XDEL of the entry. Done as
  /// separate commands, a SIGKILL between the SET and the counters left a stored verdict that no
  /// outcome counted (the job reclaimed, judged again and dropped as a duplicate). Retries through
  /// Redis outages (the entry stays pending meanwhile).
  void store(const std::string& consumer, std::unique_ptr<Connection>& c, double& backoff_s, bool& was_down,
             const std::string& entry, const std::string& id, const json& envelope, const std::string& outcome,
             bool warm_build) {
    // KEYS: verdict, done list, stats hash, job stream. ARGV: verdict text, seconds to keep,
    // outcome ("" for an error), build counter's field, consumer group, stream entry.
    static const char* const kStoreScript = R"lua(
local won = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2])
if won then
  redis.call('RPUSH', KEYS[2], '1')
  redis.call('EXPIRE', KEYS[2], ARGV[2])
  redis.call('HINCRBY', KEYS[3], 'verdicts', 1)
  if ARGV[3] ~= '' then
    redis.call('HINCRBY', KEYS[3], 'outcome:' .. ARGV[3], 1)
    redis.call('HINCRBY', KEYS[3], ARGV[4], 1)
  else
    redis.call('HINCRBY', KEYS[3], 'errors', 1)
  end
else
  redis.call('HINCRBY', KEYS[3], 'duplicates', 1)
end
redis.call('XACK', KEYS[4], ARGV[5], ARGV[6])
redis.call('XDEL', KEYS[4], ARGV[6])
if won then return 1 end
return 0
)lua";
    const std::string text = envelope.dump(-1, ' ', false, json::error_handler_t::replace);
    for (;;) {
      try {
        if (!c) c = connect(consumer, backoff_s, was_down);
        if (!c) return;  // stopping: the entry stays pending and is claimed by another worker
        Reply r = c->command({"EVAL", kStoreScript, "4", keys.verdict(id), keys.done(id), keys.stats(), keys.stream(),
                              text, std::to_string(queue::kKeepSeconds), outcome,
                              warm_build ? "builds_cached" : "builds_cold", queue::kGroup, entry});
        if (r.integer == 1) {
          spdlog::info("kgym worker {}: job {} -> {} (stored)", consumer, id, outcome.empty() ? "error" : outcome);
        } else {
          std::lock_guard lock(mutex);
          ++duplicates;
          spdlog::info("kgym worker {}: job {} already has a verdict; this one is dropped", consumer, id);
        }
        return;
      } catch (const Unreachable& e) {
        spdlog::warn("kgym worker {}: {} while storing job {}; retrying in {:.1f} s", consumer, e.what(), id, backoff_s);
        c.reset();
        was_down = true;
        nap(backoff_s, stop);
        backoff_s = std::min(backoff_s * 2, 5.0);
        if (stop) return;
      }
    }
  }

  void process(const std::string& consumer, std::size_t device, std::unique_ptr<Connection>& c, double& backoff_s,
               bool& was_down, const Reply& entry, bool claimed) {
    const std::string entry_id = entry.elements.at(0).str;
    std::map<std::string, std::string> fields;
    const auto& kv = entry.elements.at(1).elements;
    for (std::size_t i = 0; i + 1 < kv.size(); i += 2) fields[kv[i].str] = kv[i + 1].str;
    const std::string id = fields.count("id") ? fields["id"] : "";
    json job = json::parse(fields["job"], nullptr, false);
    if (id.empty() || job.is_discarded() || !job.is_object()) {
      spdlog::error("kgym worker {}: stream entry {} is not a kgym job; acknowledged and dropped", consumer, entry_id);
      c->command({"XACK", keys.stream(), queue::kGroup, entry_id});
      c->command({"XDEL", keys.stream(), entry_id});
      return;
    }
    if (claimed) {
      std::lock_guard lock(mutex);
      ++reclaimed;
    }
    if (claimed) c->command({"HINCRBY", keys.stats(), "reclaimed", "1"});
    if (c->command({"EXISTS", keys.verdict(id)}).integer > 0) {
      // Judged already (its worker died between storing and acknowledging): acknowledge only.
      spdlog::info("kgym worker {}: job {} has a verdict already; acknowledged", consumer, id);
      c->command({"XACK", keys.stream(), queue::kGroup, entry_id});
      c->command({"XDEL", keys.stream(), entry_id});
      return;
    }
    spdlog::info("kgym worker {}: job {}{} on {}", consumer, id, claimed ? " (claimed from a silent worker)" : "",
                 options.devices[device]);
    json envelope = {{"worker", consumer}, {"device", options.devices[device]}, {"enqueued_ms", job.value("enqueued_ms", 0LL)},
                     {"claimed", claimed}};
    std::string outcome;
    bool warm = false;
    {
      std::lock_guard lock(mutex);
      in_flight[consumer] = entry_id;
      ++busy[device];
    }
    const long long started_ms = queue::now_ms();
    const auto t0 = std::chrono::steady_clock::now();
    try {
      Task task = queue::task_from_json(job.at("task"));
      Candidate candidate = queue::candidate_from_json(job.at("candidate"));
      EvalOptions eo = eval_options_from_json(job.at("options"));
      const std::string source_hash = sha256_hex(candidate.code);
      {
        std::lock_guard lock(mutex);
        warm = !seen_sources.insert(source_hash).second;
      }
      Verdict v = evaluators[device]->evaluate(task, candidate, eo);
      outcome = std::string(to_string(v.outcome));
      envelope["verdict"] = v;
    } catch (const std::exception& e) {
      // The trusted side could not judge (as an evaluator error in the embedded server): the
      // server's step fails with this message and the turn is not used.
      spdlog::error("kgym worker {}: job {}: {}", consumer, id, e.what());
      envelope["error"] = e.what();
    }
    const double judge_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    envelope["started_ms"] = started_ms;
    envelope["finished_ms"] = queue::now_ms();
    envelope["judge_ms"] = judge_ms;
    {
      std::lock_guard lock(mutex);
      --busy[device];
      busy_ms[device] += judge_ms;
      ++jobs;
    }
    store(consumer, c, backoff_s, was_down, entry_id, id, envelope, outcome, warm);
    std::lock_guard lock(mutex);
    in_flight.erase(consumer);
  }

  void consume(std::size_t device, int k) {
    const std::string consumer = name + "/" + options.devices[device] + "/" + std::to_string(k);
    const std::string min_idle = std::to_string(static_cast<long long>(options.queue.visibility_timeout_s * 1000));
    double backoff_s = 0.1;
    bool was_down = false;
    std::unique_ptr<Connection> c;
    while (!stop) {
      try {
        if (!c) c = connect(consumer, backoff_s, was_down);
        if (!c) break;
        // Jobs of a worker that went silent (its heartbeat no longer refreshes their idle time).
        Reply claimed = c->command({"XAUTOCLAIM", keys.stream(), queue::kGroup, consumer, min_idle, "0-0", "COUNT", "1"});
        if (claimed.elements.size() >= 2 && !claimed.elements[1].elements.empty() &&
            claimed.elements[1].elements[0].type == Reply::Type::array) {
          process(consumer, device, c, backoff_s, was_down, claimed.elements[1].elements[0], true);
          continue;
        }
        Reply r = c->command({"XREADGROUP", "GROUP", queue::kGroup, consumer, "COUNT", "1", "BLOCK", "1000", "STREAMS",
                              keys.stream(), ">"},
                             1 + options.queue.connect_timeout_s);
        if (r.nil() || r.elements.empty()) continue;
        const Reply& entries = r.elements[0].elements.at(1);
        if (entries.elements.empty()) continue;
        process(consumer, device, c, backoff_s, was_down, entries.elements[0], false);
      } catch (const Unreachable& e) {
        c.reset();
        was_down = true;
        spdlog::warn("kgym worker {}: {}; retrying in {:.1f} s", consumer, e.what(), backoff_s);
        nap(backoff_s, stop);
        backoff_s = std::min(backoff_s * 2, 5.0);
      } catch (const Error& e) {
        if (std::string(e.what()).find("NOGROUP") != std::string::npos) {
          c.reset();  // the stream was deleted (a Redis without persistence restarted): recreate
          continue;
        }
        spdlog::error("kgym worker {}: {}", consumer, e.what());
        nap(1, stop);
      } catch (const std::exception& e) {  // a reply of an unexpected shape
        spdlog::error("kgym worker {}: unexpected reply from Redis: {}", consumer, e.what());
        c.reset();
        nap(1, stop);
      }
    }
  }

  json heartbeat() {
    std::lock_guard lock(mutex);
    const double up_ms = static_cast<double>(queue::now_ms() - started_ms);
    json devices = json::array();
    for (std::size_t d = 0; d < options.devices.size(); ++d) {
      const double capacity_ms = up_ms * options.workers_per_device;
      devices.push_back({{"device", options.devices[d]},
                         {"workers", options.workers_per_device},
                         {"busy", busy[d]},
                         {"busy_ratio", capacity_ms > 0 ? std::min(1.0, busy_ms[d] / capacity_ms) : 0.0},
                         {"evaluator", evaluators[d]->describe()}});
    }
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    return {{"name", name},         {"host", host},       {"pid", getpid()},           {"devices", devices},
            {"jobs", jobs},         {"in_flight", in_flight.size()}, {"duplicates", duplicates},
            {"reclaimed", reclaimed}, {"ts_ms", queue::now_ms()}, {"started_ms", started_ms},
            {"interval_s", options.heartbeat_s}};
  }

  /// Every heartbeat_s: the heartbeat hash entry, and the idle time of this process's pending
  /// jobs reset (XCLAIM to itself, JUSTID) so that no other worker claims them while it lives.
  void beat() {
    double backoff_s = 0.1;
    bool was_down = false;
    std::unique_ptr<Connection> c;
    while (!stop) {
      try {
        if (!c) c = connect(name + "/heartbeat", backoff_s, was_down);
        if (!c) break;
        c->command({"HSET", keys.workers(), name, heartbeat().dump()});
        std::map<std::string, std::string> mine;
        {
          std::lock_guard lock(mutex);
          mine = in_flight;
        }
        for (const auto& [consumer, entry] : mine) {
          c->command({"XCLAIM", keys.stream(), queue::kGroup, consumer, "0", entry, "JUSTID"});
        }
      } catch (const Unreachable&) {
        c.reset();
      } catch (const std::exception& e) {
        spdlog::warn("kgym worker {}: heartbeat: {}", name, e.what());
      }
      nap(options.heartbeat_s, stop);
    }
    try {  // a clean stop leaves the list
      if (!c) c = std::make_unique<Connection>(options.queue.url, options.queue.connect_timeout_s);
      c->command({"HDEL", keys.workers(), name});
    } catch (const std::exception&) {
    }
  }
};

}  // namespace

void run_workers(const WorkerOptions& options, const std::atomic<bool>& stop) {
  if (options.devices.empty()) throw Error(ErrorKind::usage, "--devices is empty; use cpu or cuda:0,...");
  if (options.workers_per_device < 1) throw Error(ErrorKind::usage, "--workers-per-device must be >= 1");
  if (options.queue.visibility_timeout_s < 3 * options.heartbeat_s) {
    throw Error(ErrorKind::usage, "--visibility-timeout must be at least 3 heartbeats (" +
                                      std::to_string(3 * options.heartbeat_s) + " s)");
  }
  Pool pool(options, stop);
  for (const auto& d : options.devices) {
    if (options.evaluator == "stand-in") {
      pool.evaluators.push_back(std::make_shared<StandInEvaluator>(options.stand_in_ms));
    } else {
      EngineOptions eo = options.engine;
      eo.device = parse_device(d, "--devices");
      eo.build_jobs = std::max(eo.build_jobs, options.workers_per_device);
      pool.evaluators.push_back(options.make_evaluator ? options.make_evaluator(eo)
                                                       : std::shared_ptr<Evaluator>(make_engine_evaluator(eo)));
    }
  }
  pool.busy.assign(options.devices.size(), 0);
  pool.busy_ms.assign(options.devices.size(), 0);
  spdlog::info("kgym worker {}: queue {} (stream {}), devices {}, {} per device, evaluator {}", pool.name,
               options.queue.url.text, pool.keys.stream(), fmt::join(options.devices, ","), options.workers_per_device,
               pool.evaluators.front()->describe());
  std::vector<std::thread> threads;
  threads.emplace_back([&pool] { pool.beat(); });
  for (std::size_t d = 0; d < options.devices.size(); ++d) {
    for (int k = 0; k < options.workers_per_device; ++k) threads.emplace_back([&pool, d, k] { pool.consume(d, k); });
  }
  for (auto& t : threads) t.join();
}

}  // namespace kgym
