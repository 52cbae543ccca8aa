#pragma once
// `kgym tasks audit --suite DIR --scale F`: which tasks of a KernelBench-format suite run at a
// scale (the reference probe, kgym/task_probe.hpp), and why the others do not.

#include <string>
#include <vector>

namespace kgym::cli {

struct SuiteProbeArgs {
  std::string suite;                 ///< suite directory (load_suite)
  std::vector<std::string> tasks;    ///< select_tasks patterns; empty: all
  double scale = 1.0;                ///< the --scale the tasks are probed at
  std::string device = "cpu", python = "python3";
  bool json = false;                 ///< one JSON object per task on stdout (else a table)
};

/// Probes every selected task and prints the result; returns the exit code (0: every task was
/// probed, whether it runs or not).
int run_suite_probe_audit(const SuiteProbeArgs& args);

}  // namespace kgym::cli
