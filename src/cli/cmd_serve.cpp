// `kgym serve`: the RL environment server (docs/server.md).
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "kgym/error.hpp"
#include "kgym/evaluator.hpp"
#include "kgym/gym.hpp"
#include "kgym/journal.hpp"
#include "kgym/queue.hpp"
#include "kgym/returns.hpp"
#include "kgym/server.hpp"
#include "kgym/options.hpp"
#include "kgym/paths.hpp"
#include "kgym/reward.hpp"
#include "kgym/task.hpp"
#include "kgym/taskgen.hpp"

namespace kgym::cli {
namespace {

/// The evaluators `--evaluator` names: "engine", and what register_evaluator added.
std::map<std::string, EvaluatorFactory>& evaluators() {
  static std::map<std::string, EvaluatorFactory> known = {
      {"engine", [](const EngineOptions& eo) { return make_engine_evaluator(eo); }}};
  return known;
}

struct ServeArgs {
  std::string host = "127.0.0.1";
  int port = 8000;
  std::string devices = "cpu";
  int workers_per_device = 1;
  std::string suite;
  std::string evaluator = "engine";
  std::string python = "python3";
  int max_turns = 4;
  std::string reward = "kevin";
  double gamma = 0.4;
  std::string return_kind = "sum";
  std::string backend;  // default: from the device
  std::string policy_profile = "strict";
  int n_cases = 5;
  double scale = 1.0;  // the size constants' factor (eval's --scale)
  std::size_t max_episodes = 4096;
  std::size_t max_code_bytes = 256 * 1024;
  double roofline_bandwidth_gbs = 0;  // 0: no roofline floors
  double roofline_peak_tflops = 0;
  bool verbose = false;
  std::string queue;        // redis://HOST:PORT: judge on `kgym worker`s (docs/deploy.md)
  std::string queue_prefix = "kgym";
  int queue_in_flight = 256;
  double queue_job_timeout_s = 0;
  std::string store;        // SQLite file of the episode journal
  double idle_timeout_s = 3600;
};

/// Roofline floors (ms) per task id from the suite's manifest.json (written by `kgym tasks
/// export`: per task its relative `path` and `cost` {bytes, flops}), for a device with the given
/// bandwidth and peak. A task id of load_suite is its path without ".py" (flat: the stem; KernelBench
/// layout: "L<N>/<stem>"), so the manifest's path maps to the id the same way. Empty when the
/// suite has no manifest or the device numbers are unset.
std::map<std::string, double> roofline_floors(const Suite& suite, double bandwidth_gbs, double peak_tflops) {
  std::map<std::string, double> floors;
  const auto manifest_path = suite.root / "manifest.json";
  if (bandwidth_gbs <= 0 || peak_tflops <= 0 || !std::filesystem::exists(manifest_path)) return floors;
  nlohmann::json manifest = nlohmann::json::parse(read_file(manifest_path), nullptr, false);
  if (manifest.is_discarded() || !manifest.contains("tasks")) {
    throw Error(ErrorKind::input, manifest_path.string() + " is not a kgym tasks manifest (no \"tasks\")");
  }
  std::map<std::string, std::string> id_by_path;
  for (const auto& t : suite.tasks) {
    id_by_path[std::filesystem::path(t.origin).lexically_relative(suite.root).replace_extension().string()] = t.id;
  }
  for (const auto& t : manifest["tasks"]) {
    if (!t.contains("path") || !t.contains("cost")) continue;
    auto it = id_by_path.find(std::filesystem::path(t["path"].get<std::string>()).replace_extension().string());
    if (it == id_by_path.end()) continue;
    const double bytes = t["cost"].value("bytes", 0.0), flops = t["cost"].value("flops", 0.0);
    const double floor_ms = std::max(bytes / (bandwidth_gbs * 1e9), flops / (peak_tflops * 1e12)) * 1e3;
    if (floor_ms > 0) floors[it->second] = floor_ms;
  }
  return floors;
}

}  // namespace

/// "cpu" | "cuda" | "cuda:0,cuda:1" -> devices (parse_device each). Throws Error(usage) for anything else.
std::vector<Device> parse_devices(const std::string& spec) {
  std::vector<Device> out;
  std::stringstream in(spec);
  for (std::string d; std::getline(in, d, ',');) out.push_back(parse_device(d, "--devices"));
  if (out.empty()) throw Error(ErrorKind::usage, "--devices is empty; use cpu or cuda:0,...");
  return out;
}

Suite builtin_suite() {
  Suite suite = load_suite(install_root() / "examples" / "suite");
  std::set<std::string> ids;
  for (const auto& t : suite.tasks) ids.insert(t.id);
  for (auto& e : taskgen::default_suite_evaluations())
    if (ids.insert(e.task.id).second) suite.tasks.push_back(std::move(e.task));
  return suite;
}

namespace {

void run_serve(const ServeArgs& a) {
  if (a.port < 0 || a.port > 65535) throw Error(ErrorKind::usage, "--port must be 0..65535");
  if (!evaluators().count(a.evaluator)) {
    std::string known;
    for (const auto& [name, make] : evaluators()) known += (known.empty() ? "" : ", ") + name;
    throw Error(ErrorKind::usage, "unknown --evaluator '" + a.evaluator + "': use " + known +
                                      " (the scripted test double is in the tests' build/kgym-test)");
  }
  // The typed options, parsed once here, before any worker starts.
  const RewardName reward = parse_reward(a.reward);
  const policy::Profile profile = parse_profile(a.policy_profile);
  const std::vector<Device> parsed_devices = parse_devices(a.devices);
  Suite suite;
  if (a.suite.empty()) {
    suite = builtin_suite();
    std::fprintf(stderr, "kgym serve: no --suite given: serving the built-in default (the examples in %s and the "
                         "generated default suite, %zu tasks; `kgym tasks list`)\n",
                 suite.root.c_str(), suite.tasks.size());
  } else {
    suite = load_suite(a.suite);
  }
  std::vector<Scheduler::Device> devices;
  std::shared_ptr<QueueEvaluator> queue;
  if (!a.queue.empty()) {
    // The devices are the workers' (kgym worker --devices); --devices still picks the prompt's backend.
    QueueOptions qo;
    qo.url = parse_queue_url(a.queue);
    qo.prefix = a.queue_prefix;
    qo.job_timeout_s = a.queue_job_timeout_s;
    if (a.queue_in_flight < 1) throw Error(ErrorKind::usage, "--queue-in-flight must be >= 1");
    queue = std::make_shared<QueueEvaluator>(qo);
  }
  for (const Device& device : parsed_devices) {
    const std::string d = device.name();
    if (queue) {
      if (devices.empty()) devices.push_back({"queue", queue});
      continue;
    }
    EngineOptions eo;
    eo.device = device;
    eo.python = a.python;
    eo.build_jobs = std::max(1, a.workers_per_device);
    eo.verbose = a.verbose;
    devices.push_back({d, std::shared_ptr<Evaluator>(evaluators().at(a.evaluator)(eo))});
  }
  GymConfig config;
  config.episode.max_turns = a.max_turns;
  config.episode.reward = reward;
  config.episode.gamma = a.gamma;
  config.episode.return_kind = a.return_kind;
  config.episode.max_code_bytes = a.max_code_bytes;
  config.episode.prompt.backend = !a.backend.empty() ? a.backend : (devices.front().name == "cpu" ? "cpu" : "cuda");
  config.episode.prompt.policy_profile = profile;
  config.eval.n_cases = a.n_cases;
  config.eval.scale = a.scale;
  // Full-size KernelBench on the CPU: level-1 inputs reach several GB each, and a turn then takes
  // minutes and may run out of memory (an honest ReLU's turn can end in runtime_error after
  // two minutes). As in eval: a size constant of 65536 or more says so.
  if (!queue && a.evaluator == "engine" && a.scale == 1.0 &&
      std::any_of(devices.begin(), devices.end(), [](const auto& d) { return d.name == "cpu"; })) {
    const auto large = std::count_if(suite.tasks.begin(), suite.tasks.end(), has_full_size_inputs);
    if (large > 0)
      std::fprintf(stderr, "kgym serve: note: %zu of the suite's %zu tasks have full-size inputs (a size constant of "
                           "65536 or more); on the CPU a turn can take minutes and many GB of memory: --scale 0.05 "
                           "shrinks every size constant to 5%%\n", static_cast<std::size_t>(large), suite.tasks.size());
  }
  config.eval.policy_profile = profile;  // each turn takes its episode's (Gym::step)
  config.max_episodes = a.max_episodes;
  config.idle_timeout_s = a.idle_timeout_s;
  if (!a.store.empty()) config.journal = std::make_shared<EpisodeJournal>(a.store);
  auto floors = std::make_shared<std::map<std::string, double>>(
      roofline_floors(suite, a.roofline_bandwidth_gbs, a.roofline_peak_tflops));
  config.roofline_floor = [floors](const Task& t) -> std::optional<double> {
    auto it = floors->find(t.id);
    return it == floors->end() ? std::nullopt : std::optional<double>(it->second);
  };
  // Validate the episode defaults once, on the first task, so a bad flag fails at start-up.
  try {
    Episode probe("probe", suite.tasks.front(), config.episode);
  } catch (const Error& e) {
    throw Error(ErrorKind::usage, std::string("invalid episode defaults: ") + e.what());
  }

  // Handle SIGINT/SIGTERM in this thread: block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  Scheduler scheduler(std::move(devices), queue ? a.queue_in_flight : a.workers_per_device);
  Gym gym(std::move(suite.tasks), scheduler, config);
  ServerConfig sc;
  if (queue) sc.queue_status = [queue] { return queue->status(); };
  sc.host = a.host;
  sc.port = static_cast<std::uint16_t>(a.port);
  Server server(gym, scheduler, sc);
  std::uint16_t port = server.start();
  if (queue) {
    std::printf("kgym serve: listening on http://%s:%u (%zu tasks, queue %s, up to %d evaluations in flight)\n",
                a.host.c_str(), port, gym.tasks().size(), a.queue.c_str(), a.queue_in_flight);
  } else {
    std::printf("kgym serve: listening on http://%s:%u (%zu tasks, devices %s, %d workers per device, evaluator %s)\n",
                a.host.c_str(), port, gym.tasks().size(), a.devices.c_str(), a.workers_per_device, a.evaluator.c_str());
  }
  std::fflush(stdout);
  int sig = 0;
  const timespec second{1, 0};
  for (;;) {  // wakes every second to close idle episodes
    sig = sigtimedwait(&signals, nullptr, &second);
    if (sig > 0) break;
    if (std::size_t n = gym.close_idle()) spdlog::info("kgym serve: closed {} idle episode(s)", n);
  }
  spdlog::info("kgym serve: signal {}, stopping", sig);
  gym.detach_journal();  // episodes the hang-ups close stay open in the journal, for the next start
  server.stop();
}

}  // namespace

void register_evaluator(const std::string& name, EvaluatorFactory factory) { evaluators()[name] = std::move(factory); }

const EvaluatorFactory* find_evaluator(const std::string& name) {
  const auto it = evaluators().find(name);
  return it == evaluators().end() ? nullptr : &it->second;
}

void add_serve_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ServeArgs>();
  auto* cmd = app.add_subcommand("serve", "Serve the RL environment over HTTP and WebSocket (OpenEnv protocol)");
  cmd->add_option("--host", args->host, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", args->port, "Port (0: any free port, printed at start)")->capture_default_str();
  cmd->add_option("--devices", args->devices, "cpu, cuda, or cuda:0,cuda:1,... (one engine per device)")->capture_default_str();
  cmd->add_option("--workers-per-device", args->workers_per_device, "Concurrent evaluations per device")->capture_default_str();
  cmd->add_option("--suite", args->suite, "Task suite directory (KernelBench layout or flat); default: the built-in default suite, as in eval");
  cmd->add_option("--evaluator", args->evaluator, "engine (real judging; the tests' build/kgym-test adds scripted, a deterministic test double)")->capture_default_str();
  cmd->add_option("--python", args->python, "Python interpreter with torch for the engine")->capture_default_str();
  cmd->add_option("--max-turns", args->max_turns, "Default turns per episode (1 = single-turn)")->capture_default_str();
  cmd->add_option("--reward", args->reward, "Default reward: kevin, log_speed, stepped, roofline")->capture_default_str();
  cmd->add_option("--gamma", args->gamma, "Default discount of episode returns")->capture_default_str();
  cmd->add_option("--return", args->return_kind, "Default return: sum or max")->capture_default_str();
  cmd->add_option("--backend", args->backend, "Prompt backend: cuda, triton, cpu (default: from the device)");
  cmd->add_option("--profile,--policy-profile", args->policy_profile, "Default policy profile: strict, hybrid, kernelbench or off (docs/policy_rules.md)")->capture_default_str();
  cmd->add_option("--cases", args->n_cases, "Correctness cases per evaluation")->capture_default_str()->check(CLI::Range(1, 100));
  cmd->add_option("--scale", args->scale, "Multiply every task's module-level size constants (ints >= 16) by this, as in eval")
      ->capture_default_str()->check(CLI::Validator(
          [](std::string& v) { return std::stod(v) > 0 ? std::string() : std::string("must be > 0 (a factor for the size constants, e.g. 0.05)"); },
          "POSITIVE"));
  cmd->add_option("--max-episodes", args->max_episodes, "Open episodes at most")->capture_default_str();
  cmd->add_option("--max-code-bytes", args->max_code_bytes, "Longest accepted submission")->capture_default_str();
  cmd->add_option("--roofline-bandwidth-gbs", args->roofline_bandwidth_gbs,
                  "Device DRAM bandwidth (GB/s) for roofline floors from the suite's manifest.json (H200: 4800)");
  cmd->add_option("--roofline-peak-tflops", args->roofline_peak_tflops,
                  "Device peak TFLOP/s for roofline floors from the suite's manifest.json");
  cmd->add_flag("--verbose", args->verbose, "Log the engine's worker activity");
  cmd->add_option("--queue", args->queue,
                  "Judge on `kgym worker`s through Redis Streams at redis://HOST:PORT (docs/deploy.md); default: in this process");
  cmd->add_option("--queue-prefix", args->queue_prefix, "Prefix of the queue's Redis keys (the workers' --queue-prefix)")->capture_default_str();
  cmd->add_option("--queue-in-flight", args->queue_in_flight, "With --queue: evaluations on the queue at once")->capture_default_str();
  cmd->add_option("--queue-job-timeout", args->queue_job_timeout_s,
                  "With --queue: seconds without a verdict before a step fails (0: wait)")->capture_default_str();
  cmd->add_option("--store", args->store,
                  "SQLite file where episodes and verdicts are written as they happen; a restart with it resumes the open episodes");
  cmd->add_option("--episode-idle-timeout", args->idle_timeout_s,
                  "Close an episode after this many seconds without an action (0: never)")->capture_default_str();
  cmd->callback([args, &exit_code] {
    run_serve(*args);
    exit_code = kExitOk;
  });
}

}  // namespace kgym::cli
