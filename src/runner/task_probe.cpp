#include "kgym/task_probe.hpp"

#include <fmt/format.h>

#include "protocol.hpp"

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
  const auto r = runner::protocol::read<runner::protocol::ProbeTaskReply>(*reply);
  p.runs = r.runs;
  p.reason = p.runs ? std::string() : r.reason;
  p.scaled = r.scaled;
  if (r.output) p.output = *r.output;
  p.input_elements = r.input_elements;
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
