// `kgym generate`: candidates from an OpenAI-compatible chat-completions endpoint into a run
// directory; multi-turn runs judge each turn and feed the feedback back.

#include <cstdio>
#include <cstdlib>

#include "commands.hpp"
#include "kgym/error.hpp"
#include "kgym/generate.hpp"
#include "kgym/policy.hpp"
#include "kgym/run.hpp"

namespace kgym::cli {

namespace {

struct GenerateArgs {
  std::string backend;
  std::string endpoint, suite, out, device = "cpu", python = "python3", profile = "strict", api_key_env = "KGYM_API_KEY";
  std::vector<std::string> tasks;
  std::optional<long> token_budget;
  double timeout_s = 600;
  int cases = 5, jobs = 0;
  bool no_timing = false;
  RetryPolicy retry;
  GenerateOptions gen;
};

void run_generate(GenerateArgs& a) {
  if (a.gen.model.empty()) throw Error(ErrorKind::usage, "--model is required (the name the endpoint serves)");
  const Endpoint endpoint = parse_endpoint(a.endpoint);
  const policy::Profile profile = parse_profile(a.profile);
  const Suite suite = load_suite(a.suite);
  const std::vector<Task> tasks = select_tasks(suite, a.tasks);
  a.gen.token_budget = a.token_budget;
  a.gen.episode.max_turns = a.gen.turns;
  a.gen.episode.prompt.policy_profile = profile;
  if (a.backend.empty()) a.backend = a.device == "cpu" ? "cpu" : "cuda";
  a.gen.episode.prompt.backend = a.backend;
  a.gen.eval.n_cases = a.cases;
  a.gen.eval.policy_profile = profile;
  a.gen.eval.time_candidate = !a.no_timing;
  const char* key = std::getenv(a.api_key_env.c_str());
  ChatClient client(endpoint, key ? key : "", a.timeout_s, a.retry);
  std::unique_ptr<Engine> engine;
  if (a.gen.turns > 1) {
    EngineOptions eo;
    eo.device = parse_device(a.device);
    eo.python = a.python;
    eo.build_jobs = a.jobs > 0 ? a.jobs : (a.device == "cpu" ? 1 : 8);
    std::fprintf(stderr, "kgym generate: %d turns: judging each turn on %s (policy profile %s)\n", a.gen.turns,
                 a.device.c_str(), a.profile.c_str());
    engine = std::make_unique<Engine>(eo);
  }
  std::fprintf(stderr, "kgym generate: %zu task(s) x %d sample(s) x %d turn(s) from %s (%s) -> %s\n", tasks.size(),
               a.gen.samples, a.gen.turns, a.endpoint.c_str(), a.gen.model.c_str(), a.out.c_str());
  run::update_manifest(a.out, {{"generate", {{"endpoint", a.endpoint}, {"suite", a.suite}, {"device", a.device},
                                             {"policy_profile", a.profile}, {"started", run::utc_now()}}}});
  GenerateStats s = generate_run(a.out, tasks, client, a.gen, engine.get());
  std::printf("asked %d turn(s) (%ld request(s), %ld retried), reused %d; tokens %ld prompt + %ld completion; "
              "%d sample(s) complete, %d incomplete%s; %.1f s\n",
              s.turns_asked, s.requests, s.retries, s.turns_reused, s.prompt_tokens, s.completion_tokens,
              s.samples_complete, s.samples_incomplete, s.budget_exhausted ? " (token budget reached)" : "", s.seconds);
  std::printf("run: %s  (next: kgym eval --candidates %s --suite %s; kgym report %s)\n", a.out.c_str(), a.out.c_str(),
              a.suite.c_str(), a.out.c_str());
}

}  // namespace

void add_generate_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<GenerateArgs>();
  auto* cmd = app.add_subcommand("generate", "Ask an OpenAI-compatible endpoint for candidates; write a run directory");
  cmd->add_option("--model-endpoint", a->endpoint, "Base URL, e.g. http://127.0.0.1:8000/v1 (POSTs <URL>/chat/completions)")->required();
  cmd->add_option("--model", a->gen.model, "Model name the endpoint serves")->required();
  cmd->add_option("--suite", a->suite, "Directory of KernelBench problems")->required();
  cmd->add_option("--tasks", a->tasks, "Task ids, globs or levels (as kgym eval)")->delimiter(',');
  cmd->add_option("--out", a->out, "Run directory (created; an existing one is resumed)")->required();
  cmd->add_option("--samples", a->gen.samples, "Samples per task")->capture_default_str()->check(CLI::Range(1, 10000));
  cmd->add_option("--turns", a->gen.turns, "Turns per sample (> 1: each turn is judged and its feedback sent back)")
      ->capture_default_str()->check(CLI::Range(1, 100));
  cmd->add_option("--temperature", a->gen.temperature, "Sampling temperature")->capture_default_str();
  cmd->add_option("--max-tokens", a->gen.max_tokens, "Completion tokens per request")->capture_default_str();
  cmd->add_option("--concurrency", a->gen.concurrency, "Requests in flight at once")->capture_default_str()->check(CLI::Range(1, 1024));
  cmd->add_option("--token-budget", a->token_budget, "Stop asking once prompt + completion tokens reach this");
  cmd->add_option("--history-tokens", a->gen.episode.history_tokens,
                  "Budget of the compressed earlier turns in a prompt (as kgym serve)")->capture_default_str();
  cmd->add_option("--backend", a->backend, "Prompt backend: cuda, triton or cpu (default: from --device)");
  cmd->add_option("--prompt-style", a->gen.episode.prompt.style, "one_shot or zero_shot")->capture_default_str();
  cmd->add_option("--request-timeout", a->timeout_s, "Seconds per HTTP request")->capture_default_str();
  cmd->add_option("--retries", a->retry.max_attempts, "HTTP attempts per completion")->capture_default_str();
  cmd->add_option("--backoff", a->retry.base_s, "First back-off in seconds (doubles per retry)")->capture_default_str();
  cmd->add_option("--api-key-env", a->api_key_env, "Environment variable holding the API key")->capture_default_str();
  cmd->add_option("--device", a->device, "Device for judging turns (multi-turn)")->capture_default_str();
  cmd->add_option("--profile", a->profile, "Policy profile for judging turns")->capture_default_str();
  cmd->add_option("--cases", a->cases, "Correctness cases per judged turn")->capture_default_str()->check(CLI::Range(1, 100));
  cmd->add_flag("--no-timing", a->no_timing, "Judge turns for correctness only");
  cmd->add_option("--jobs", a->jobs, "Candidates building at once (multi-turn; 0: the default, 1 on cpu, 8 on cuda)")
      ->check(CLI::Range(0, 256));
  cmd->add_option("--python", a->python, "Python interpreter with torch 2.11")->capture_default_str();
  cmd->callback([a, &exit_code] {
    run_generate(*a);
    exit_code = kExitOk;
  });
}

}  // namespace kgym::cli
