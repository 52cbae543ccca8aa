#pragma once
// Subcommands of build/kgym. Each lives in cmd_<name>.cpp and registers itself on the app; the
// callback runs the command and returns the process exit code through `exit_code`.

#include <CLI/CLI.hpp>

namespace kgym::cli {

/// Exit codes: 0 ok, 1 the command ran and found failures (e.g. `check` rejected a candidate),
/// 2 usage or input error, 3 internal or worker error.
inline constexpr int kExitOk = 0, kExitFindings = 1, kExitInput = 2, kExitInternal = 3;

void add_eval_command(CLI::App& app, int& exit_code);
/// `kgym check`: the policy gate on candidate files or JSONL rows (cmd_check.cpp).
void add_check_command(CLI::App& app, int& exit_code);
/// `kgym tasks list|show|export`: generated tasks (cmd_tasks.cpp).
void add_tasks_command(CLI::App& app, int& exit_code);
/// `kgym serve`: the RL environment server (cmd_serve.cpp).
void add_serve_command(CLI::App& app, int& exit_code);
/// `kgym report`: metrics of a run, claims, implausible speedups, comparison (cmd_report.cpp).
void add_report_command(CLI::App& app, int& exit_code);
/// `kgym generate`: candidates from an OpenAI-compatible endpoint into a run directory (cmd_generate.cpp).
void add_generate_command(CLI::App& app, int& exit_code);
/// `kgym corpus verify`: re-verify a training corpus at a target size (cmd_corpus.cpp).
void add_corpus_command(CLI::App& app, int& exit_code);

}  // namespace kgym::cli
