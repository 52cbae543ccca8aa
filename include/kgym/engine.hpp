#pragma once
// The evaluation engine: runs the gates for (task, candidate) pairs on a device, using
// supervised worker processes, and returns verdicts. The CLI runs it in-process; the server
// calls it from many threads. See docs/architecture.md for the process model.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kgym/candidate.hpp"
#include "kgym/eval_options.hpp"
#include "kgym/evaluator.hpp"
#include "kgym/options.hpp"
#include "kgym/task.hpp"
#include "kgym/task_probe.hpp"
#include "kgym/verdict.hpp"

namespace kgym {

/// Process-wide engine options.
struct EngineOptions {
  Device device;                    ///< the CPU (default) or a CUDA device (parse_device at each edge)
  std::string python = "python3";   ///< interpreter with torch 2.11 installed
  std::filesystem::path python_dir; ///< folder holding the kgym_worker package (default: <source>/python)
  std::filesystem::path work_dir;   ///< private scratch + build cache root (default: a new temp dir)
  int build_jobs = 2;               ///< candidates loading/building concurrently
  bool verbose = false;
};

/// Runs evaluations. Thread-safe: evaluate() may be called from many threads; candidate loads
/// (builds) run concurrently up to build_jobs, cases and timing hold the device exclusively.
class Engine final : public Evaluator {
 public:
  /// Starts the worker zygote (imports torch once). Throws Error(worker) when Python, torch or
  /// the worker package cannot be started, with the command that failed.
  explicit Engine(EngineOptions options);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Judges one candidate on one task; never throws for a candidate's misbehaviour (that is an
  /// outcome). Throws Error(worker) only when the trusted side itself cannot go on.
  Verdict evaluate(const Task& task, const Candidate& candidate, const EvalOptions& options) override;
  /// "engine <device>", for /metadata.
  std::string describe() const override;

  /// Whether `task`'s reference runs at `scale` on this engine's device (kgym/task_probe.hpp):
  /// loads, constructs and runs it once on the probe input. Never throws for the task's failure.
  TaskProbe probe_task(const Task& task, double scale);

  /// Device name, torch/CUDA/driver versions, as reported by the reference worker.
  nlohmann::json environment();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// An Engine for one device (EngineOptions::device) behind the Evaluator interface, as `kgym
/// serve` holds one per device. Throws Error(worker) when Python/torch cannot be started.
std::unique_ptr<Evaluator> make_engine_evaluator(EngineOptions options);

/// Python's own message for a candidate that does not parse ("line 9, column 24: expected ':':
/// def forward(self, x)"), from `python -I -S` compiling the source (compile only: nothing of it
/// runs); std::nullopt when Python compiles it, or cannot be asked within 10 s. `kgym eval` and
/// `kgym check` both report it, so that they describe a syntax error alike.
std::optional<std::string> python_syntax_error(const std::string& python, const std::string& code);

}  // namespace kgym
