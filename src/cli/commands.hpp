#pragma once
// Subcommands of build/kgym. Each lives in cmd_<name>.cpp and registers itself on the app; the
// callback runs the command and returns the process exit code through `exit_code`.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "kgym/engine.hpp"
#include "kgym/task.hpp"

namespace kgym::cli {

/// Exit codes: 0 ok, 1 the command ran and found failures (e.g. `check` rejected a candidate),
/// 2 usage or input error, 3 internal or worker error.
inline constexpr int kExitOk = 0, kExitFindings = 1, kExitInput = 2, kExitInternal = 3;

/// Parses the command line, runs the command, translates errors into a message and an exit code.
int run_cli(int argc, char** argv);

/// Makes the evaluator of one device for `kgym serve --evaluator NAME`.
using EvaluatorFactory = std::function<std::unique_ptr<Evaluator>(const EngineOptions&)>;
/// Adds an evaluator `kgym serve --evaluator NAME` offers. build/kgym has only "engine"; the
/// tests' build/kgym-test adds "scripted", a test double (tests/support/scripted_evaluator.hpp).
/// Call before run_cli.
void register_evaluator(const std::string& name, EvaluatorFactory factory);
/// The factory registered as `name`, or nullptr (cmd_serve.cpp; kgym worker uses it too).
const EvaluatorFactory* find_evaluator(const std::string& name);

void add_eval_command(CLI::App& app, int& exit_code);
/// `kgym check`: the policy gate on candidate files or JSONL rows (cmd_check.cpp).
void add_check_command(CLI::App& app, int& exit_code);
/// `kgym tasks list|show|export|audit`: the built-in default suite and generated tasks (cmd_tasks.cpp).
void add_tasks_command(CLI::App& app, int& exit_code);
/// `kgym serve`: the RL environment server (cmd_serve.cpp).
void add_serve_command(CLI::App& app, int& exit_code);
/// `kgym report`: metrics of a run, claims, implausible speedups, comparison (cmd_report.cpp).
void add_report_command(CLI::App& app, int& exit_code);
/// `kgym generate`: candidates from an OpenAI-compatible endpoint into a run directory (cmd_generate.cpp).
void add_generate_command(CLI::App& app, int& exit_code);
/// `kgym worker`: judges jobs of the Redis Streams queue (cmd_worker.cpp).
void add_worker_command(CLI::App& app, int& exit_code);

/// The built-in default suite, as `kgym eval` runs it and `kgym serve` serves it without --suite
/// (`kgym tasks list` lists it): the examples' tasks (examples/suite, root `suite.root`), then
/// the generated default suite (cmd_serve.cpp).
Suite builtin_suite();

/// "cpu" | "cuda" | "cuda:0,cuda:1" -> devices (cmd_serve.cpp). Throws Error(usage) for anything else.
std::vector<Device> parse_devices(const std::string& spec);
/// `kgym corpus verify`: re-verify a training corpus at a target size (cmd_corpus.cpp).
void add_corpus_command(CLI::App& app, int& exit_code);

}  // namespace kgym::cli
