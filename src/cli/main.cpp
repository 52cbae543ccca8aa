// build/kgym: the command-line edge. Errors thrown inside kgym are translated here, once, into a
// message on stderr and an exit code (commands.hpp).

#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "kgym/error.hpp"

int main(int argc, char** argv) {
  using namespace kgym::cli;
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
  // A misspelt command ("evl") would otherwise read "A subcommand is required".
  const CLI::App& commands = app;
  const auto subs = commands.get_subcommands([](const CLI::App*) { return true; });
  std::string names;
  bool known = false;
  for (const auto* sub : subs) {
    names += (names.empty() ? "" : ", ") + sub->get_name();
    known = known || (argc > 1 && sub->get_name() == argv[1]);
  }
  if (argc > 1 && argv[1][0] != '-' && !known) {
    std::fprintf(stderr, "kgym: error: unknown command '%s': use one of %s (kgym --help)\n", argv[1], names.c_str());
    return kExitInput;
  }
  try {
    app.parse(argc, argv);
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
