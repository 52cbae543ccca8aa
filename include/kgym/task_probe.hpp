#pragma once
// The reference probe (python/kgym_worker/probe.py): whether a task's reference runs at a
// scale on a device. The engine probes every task before its first candidate's cases (inside
// the reference worker's load_task, cached per task source and scale); a task that does not run
// makes each of its candidates `task_error`, naming the task, the scale and the reference's
// error. `kgym tasks audit --scale F` asks the same probe for every task of a suite.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace kgym {

/// One task's probe at one scale.
struct TaskProbe {
  std::string task_id;
  double scale = 1.0;
  bool runs = false;       ///< the reference was constructed and ran on the probe input
  std::string reason;      ///< why not (names the task, the scale and the reference's error); empty when it runs
  nlohmann::json scaled;   ///< the size constants changed ({name: [old, new]}, "derived", "notes")
  nlohmann::json output;   ///< the probe output's shapes (one list per output tensor)
  std::int64_t input_elements = 0;  ///< the largest input tensor's element count at this scale
};

/// The probe from the reference worker's `probe_task` reply header, or from the trusted side's
/// own failure (`failure`: the worker died or timed out) when `reply` is null.
TaskProbe read_task_probe(const std::string& task_id, double scale, const nlohmann::json* reply,
                          const std::string& failure);

/// JSON of a probe: {"task_id", "scale", "runs", "reason"?, "scaled", "output"?}.
nlohmann::json to_json(const TaskProbe& probe);

}  // namespace kgym
