// The command-line edge of build/kgym (main.cpp) and of the tests' build/kgym-test: errors thrown
// inside kgym are translated here, once, into a message on stderr and an exit code (commands.hpp).

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "kgym/error.hpp"

namespace {

/// Edit distance (insertions, deletions, substitutions) between two option names.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

/// For CLI11's "arguments were not expected": the first unknown option of the command that was
/// run, and the command's closest long option (at most 2 edits away), or "" when none is close.
/// "kgym eval --taks x" -> "kgym: error: unknown option '--taks' for 'kgym eval': did you mean '--task'?".
std::string unknown_option_message(CLI::App& app, const std::vector<std::string>& extras) {
  CLI::App* cmd = &app;  // the deepest command that was run ("kgym tasks list")
  for (auto parsed = app.get_subcommands(); !parsed.empty(); parsed = cmd->get_subcommands()) cmd = parsed.back();
  std::string where;
  for (const CLI::App* a = cmd; a != nullptr && a != &app; a = a->get_parent()) where = " " + a->get_name() + where;
  where = "kgym" + where;
  for (const std::string& arg : extras) {
    if (arg.empty() || arg[0] != '-') {  // a path where an option was meant: name the option
      const bool takes_candidates = cmd->get_option_no_throw("--candidates") != nullptr;
      return "kgym: error: unexpected argument '" + arg + "' for '" + where + "'" +
             (takes_candidates ? ": give candidates as --candidates " + arg : "") + " (" + where + " --help)\n";
    }
    if (arg.size() < 2) continue;
    const std::string name = arg.substr(0, arg.find('='));
    std::string best;
    std::size_t best_d = 3;
    for (const CLI::Option* opt : cmd->get_options()) {
      for (const std::string& l : opt->get_lnames()) {
        const std::size_t d = edit_distance(name, "--" + l);
        if (d < best_d) best_d = d, best = "--" + l;
      }
    }
    return "kgym: error: unknown option '" + name + "' for '" + where + "'" +
           (best.empty() ? "" : ": did you mean '" + best + "'?") + " (" + where + " --help lists them)\n";
  }
  return "";
}

}  // namespace

int kgym::cli::run_cli(int argc, char** argv) {
  CLI::App app{"kgym: a kernel gym that judges GPU kernel candidates against PyTorch references"};
  app.set_version_flag("--version", std::string("kgym ") + KGYM_VERSION);
  app.require_subcommand(1);
  int exit_code = kExitOk;
  add_eval_command(app, exit_code);
  add_check_command(app, exit_code);
  add_tasks_command(app, exit_code);
  add_serve_command(app, exit_code);
  add_report_command(app, exit_code);
  add_generate_command(app, exit_code);
  add_worker_command(app, exit_code);
  add_corpus_command(app, exit_code);
  // A misspelt command ("evl", "tasks lst") would otherwise read "A subcommand is required".
  // Walks the command words given: each must name a command of the level above when that level
  // has commands.
  {
    const CLI::App* level = &app;
    std::string path = "kgym";
    for (int i = 1; i < argc && argv[i][0] != '-'; ++i) {
      const auto subs = level->get_subcommands([](const CLI::App*) { return true; });
      if (subs.empty()) break;
      const CLI::App* next = nullptr;
      std::string names;
      for (const auto* sub : subs) {
        names += (names.empty() ? "" : ", ") + sub->get_name();
        if (sub->get_name() == argv[i]) next = sub;
      }
      if (!next) {
        std::fprintf(stderr, "kgym: error: unknown command '%s'%s: use one of %s (%s --help)\n", argv[i],
                     level == &app ? "" : (" for '" + path + "'").c_str(), names.c_str(), path.c_str());
        return kExitInput;
      }
      level = next;
      path += " " + next->get_name();
    }
  }
  if (argc == 1) {  // a bare `kgym`: what there is to run (CLI11 said only "A subcommand is required")
    std::string names;
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; }))
      names += (names.empty() ? "" : ", ") + sub->get_name();
    std::fprintf(stderr, "kgym: error: give a command: %s (kgym --help; kgym eval runs the built-in default)\n",
                 names.c_str());
    return kExitInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ExtrasError& e) {
    const std::string msg = unknown_option_message(app, app.remaining(true));
    if (msg.empty()) return app.exit(e) == 0 ? kExitOk : kExitInput;
    std::fputs(msg.c_str(), stderr);
    return kExitInput;
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitInput;
  } catch (const kgym::Error& e) {
    std::fprintf(stderr, "kgym: error: %s\n", e.what());
    spdlog::debug("thrown at {}", e.where());
    return e.kind() == kgym::ErrorKind::usage || e.kind() == kgym::ErrorKind::input ? kExitInput
                                                                                      : kExitInternal;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kgym: internal error: %s\n", e.what());
    return kExitInternal;
  }
  return exit_code;
}
