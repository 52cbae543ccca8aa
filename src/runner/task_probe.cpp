#include "kgym/task_probe.hpp"

#include <fmt/format.h>

namespace kgym {

TaskProbe read_task_probe(const std::string& task_id, double scale, const nlohmann::json* reply,
                          const std::string& failure) {
  TaskProbe p;
  p.task_id = task_id;
  p.scale = scale;
  if (!reply) {
    p.reason = fmt::format("task {} at scale {:g} could not be probed: {}", task_id, scale, failure);
    return p;
  }
  p.runs = reply->value("runs", false);
  p.reason = p.runs ? std::string() : reply->value("reason", std::string("the probe gave no reason"));
  p.scaled = reply->value("scaled", nlohmann::json::object());
  if (reply->contains("output")) p.output = (*reply)["output"];
  p.input_elements = reply->value("input_elements", std::int64_t{0});
  return p;
}

nlohmann::json to_json(const TaskProbe& p) {
  nlohmann::json j = {{"task_id", p.task_id}, {"scale", p.scale}, {"runs", p.runs}, {"scaled", p.scaled}};
  if (!p.runs) j["reason"] = p.reason;
  if (!p.output.is_null()) j["output"] = p.output;
  if (p.runs) j["input_elements"] = p.input_elements;
  return j;
}

}  // namespace kgym
