// build/kgym-test: build/kgym's command line plus the scripted evaluator (a test double) for
// `kgym serve --evaluator scripted`, which the Python server tests and bench/server_load.py use.
#include "commands.hpp"
#include "scripted_evaluator.hpp"

int main(int argc, char** argv) {
  kgym::cli::register_evaluator("scripted", [](const kgym::EngineOptions&) { return kgym::make_scripted_evaluator(); });
  return kgym::cli::run_cli(argc, argv);
}
