// `kgym worker`: judges jobs from the Redis Streams queue on this host's devices (docs/deploy.md).
#include <csignal>
#include <cstdio>
#include <thread>

#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "kgym/error.hpp"
#include "kgym/queue.hpp"

namespace kgym::cli {
namespace {

struct WorkerArgs {
  std::string queue;
  std::string prefix = "kgym";
  std::string devices = "cpu";
  int workers_per_device = 1;
  std::string name;
  std::string evaluator = "engine";
  double stand_in_ms = 10;
  std::string python = "python3";
  double visibility_timeout_s = 60;
  double heartbeat_s = 1;
  bool verbose = false;
};

void run_worker(const WorkerArgs& a) {
  WorkerOptions o;
  o.queue.url = parse_queue_url(a.queue);
  o.queue.prefix = a.prefix;
  o.queue.visibility_timeout_s = a.visibility_timeout_s;
  o.devices.clear();
  for (const Device& d : parse_devices(a.devices)) o.devices.push_back(d.name());
  o.workers_per_device = a.workers_per_device;
  o.name = a.name;
  if (a.evaluator != "stand-in") {
    const EvaluatorFactory* make = find_evaluator(a.evaluator);
    if (!make) {
      throw Error(ErrorKind::usage, "unknown --evaluator '" + a.evaluator +
                                        "': use engine or stand-in (bench/queue only); the scripted test double is in "
                                        "the tests' build/kgym-test");
    }
    o.make_evaluator = [make](const EngineOptions& eo) { return std::shared_ptr<Evaluator>((*make)(eo)); };
  }
  if (a.stand_in_ms <= 0) throw Error(ErrorKind::usage, "--stand-in-ms must be > 0");
  if (a.heartbeat_s <= 0) throw Error(ErrorKind::usage, "--heartbeat must be > 0 seconds");
  o.evaluator = a.evaluator;
  o.stand_in_ms = a.stand_in_ms;
  o.heartbeat_s = a.heartbeat_s;
  o.engine.python = a.python;
  o.engine.verbose = a.verbose;

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::atomic<bool> stop{false};
  std::exception_ptr failure;
  std::thread workers([&] {
    try {
      run_workers(o, stop);
    } catch (...) {
      failure = std::current_exception();
    }
    kill(getpid(), SIGTERM);  // wakes sigwait when the workers end on their own (start-up error)
  });
  int sig = 0;
  sigwait(&signals, &sig);
  if (!failure) spdlog::info("kgym worker: signal {}, finishing the jobs in hand", sig);
  stop = true;
  workers.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

void add_worker_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<WorkerArgs>();
  auto* cmd = app.add_subcommand("worker", "Judge jobs from a Redis Streams queue filled by `kgym serve --queue` (docs/deploy.md)");
  cmd->add_option("--queue", args->queue, "Redis address, redis://HOST:PORT[/DB]")->required();
  cmd->add_option("--queue-prefix", args->prefix, "Prefix of the queue's Redis keys (the server's --queue-prefix)")->capture_default_str();
  cmd->add_option("--devices", args->devices, "cpu, cuda, or cuda:0,cuda:1,... (one engine per device)")->capture_default_str();
  cmd->add_option("--workers-per-device", args->workers_per_device, "Jobs judged at once per device")->capture_default_str();
  cmd->add_option("--name", args->name, "Worker name in /health and the logs (default: HOSTNAME-PID)");
  cmd->add_option("--evaluator", args->evaluator,
                  "engine (real judging), scripted (deterministic test double) or stand-in (bench/queue: fixed CPU work)")
      ->capture_default_str();
  cmd->add_option("--stand-in-ms", args->stand_in_ms, "CPU milliseconds per job of the stand-in evaluator")->capture_default_str();
  cmd->add_option("--python", args->python, "Python interpreter with torch for the engine")->capture_default_str();
  cmd->add_option("--visibility-timeout", args->visibility_timeout_s,
                  "Seconds a job of a silent worker stays pending before another worker claims it")->capture_default_str();
  cmd->add_option("--heartbeat", args->heartbeat_s, "Seconds between heartbeats")->capture_default_str();
  cmd->add_flag("--verbose", args->verbose, "Log the engine's worker activity");
  cmd->callback([args, &exit_code] {
    run_worker(*args);
    exit_code = kExitOk;
  });
}

}  // namespace kgym::cli
