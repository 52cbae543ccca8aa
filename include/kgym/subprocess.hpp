#pragma once
// Running a short helper program (g++ -E for the policy gate, Python's compiler for syntax
// messages) and capturing what it prints.

#include <string>
#include <vector>

namespace kgym {

/// What a helper program did.
struct ProcessResult {
  bool started = false;    ///< false: it could not be started (`error` says why)
  bool timed_out = false;  ///< killed (SIGKILL) at the time limit or past the output limit
  int exit_code = -1;      ///< its exit status; -1 when killed by a signal or not started
  std::string out, err;    ///< stdout and stderr, each cut at `max_output` bytes
  std::string error;       ///< why it could not be started
  bool ok() const { return started && !timed_out && exit_code == 0; }
};

/// Runs `argv` (argv[0] looked up on PATH) with stdin from /dev/null, waits at most
/// `timeout_ms` and returns its output. Never throws.
ProcessResult run_process(const std::vector<std::string>& argv, int timeout_ms, std::size_t max_output = 16u << 20);

}  // namespace kgym
