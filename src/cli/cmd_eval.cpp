// `kgym eval`: judge candidates on tasks (placeholder until the engine lands in this branch).
#include "commands.hpp"
#include "kgym/error.hpp"

namespace kgym::cli {
void add_eval_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("eval", "Judge candidates on tasks and write verdicts as JSONL");
  cmd->allow_extras();
  cmd->callback([&exit_code] {
    exit_code = kExitInternal;
    throw Error(ErrorKind::internal, "kgym eval is being built on this branch");
  });
}
}  // namespace kgym::cli
