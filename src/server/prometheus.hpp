#pragma once
// GET /metrics in Prometheus's text exposition format (version 0.0.4). Internal to src/server/.
#include <string>

#include <nlohmann/json.hpp>

#include "kgym/gym.hpp"
#include "kgym/scheduler.hpp"

namespace kgym::api {

/// The server's metrics as Prometheus text (docs/server.md, "Health and metrics" lists them).
/// `queue` is QueueEvaluator::status() with `kgym serve --queue`, else null.
std::string prometheus_text(const SchedulerMetrics& scheduler, const GymMetrics& gym, const nlohmann::json& queue);

}  // namespace kgym::api
