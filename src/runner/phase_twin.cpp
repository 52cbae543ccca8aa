// The baseline twin (evaluation.hpp, start_baseline_twin): eager timed, on the CPU, in a worker
// on the candidate's own path instead of the long-lived reference worker.
#include <cstdlib>
#include <regex>

#include "evaluation.hpp"
#include "kgym/format.hpp"

namespace kgym::runner {
namespace fs = std::filesystem;

bool baseline_twin_enabled(const EngineState& engine) {
  const char* v = std::getenv("KGYM_BASELINE_TWIN");  // (its values are checked at start)
  return engine.worker_device == "cpu" && !(v && std::string(v) == "0");
}

std::unique_ptr<Worker> start_baseline_twin(Evaluation& ev, std::string& why) {
  EngineState& engine = ev.engine;
  PhaseClock phase(ev.m);
  // The task's source as a candidate: every `Model` renamed `ModelNew` (its class, super() calls,
  // any other use), as a same-op candidate is written (bench/same_op_control.py).
  static const std::regex model_word("\\bModel\\b");
  const std::string source = std::regex_replace(ev.task.source, model_word, "ModelNew");
  SpawnSpec spec{"candidate", engine.worker_device, engine.work_dir / ("twin-" + std::to_string(ev.n)), {},
                 ev.spec.address_space_bytes};
  spec.env = engine.base_env(spec.workdir);
  std::unique_ptr<Worker> twin;
  try {
    std::shared_lock no_timing_stopped(engine.quiet_mutex);
    twin = std::make_unique<Worker>(*engine.zygote, spec);
    const Message r = twin->request(protocol::LoadRequest{.format = std::string(kKernelBenchModule),
                                                          .candidate_source = source,
                                                          .task_source = ev.task.source,
                                                          .scale = ev.eo.scale,
                                                          .init_seed = ev.m.init_seed},
                                    {}, ev.eo.timeouts.load_s);
    const auto reply = protocol::read<protocol::LoadReply>(r.header);
    const LoadRecord load = reply.record.get();
    if (!load.ok || !load.tampered.empty()) {
      why = "the baseline twin did not load the task's Model" +
            (load.failure ? ": " + load.failure->message : std::string());
      twin.reset();
    }
  } catch (const std::exception& e) {
    why = std::string("the baseline twin could not start: ") + e.what();
    twin.reset();
  }
  phase.lap("twin_start");
  if (!twin && !keep_work()) {
    std::error_code ec;
    fs::remove_all(spec.workdir, ec);
  }
  return twin;
}

void finish_baseline_twin(std::unique_ptr<Worker> twin, Evaluation& ev) {
  twin->kill();  // (nothing of it is kept: no clean exit to wait for)
  twin.reset();
  if (!keep_work()) {
    std::error_code ec;
    fs::remove_all(ev.engine.work_dir / ("twin-" + std::to_string(ev.n)), ec);
  }
}

}  // namespace kgym::runner
