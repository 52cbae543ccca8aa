// `kgym corpus verify`: re-verify a training corpus of (reference, solution) pairs at a target
// size (src/corpus, include/kgym/corpus.hpp).
#include <cstdio>
#include <memory>

#include "commands.hpp"
#include "kgym/options.hpp"
#include "kgym/corpus.hpp"
#include "kgym/policy.hpp"
#include "kgym/error.hpp"

namespace kgym::cli {

namespace {
struct CorpusArgs {
  std::string input, out, report, log, decontaminate, device = "cpu", python = "python3";
  corpus::VerifyOptions v;
  bool no_timing = false, compile_baseline = false, quiet = false;
  int cases = 5;
  std::string profile = "strict";
};
}  // namespace

void add_corpus_command(CLI::App& app, int& exit_code) {
  auto* corpus_cmd = app.add_subcommand("corpus", "Training corpora of (reference, solution) pairs");
  corpus_cmd->require_subcommand(1);
  auto* cmd = corpus_cmd->add_subcommand(
      "verify",
      "Re-verify a corpus before fine-tuning: scale each pair to --target-elements, judge it under --profile, "
      "decontaminate, cap per module and family; write the kept rows with their verdict and a report");
  auto a = std::make_shared<CorpusArgs>();
  cmd->add_option("corpus", a->input,
                  "JSONL rows: {\"reference\": <Model/get_inputs/get_init_inputs source>, \"solution\": <ModelNew source>, "
                  "\"module_id\"?, \"family\"?, \"source\"?}")
      ->required();
  cmd->add_option("--out", a->out, "Kept rows, each with its \"verdict\" (JSONL)")->required();
  cmd->add_option("--report", a->report, "Report: kept and dropped by reason and by family (JSON; default <out>.report.json)");
  cmd->add_option("--log", a->log, "One decision per input line, the resume state (JSONL; default <out>.log.jsonl)");
  cmd->add_option("--target-elements", a->v.target_elements,
                  "Scale each pair so that its largest input has about this many elements (the module-level size "
                  "constants, ints >= 16, as --scale does)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--profile", a->profile, "Policy profile: strict (pure kernels), hybrid (keeps library + custom), kernelbench or off")
      ->capture_default_str();
  cmd->add_option("--decontaminate", a->decontaminate, "Benchmark suite (KernelBench layout) whose near copies are dropped");
  cmd->add_option("--threshold", a->v.threshold, "Token-set Jaccard above which a reference is a near copy")
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--max-per-module", a->v.max_per_module, "Kept pairs per module_id (0: no cap)")->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-per-family", a->v.max_per_family, "Kept pairs per family (0: no cap)")->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-tokens", a->v.max_tokens,
                  "Token budget of reference + solution, counted as ceil(bytes / 4) (0: no cap)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_flag("--resume", a->v.resume, "Keep the decisions already in the log and go on from there");
  cmd->add_option("--device", a->device, "cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--python", a->python, "Python interpreter with torch 2.11")->capture_default_str();
  cmd->add_option("--cases", a->cases, "Correctness cases per pair")->capture_default_str()->check(CLI::Range(1, 100));
  cmd->add_flag("--no-timing", a->no_timing, "Judge correctness only (no speedups in the verdicts)");
  cmd->add_flag("--compile-baseline", a->compile_baseline, "Also time torch.compile (default on for cuda)");
  cmd->add_flag("--quiet", a->quiet, "No line per row on stderr");
  cmd->callback([a, &exit_code] {
    a->v.profile = parse_profile(a->profile);
    parse_device(a->device, "--device");
    a->v.input = a->input;
    a->v.out = a->out;
    a->v.report = a->report;
    a->v.log = a->log;
    if (!a->decontaminate.empty()) a->v.decontaminate = a->decontaminate;
    a->v.eval.n_cases = a->cases;
    a->v.eval.time_candidate = !a->no_timing;
    a->v.eval.compile_baseline = a->compile_baseline || a->device != "cpu";
    EngineOptions eo;
    eo.device = parse_device(a->device);
    eo.python = a->python;
    Engine engine(eo);
    const auto report = corpus::verify(engine, a->v, [&](const corpus::Decision& d) {
      if (!a->quiet)
        std::fprintf(stderr, "line %-6d %-16s %s\n", d.line, d.status.c_str(), d.detail.substr(0, 200).c_str());
    });
    std::fprintf(stderr, "%s", report.render().c_str());
    exit_code = kExitOk;
  });
}

}  // namespace kgym::cli
