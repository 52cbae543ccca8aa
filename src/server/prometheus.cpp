// Prometheus text format of /metrics (prometheus.hpp).
#include "prometheus.hpp"

#include <fmt/format.h>

namespace kgym::api {
namespace {

using nlohmann::json;

std::string escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

struct Text {
  std::string out;
  void family(const std::string& name, const char* type, const std::string& help) {
    out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  }
  void sample(const std::string& name, const std::string& labels, double value) {
    out += name;
    if (!labels.empty()) out += "{" + labels + "}";
    out += " " + fmt::format("{}", value) + "\n";
  }
  /// One labelled series of a histogram from {"buckets", "counts" (cumulative), "sum", "count"}.
  void histogram(const std::string& name, const std::string& labels, const json& h) {
    const std::string sep = labels.empty() ? "" : ",";
    for (std::size_t i = 0; i < h["buckets"].size(); ++i) {
      sample(name + "_bucket", labels + sep + "le=\"" + fmt::format("{}", h["buckets"][i].get<double>()) + "\"",
             h["counts"][i].get<double>());
    }
    sample(name + "_bucket", labels + sep + "le=\"+Inf\"", h["count"].get<double>());
    sample(name + "_sum", labels, h["sum"].get<double>());
    sample(name + "_count", labels, h["count"].get<double>());
  }
};

std::string label(const std::string& key, const std::string& value) { return key + "=\"" + escape(value) + "\""; }

}  // namespace

std::string prometheus_text(const SchedulerMetrics& m, const GymMetrics& g, const json& queue) {
  Text t;
  const bool remote = queue.is_object();
  const bool reachable = remote && queue.value("reachable", false);
  t.family("kgym_queue_depth", "gauge", "Evaluations waiting: local = in the server's fair queue, redis = on the stream, not yet delivered to a worker");
  t.sample("kgym_queue_depth", label("queue", "local"), static_cast<double>(m.queue_length));
  if (reachable) t.sample("kgym_queue_depth", label("queue", "redis"), queue.value("depth", 0.0));
  t.family("kgym_jobs_in_flight", "gauge", "Evaluations being judged: local = running in the server's evaluator threads (with --queue: waiting for a worker's verdict), redis = delivered to a worker and not yet acknowledged");
  t.sample("kgym_jobs_in_flight", label("queue", "local"), m.busy_workers);
  if (reachable) t.sample("kgym_jobs_in_flight", label("queue", "redis"), queue.value("pending", 0.0));
  t.family("kgym_verdict_latency_seconds", "histogram", "Time from an evaluation leaving the server's fair queue to its verdict (with --queue: includes the Redis queue wait)");
  t.histogram("kgym_verdict_latency_seconds", "", m.eval_seconds.json());
  t.family("kgym_queue_wait_seconds", "histogram", "Time from submission to judging starting: local = the server's fair queue, redis = enqueued on the stream to a worker starting it (clocks of two hosts)");
  t.histogram("kgym_queue_wait_seconds", label("queue", "local"), m.wait_seconds.json());
  if (remote) t.histogram("kgym_queue_wait_seconds", label("queue", "redis"), queue["histograms"]["queue_wait_seconds"]);
  t.family("kgym_verdicts_total", "counter", "Verdicts returned to episodes, by outcome (include/kgym/outcome.hpp)");
  for (const auto& [outcome, n] : m.outcomes) t.sample("kgym_verdicts_total", label("outcome", outcome), static_cast<double>(n));
  t.family("kgym_evaluations_total", "counter", "Evaluations by what became of them");
  t.sample("kgym_evaluations_total", label("state", "submitted"), static_cast<double>(m.submitted));
  t.sample("kgym_evaluations_total", label("state", "completed"), static_cast<double>(m.completed));
  t.sample("kgym_evaluations_total", label("state", "failed"), static_cast<double>(m.failed));
  t.sample("kgym_evaluations_total", label("state", "cancelled"), static_cast<double>(m.cancelled));
  t.family("kgym_device_busy_ratio", "gauge", "Share of a device's worker slots judging: embedded = now, per device; with --queue = since the worker started, per worker and device");
  if (!remote) {
    for (const auto& d : m.devices) {
      t.sample("kgym_device_busy_ratio", label("device", d.device) + "," + label("worker", "embedded"),
               d.workers > 0 ? static_cast<double>(d.busy) / d.workers : 0.0);
    }
  }
  json workers = remote && queue.contains("workers") ? queue["workers"] : json::array();
  for (const auto& w : workers) {
    for (const auto& d : w.value("devices", json::array())) {
      t.sample("kgym_device_busy_ratio", label("device", d.value("device", "")) + "," + label("worker", w.value("name", "")),
               d.value("busy_ratio", 0.0));
    }
  }
  t.family("kgym_worker_heartbeat_age_seconds", "gauge", "Seconds since each queue worker's last heartbeat");
  for (const auto& w : workers) t.sample("kgym_worker_heartbeat_age_seconds", label("worker", w.value("name", "")), w.value("age_s", 0.0));
  t.family("kgym_worker_up", "gauge", "1 while a queue worker's heartbeat is fresh");
  for (const auto& w : workers) t.sample("kgym_worker_up", label("worker", w.value("name", "")), w.value("alive", false) ? 1 : 0);
  t.family("kgym_builds_total", "counter", "Judged candidates whose source the judging process had judged before (cached: its content-addressed build cache holds the build) or not (cold)");
  json stats = reachable && queue.contains("stats") ? queue["stats"] : json::object();
  if (remote) {
    t.sample("kgym_builds_total", label("cache", "cached"), stats.value("builds_cached", 0.0));
    t.sample("kgym_builds_total", label("cache", "cold"), stats.value("builds_cold", 0.0));
  } else {
    t.sample("kgym_builds_total", label("cache", "cached"), static_cast<double>(m.builds_cached));
    t.sample("kgym_builds_total", label("cache", "cold"), static_cast<double>(m.builds_cold));
  }
  if (remote) {
    t.family("kgym_queue_up", "gauge", "1 when the server reaches Redis");
    t.sample("kgym_queue_up", "", reachable ? 1 : 0);
    t.family("kgym_queue_jobs_total", "counter", "Queue jobs by what the workers did: stored (the one verdict per job id), duplicate (a second judging of a reclaimed job, dropped), reclaimed (claimed from a silent worker)");
    t.sample("kgym_queue_jobs_total", label("event", "stored"), stats.value("verdicts", 0.0));
    t.sample("kgym_queue_jobs_total", label("event", "duplicate"), stats.value("duplicates", 0.0));
    t.sample("kgym_queue_jobs_total", label("event", "reclaimed"), stats.value("reclaimed", 0.0));
  }
  t.family("kgym_open_episodes", "gauge", "Open episodes");
  t.sample("kgym_open_episodes", "", static_cast<double>(g.open_episodes));
  t.family("kgym_active_steps", "gauge", "submit_kernel steps in flight");
  t.sample("kgym_active_steps", "", static_cast<double>(g.active_steps));
  t.family("kgym_requests_total", "counter", "Environment requests");
  t.sample("kgym_requests_total", label("kind", "reset"), static_cast<double>(g.resets));
  t.sample("kgym_requests_total", label("kind", "step"), static_cast<double>(g.steps));
  t.sample("kgym_requests_total", label("kind", "error"), static_cast<double>(g.errors));
  return t.out;
}

}  // namespace kgym::api
