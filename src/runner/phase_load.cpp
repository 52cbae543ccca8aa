// The load phase (evaluation.hpp): the candidate's worker started in its folders, the candidate
// loaded (and built) in it.
#include <signal.h>

#include "evaluation.hpp"
#include "kgym/error.hpp"
#include "kgym/hash.hpp"

namespace kgym::runner {
namespace fs = std::filesystem;

Evaluation::Evaluation(EngineState& e, const Task& t, const Candidate& c, const EvalOptions& options)
    : engine(e), task(t), cand(c), eo(options) {
  m.init_seed = random_seed();
  n = ++engine.counter;
  const std::string cand_hash = sha256_hex(cand.code);
  spec = SpawnSpec{"candidate", engine.worker_device, engine.work_dir / ("candidate-" + std::to_string(n)), {}, 0};
  spec.env = engine.base_env(spec.workdir);
  // Content-addressed build cache: the same candidate source reuses its load_inline/Triton build.
  build_dir = engine.cache_dir / "build" / cand_hash.substr(0, 24);
  spec.env["TORCH_EXTENSIONS_DIR"] = (build_dir / "torch_extensions").string();
  spec.env["TRITON_CACHE_DIR"] = (build_dir / "triton").string();
  spec.env["MAX_JOBS"] = "4";
  if (engine.worker_device == "cpu") spec.address_space_bytes = 16LL << 30;
  disk_folders = {spec.workdir, build_dir};
  for (const char* dt : {"float32", "float16", "bfloat16", "float64"}) {
    Tolerance tol = default_tolerance(dt);
    if (eo.tolerance && std::string(dt) == "float32") tol = *eo.tolerance;
    tolerances[dt] = {tol.atol, tol.rtol};
  }
  jo = eo.judge;
  jo.policy_profile = eo.policy_profile;
}

void Evaluation::died(Worker& w, const std::string& what) {
  const auto st = w.kill();
  m.crash = process_failure(st, what);
}

bool start_candidate(Evaluation& ev) {
  EngineState& engine = ev.engine;
  Measurements& m = ev.m;
  // Disk: a candidate starts only with the reserve free where its folders lie, and is stopped
  // when it writes more than its quota there (runner::DiskGuard).
  if (auto low = check_reserve(ev.disk_folders, engine.disk_limits)) {
    m.task_failure = low->message;
    return false;
  }
  try {
    std::shared_lock no_timing_stopped(engine.quiet_mutex);
    ev.cw = std::make_unique<Worker>(*engine.zygote, ev.spec);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::worker) throw;
    // No worker for this candidate (the zygote could not fork: no process or memory left, which
    // another candidate may have caused; red team rt7): it is not judged, and the run goes on.
    m.task_failure = std::string("kgym could not start a worker for this candidate: ") + e.what() +
                     "; the candidate was not judged: judge it again";
    return false;
  }
  Worker& c = *ev.cw;
  if (engine.worker_device == "cpu") ev.cpu_group.emplace(c.pid());
  ev.disk_guard.emplace(
      ev.disk_folders,
      [&engine, root = c.pid(), &cpu_group = ev.cpu_group] {
        const pid_t ref = engine.reference_pid.load();
        return Holders{own_processes(root, engine.zygote->workers(), ref,
                                     cpu_group ? cpu_group->procs() : std::vector<pid_t>{}),
                       {engine.zygote->pid(), ref}};
      },
      engine.disk_limits, [pgid = c.pid()] { ::kill(-pgid, SIGKILL); });
  // The zygote dying during the verdict (killed from outside) takes every worker with it: the
  // candidate is then not at fault, and its verdict says so (task_error) instead of blaming it.
  ev.zygote_deaths = engine.zygote->deaths();
  return true;
}

namespace {

// A task failure that the candidate's process reports is believed only when the reference
// worker cannot load the task either (red team rt15: a forged load reply made the verdict
// task_error, which blames nobody and is left out of a model's statistics).
void check_task_failure_claim(Evaluation& ev) {
  EngineState& engine = ev.engine;
  Measurements& m = ev.m;
  const EvalOptions& eo = ev.eo;
  if (m.task_failure && !m.crash && !m.timed_out_stage) {
    const std::string claimed = m.task_failure->substr(0, 300);
    m.task_failure.reset();
    std::unique_lock device(engine.device_mutex);
    const std::string probe_key = "load-probe-" + std::to_string(ev.n);
    if (engine.ask_reference(protocol::LoadTaskRequest{.key = probe_key,
                                                       .source = ev.task.source,
                                                       .task_id = ev.task.id,
                                                       .scale = eo.scale,
                                                       .init_seed = m.init_seed},
                             {}, eo.timeouts.reference_s, m)) {
      try {
        engine.reference->request(protocol::DropTaskRequest{.key = probe_key}, {}, 60);
      } catch (const std::exception&) {
        engine.reference.reset();
      }
      ev.died(*ev.cw, "reported that the task failed in its process (" + claimed +
                          "), but the reference worker loads the task; a task that fails only beside the candidate's code "
                          "is the candidate's failure");
    }  // else the reference failed too: ask_reference recorded the task failure
  }
}

}  // namespace

void load_candidate(Evaluation& ev) {
  EngineState& engine = ev.engine;
  Measurements& m = ev.m;
  const EvalOptions& eo = ev.eo;
  Worker& c = *ev.cw;
  {
    engine.build_slots.acquire();
    try {
      const Message r = c.request(protocol::LoadRequest{.format = ev.cand.format,
                                                        .candidate_source = ev.cand.code,
                                                        .task_source = ev.task.source,
                                                        .scale = eo.scale,
                                                        .init_seed = m.init_seed},
                                  {}, eo.timeouts.load_s);
      const auto reply = protocol::read<protocol::LoadReply>(r.header);
      reply.record.get_to(m.load);
      ev.candidate_parameters = reply.parameters;
      if (const auto failed = reply.task_failure())
        m.task_failure = "the task failed inside the candidate process: " + *failed;
    } catch (const nlohmann::json::exception& e) {  // a forged load reply (red team rt14)
      m.load = {};
      m.task_failure.reset();
      ev.died(c, std::string("sent a malformed load reply: ") + e.what());
    } catch (const ChannelClosed&) {
      m.crash = process_failure(c.kill(), "while loading");
    } catch (const ChannelTimeout&) {
      m.timed_out_stage = "load";
    } catch (const Error& e) {  // malformed frame from the candidate
      ev.died(c, std::string("broke the protocol: ") + e.what());
    }
    engine.build_slots.release();
  }
  check_task_failure_claim(ev);
}

}  // namespace kgym::runner
