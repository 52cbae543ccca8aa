// The baseline twin (evaluation.hpp, start_baseline_twin): eager timed, on the CPU, in a worker
// on the candidate's own path instead of the long-lived reference worker.
#include <chrono>
#include <cstdlib>
#include <regex>

#include "evaluation.hpp"
#include "kgym/format.hpp"

namespace kgym::runner {
namespace fs = std::filesystem;

namespace {
fs::path twin_folder(const EngineState& engine, int n) { return engine.work_dir / ("twin-" + std::to_string(n)); }
}  // namespace

bool baseline_twin_enabled(const EngineState& engine) {
  const char* v = std::getenv("KGYM_BASELINE_TWIN");  // (its values are checked at start)
  return engine.worker_device == "cpu" && !(v && std::string(v) == "0");
}

TwinStart start_baseline_twin(EngineState& engine, const Task& task, const EvalOptions& eo, std::uint64_t init_seed,
                              int n, long long address_space_bytes) {
  const auto t0 = std::chrono::steady_clock::now();
  TwinStart out;
  // The task's source as a candidate: every `Model` renamed `ModelNew` (its class, super() calls,
  // any other use), as a same-op candidate is written (bench/same_op_control.py).
  static const std::regex model_word("\\bModel\\b");
  const std::string source = std::regex_replace(task.source, model_word, "ModelNew");
  SpawnSpec spec{"candidate", engine.worker_device, twin_folder(engine, n), {}, address_space_bytes};
  spec.env = engine.base_env(spec.workdir);
  try {
    {
      std::shared_lock no_timing_stopped(engine.quiet_mutex);  // (as start_candidate: no stop mid-fork)
      out.worker = std::make_unique<Worker>(*engine.zygote, spec);
    }
    const Message r = out.worker->request(protocol::LoadRequest{.format = std::string(kKernelBenchModule),
                                                                .candidate_source = source,
                                                                .task_source = task.source,
                                                                .scale = eo.scale,
                                                                .init_seed = init_seed},
                                          {}, eo.timeouts.load_s);
    const LoadRecord load = protocol::read<protocol::LoadReply>(r.header).record.get();
    if (!load.ok || !load.tampered.empty()) {
      out.why = "the baseline twin did not load the task's Model" +
                (load.failure ? ": " + load.failure->message : std::string());
      out.worker.reset();
    }
  } catch (const std::exception& e) {
    out.why = std::string("the baseline twin could not start: ") + e.what();
    out.worker.reset();
  }
  if (!out.worker && !keep_work()) {
    std::error_code ec;
    fs::remove_all(spec.workdir, ec);
  }
  out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

void finish_baseline_twin(EngineState& engine, std::unique_ptr<Worker> twin, int n) {
  if (twin) twin->kill();  // (nothing of it is kept: no clean exit to wait for)
  twin.reset();
  if (!keep_work()) {
    std::error_code ec;
    fs::remove_all(twin_folder(engine, n), ec);
  }
}

}  // namespace kgym::runner
