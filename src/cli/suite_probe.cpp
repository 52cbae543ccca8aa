#include "suite_probe.hpp"

#include <cstdio>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "commands.hpp"
#include "kgym/engine.hpp"
#include "kgym/task.hpp"
#include "kgym/task_probe.hpp"

namespace kgym::cli {

namespace {
/// The reason's kind for the summary: the reference's exception type ("RuntimeError"), or how
/// the probe failed.
std::string reason_kind(const std::string& reason) {
  for (const char* stage : {"cannot be constructed", "fails on the probe input", "get_inputs() fails", "does not load"}) {
    if (reason.find(stage) == std::string::npos) continue;
    std::string kind = stage;
    const auto colon = reason.find(": ", reason.find(stage));
    if (colon != std::string::npos) {
      const auto end = reason.find(':', colon + 2);
      kind += " (" + reason.substr(colon + 2, end == std::string::npos ? std::string::npos : end - colon - 2) + ")";
    }
    return kind;
  }
  return "could not be probed";
}
}  // namespace

int run_suite_probe_audit(const SuiteProbeArgs& a) {
  const Suite suite = load_suite(a.suite);
  const auto tasks = select_tasks(suite, a.tasks);
  EngineOptions eo;
  eo.device = parse_device(a.device);
  eo.python = a.python;
  std::fprintf(stderr, "audit: probing the reference of %zu tasks at scale %g on %s...\n", tasks.size(), a.scale,
               a.device.c_str());
  Engine engine(eo);
  int runs = 0;
  std::map<std::string, int> why;
  for (const auto& task : tasks) {
    const TaskProbe p = engine.probe_task(task, a.scale);
    runs += p.runs;
    if (!p.runs) ++why[reason_kind(p.reason)];
    if (a.json) {
      std::cout << to_json(p).dump() << "\n" << std::flush;
    } else {
      std::string line = p.runs ? "runs" : "DOES NOT RUN";
      std::string detail;
      if (p.scaled.contains("notes"))
        for (const auto& n : p.scaled["notes"]) detail += "; " + n.get<std::string>();
      if (!p.runs) detail = "; " + p.reason.substr(0, 300);
      std::cout << fmt::format("{:<13} {:<58}{}\n", line, task.id, detail) << std::flush;
    }
  }
  std::fprintf(stderr, "audit: %d of %zu tasks run at scale %g\n", runs, tasks.size(), a.scale);
  for (const auto& [k, n] : why) std::fprintf(stderr, "  %4d  %s\n", n, k.c_str());
  return kExitOk;
}

}  // namespace kgym::cli
