#include "kgym/engine.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <map>
#include <semaphore>
#include <set>
#include <shared_mutex>

#include <spdlog/spdlog.h>

#include "kgym/error.hpp"
#include "kgym/hash.hpp"
#include "kgym/paths.hpp"
#include "kgym/policy.hpp"
#include "kgym/format.hpp"
#include "kgym/reward.hpp"
#include "kgym/subprocess.hpp"
#include "cpu_group.hpp"
#include "disk_guard.hpp"
#include "evaluation.hpp"
#include "proctree.hpp"
#include "timing_cpu.hpp"
#include "workers.hpp"

namespace kgym {
namespace fs = std::filesystem;
using runner::Blob;
using runner::ChannelClosed;
using runner::ChannelTimeout;
using runner::Message;
using runner::keep_work;

using runner::SpawnSpec;
using runner::Worker;

namespace {

fs::path default_cache_dir() {
  if (const char* x = std::getenv("KGYM_CACHE_DIR")) return x;
  if (const char* x = std::getenv("XDG_CACHE_HOME")) return fs::path(x) / "kgym";
  if (const char* h = std::getenv("HOME")) return fs::path(h) / ".cache" / "kgym";
  return fs::temp_directory_path() / "kgym-cache";
}

}  // namespace

// (engine.hpp)
std::optional<std::string> python_syntax_error(const std::string& python, const std::string& code) {
  std::string tmpl = (fs::temp_directory_path() / "kgym-syntax-XXXXXX").string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) return std::nullopt;
  for (std::size_t off = 0; off < code.size();) {
    const ssize_t w = ::write(fd, code.data() + off, code.size() - off);
    if (w <= 0) break;
    off += static_cast<std::size_t>(w);
  }
  ::close(fd);
  static const char* kScript =
      "import sys\n"
      "src = open(sys.argv[1], 'rb').read()\n"
      "try:\n"
      "    compile(src, 'candidate.py', 'exec', dont_inherit=True)\n"
      "except SyntaxError as e:\n"
      "    text = (e.text or '').strip()\n"
      "    print(f'line {e.lineno}, column {e.offset}: {e.msg}' + (f': {text[:120]}' if text else ''))\n"
      "except (ValueError, MemoryError, RecursionError) as e:\n"
      "    print(f'{type(e).__name__}: {e}'[:300])\n";
  const ProcessResult r = run_process({python, "-I", "-S", "-c", kScript, tmpl}, 10000, 1 << 16);
  ::unlink(tmpl.c_str());
  std::string out = r.out;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  if (!r.ok() || out.empty()) return std::nullopt;
  return out;
}


namespace runner {

/// The workers stop first; then the temporary work folder goes (worker logs, the CPU wall
/// check's input files: 26 MB for a four-candidate ReLU run, and every run used to leave its
/// folder in /tmp). KGYM_KEEP_WORK=1 keeps it, for the logs a message names.
EngineState::~EngineState() {
  reference.reset();
  zygote.reset();
  if (own_work_dir && !keep_work()) runner::remove_tree(work_dir);  // also what nests below PATH_MAX
  else if (own_work_dir) spdlog::warn("kgym kept its work folder {} (KGYM_KEEP_WORK): worker logs, inputs", work_dir.string());
}

EngineState::EngineState(EngineOptions o) : options(std::move(o)), build_slots(std::max(1, std::min(64, options.build_jobs))) {
  check_worker_environment();
  const Device& device = options.device;
  if (device.is_cpu()) {
    worker_device = "cpu";
  } else {
    worker_device = "cuda:0";
    visible_gpu = device.index ? std::to_string(*device.index) : "0";
  }
  const char* pin = std::getenv("KGYM_TIMING_CPU");
  timing_cpu = runner::choose_timing_cpu(pin ? pin : "", runner::allowed_cpus(),
                                         device.is_cpu() ? -1 : device.index.value_or(0));
  // The timing CPU is the timed pair's alone among kgym's processes: the supervisor's threads
  // (the disk guard's walks, link checks) and the zygote with every worker it forks run elsewhere.
  if (timing_cpu) runner::keep_off_cpu(*timing_cpu);
  if (options.python_dir.empty()) options.python_dir = install_root() / "python";
  if (!fs::exists(options.python_dir / "kgym_worker" / "zygote.py"))
    throw Error(ErrorKind::worker, "kgym_worker package not found under " + options.python_dir.string());
  cache_dir = default_cache_dir();
  if (options.work_dir.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "kgym-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw Error(ErrorKind::worker, "cannot create a temporary work directory");
    work_dir = tmpl;
    own_work_dir = true;
  } else {
    work_dir = options.work_dir;
  }
  std::error_code ec;
  fs::create_directories(work_dir, ec);
  fs::create_directories(cache_dir / "build", ec);
  if (ec) throw Error(ErrorKind::input, "cannot create " + cache_dir.string() + ": " + ec.message());
  zygote = std::make_unique<runner::Zygote>(options.python, options.python_dir, work_dir / "zygote.log");
}

std::map<std::string, std::string> EngineState::base_env(const fs::path& dir) const {
  std::map<std::string, std::string> env = {{"TMPDIR", dir.string()}, {"HOME", dir.string()},
                                            {"OMP_NUM_THREADS", std::getenv("OMP_NUM_THREADS") ? std::getenv("OMP_NUM_THREADS") : "1"}};
  if (!visible_gpu.empty()) env["CUDA_VISIBLE_DEVICES"] = visible_gpu;
  else env["CUDA_VISIBLE_DEVICES"] = "";
  return env;
}

Worker& EngineState::reference_worker() {
  if (reference && zygote->deaths() != reference_zygote_deaths) reference.reset();  // died with its zygote
  if (!reference || !reference->alive()) {
    SpawnSpec spec{"reference", worker_device, work_dir / "reference", {}, 0};
    spec.env = base_env(spec.workdir);
    spec.env["TORCHINDUCTOR_CACHE_DIR"] = (cache_dir / "inductor").string();
    reference = std::make_unique<Worker>(*zygote, spec);
    reference_pid = reference->pid();
    reference_zygote_deaths = zygote->deaths();
    Message info = reference->request(protocol::InfoRequest{}, {}, 120);
    environment = info.header;
    environment.erase("ok");
  }
  return *reference;
}

std::optional<Message> EngineState::ask_reference(const nlohmann::json& header, const std::string& op,
                                                  const std::vector<Blob>& blobs, double timeout_s, Measurements& m) {
  try {
    Message reply = reference_worker().request(header, blobs, timeout_s);
    if (const auto status = protocol::read<protocol::ReferenceStatus>(reply.header); !status.ok) {
      m.task_failure = "the reference failed: " + status.error + "\n" + status.traceback;
      return std::nullopt;
    }
    return reply;
  } catch (const ChannelClosed&) {
    m.task_failure = "the reference worker died during '" + op + "'";
  } catch (const ChannelTimeout&) {
    m.task_failure = "the reference worker exceeded its time limit during '" + op + "'";
  }
  reference.reset();
  return std::nullopt;
}

void EngineState::drop_reference_task(const std::string& key) {
  if (reference && reference->alive()) {
    try {
      reference->request(protocol::DropTaskRequest{.key = key}, {}, 60);
    } catch (const std::exception&) {
      reference.reset();
    }
  }
}

}  // namespace runner

struct Engine::Impl : runner::EngineState {
  using EngineState::EngineState;

  Verdict run(const Task& task, const Candidate& cand, const EvalOptions& eo);
};

// One evaluation as the list of its phases (evaluation.hpp; each in its phase_*.cpp).
Verdict Engine::Impl::run(const Task& task, const Candidate& cand, const EvalOptions& eo) {
  runner::Evaluation ev(*this, task, cand, eo);
  std::future<runner::TwinStart> twin_start;  // (declared after ev: joined before ev goes)
  if (!runner::start_candidate(ev)) return judge(ev.m, eo.judge);
  runner::load_candidate(ev);
  if (ev.loaded_cleanly()) runner::link_check(ev);
  // A reply of the wrong shape from the candidate's process anywhere in the evaluation (it can
  // write its own replies; its lenient fields, protocol.hpp, are safe already) is its breach of
  // the protocol: the json exception a strict field throws ends the candidate, not the run (red
  // team rt14, exit 3).
  try {
    if (ev.loaded_cleanly() && !runner::link_rejected(ev)) {
      // CPU: eager's timing in a twin on the candidate's path (runner::start_baseline_twin),
      // started now so that its start and load overlap the reference's load and the cases.
      if (runner::baseline_twin_enabled(*this))
        twin_start = std::async(std::launch::async, [this, &task, &eo, seed = ev.m.init_seed, n = ev.n,
                                                     limit = ev.spec.address_space_bytes] {
          return runner::start_baseline_twin(*this, task, eo, seed, n, limit);
        });
      std::unique_lock device(device_mutex);
      const std::string key = sha256_hex(task.source).substr(0, 16) + "-" + std::to_string(ev.n);
      ev.held_key = key;
      runner::PhaseClock phase(ev.m);
      if (runner::load_reference_task(ev, key, phase)) {
        const bool going = runner::run_cases(ev, key, phase);
        const Measurements& m = ev.m;
        const bool time_it = going && eo.time_candidate && !m.task_failure && !m.crash && !m.timed_out_stage &&
                             ready_to_time(m, ev.jo);
        if (time_it) {
          runner::TimingRun timing{*this, *ev.cw, key, eo, ev.m, ev.tolerances, device,
                                   ev.cpu_group ? &*ev.cpu_group : nullptr};
          std::unique_ptr<runner::Worker> twin;
          if (twin_start.valid()) {
            runner::TwinStart ts = twin_start.get();
            ev.m.phase_ms["twin_start"] += ts.ms;
            if (!ts.why.empty()) spdlog::warn("{}: eager is timed in the reference worker", ts.why);
            twin = std::move(ts.worker);
          }
          timing.twin = twin.get();
          // GPU: both workers on one CPU while it times (runner::PinnedToCpu says why).
          // The record names the CPU only where both stayed on it (a reference restarted meanwhile
          // is a new process, not pinned).
          const pid_t reference_pid = reference ? reference->pid() : -1;
          std::optional<runner::PinnedToCpu> pinned;
          if (timing_cpu) pinned.emplace(std::vector<pid_t>{ev.cw->pid(), reference_pid}, *timing_cpu);
          runner::time_phase(timing);
          runner::finish_baseline_twin(*this, std::move(twin), ev.n);
          if (pinned && pinned->processes() == 2 && reference && reference->pid() == reference_pid)
            for (auto* r : {&ev.m.candidate_timing, &ev.m.eager_timing, &ev.m.compile_timing})
              if (*r) (*r)->timing_cpu = *timing_cpu;
        }
        drop_reference_task(key);
      }
    }
  } catch (const nlohmann::json::exception& e) {
    ev.died(*ev.cw, std::string("sent a reply kgym could not read (a field of the wrong type): ") + e.what());
    // The device lock was released as the exception left its scope, and another evaluation may
    // hold it now, using the reference worker (guarded by device_mutex): the drop takes it again.
    // Without it, both threads sent and read on the reference's channel at once (and a failed
    // drop reset the Worker the other thread was using).
    if (!ev.held_key.empty()) {
      std::lock_guard device(device_mutex);
      drop_reference_task(ev.held_key);
    }
  }
  if (twin_start.valid()) runner::finish_baseline_twin(*this, twin_start.get().worker, ev.n);  // (not timed)
  if (!runner::link_rejected(ev)) runner::link_check(ev);
  runner::clean_up(ev);
  return runner::verdict_of(ev);
}

Engine::Engine(EngineOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  // Fail fast on an unusable device (e.g. --device cuda without a GPU) instead of blaming every
  // candidate for it: the reference worker must start and describe the device first.
  try {
    environment();
  } catch (const std::exception& e) {
    std::string log;
    try {
      log = read_file(impl_->work_dir / "reference" / "worker.log");
      if (log.size() > 1500) log = log.substr(log.size() - 1500);
    } catch (const Error&) {
    }
    throw Error(ErrorKind::usage, "device '" + impl_->options.device.name() + "' is not usable: the reference worker "
                                  "could not start on it (" + e.what() + "). " +
                                  (!impl_->options.device.is_cpu()
                                       ? "Is there an NVIDIA GPU and driver here (nvidia-smi)? Use --device cpu "
                                         "otherwise. "
                                       : "") +
                                  "Worker log:\n" + log);
  }
}
Engine::~Engine() = default;

std::string Engine::describe() const { return "engine " + impl_->options.device.name(); }

TaskProbe Engine::probe_task(const Task& task, double scale) {
  std::lock_guard device(impl_->device_mutex);
  Measurements m;
  auto r = impl_->ask_reference(runner::protocol::ProbeTaskRequest{.source = task.source, .task_id = task.id, .scale = scale},
                                {}, Timeouts{}.reference_s, m);
  return read_task_probe(task.id, scale, r ? &r->header : nullptr, m.task_failure.value_or("no reply"));
}

nlohmann::json Engine::environment() {
  std::lock_guard device(impl_->device_mutex);
  impl_->reference_worker();
  return impl_->environment;
}

Verdict Engine::evaluate(const Task& task, const Candidate& cand, const EvalOptions& eo) {
  if (eo.n_cases < 1) throw Error(ErrorKind::usage, "--cases must be at least 1");
  if (!(eo.scale > 0)) throw Error(ErrorKind::usage, "--scale must be positive");
  const std::string profile_name(policy::to_string(eo.policy_profile));
  Verdict v;
  if (cand.empty()) {
    v = verdict_without_run(Outcome::no_candidate, Gate::none,
                            "no candidate code (empty or \"None\"): nothing to judge");
  } else {
    // Gate 1: policy, from the source alone, before anything of the candidate runs.
    const CandidateFormat& cand_format = find_format(cand.format);  // Error(usage) for an unknown one
    policy::PolicyContext ctx{eo.policy_profile, policy::infer_task_dtype(task.source), task.source};
    const policy::PolicyReport report = cand_format.policy_check(cand.code, ctx);
    const policy::Finding* first_reject = nullptr;
    for (const auto& f : report.findings)
      if (f.severity == policy::Severity::reject && !first_reject) first_reject = &f;
    if (!report.parsed) {
      // Where it fails to parse, under every profile (the strict check's syntax finding: the
      // `off` profile records no findings of its own).
      policy::PolicyContext located = ctx;
      located.profile = policy::Profile::strict;
      const policy::PolicyReport syntax = cand_format.policy_check(cand.code, located);
      const policy::Finding* at = nullptr;
      for (const auto& f : syntax.findings)
        if (f.rule_id == "syntax_error" && !at) at = &f;
      const std::string where =
          at ? fmt::format("line {}, column {}: {}", at->line, at->column, at->snippet) : std::string("(no location)");
      const std::optional<std::string> python_says = python_syntax_error(impl_->options.python, cand.code);
      v = verdict_without_run(Outcome::build_failed, Gate::build,
                              "candidate does not parse: " +
                                  (python_says ? *python_says
                                               : where + " (Python itself compiles it; kgym's parser, tree-sitter-python, "
                                                         "does not: write the construct there another way)"));
      Failure f;
      f.stage = "parse";
      f.type = "SyntaxError";
      f.message = python_says ? *python_says : where;
      v.measurements.load.failure = f;
    } else if (first_reject) {
      v = verdict_without_run(Outcome::policy_rejected, Gate::policy,
                              "[" + first_reject->rule_id + "] " +
                                  (first_reject->line > 0 ? "line " + std::to_string(first_reject->line) + ": " : "") +
                                  first_reject->message + " (policy profile " + profile_name +
                                  (eo.policy_profile != policy::Profile::off ? "; a plain-PyTorch candidate is judged only under --profile off)"
                                                              : ")"));
    } else {
      v = impl_->run(task, cand, eo);
    }
    for (const auto& f : report.findings) v.policy_findings.push_back(f);
    if (v.measurements.link)  // the link check's findings, listed with the source scan's (line 0: the built file)
      for (const LinkFinding& f : v.measurements.link->findings)
        v.policy_findings.push_back({{"rule_id", f.rule_id}, {"severity", f.severity}, {"message", f.message},
                                     {"line", 0}, {"column", 0}, {"snippet", ""}, {"gate", "link"}});
    v.provenance["policy_profile"] = profile_name;
  }
  v.task_id = task.id;
  v.candidate_id = cand.id;
  v.reward_name = eo.reward.name();
  v.reward = eo.reward(v, eo.reward_context);
  v.provenance["kgym"] = KGYM_VERSION;
  v.provenance["device"] = impl_->options.device.name();
  v.provenance["scale"] = eo.scale;
  v.provenance["task_sha256"] = sha256_hex(task.source);
  v.provenance["candidate_sha256"] = sha256_hex(cand.code);
  v.provenance["init_seed"] = v.measurements.init_seed;
  std::vector<std::uint64_t> seeds;
  for (const auto& c : v.measurements.cases) seeds.push_back(c.seed);
  v.provenance["case_seeds"] = seeds;
  {
    std::lock_guard device(impl_->device_mutex);
    v.provenance["environment"] = impl_->environment;
  }
  return v;
}

}  // namespace kgym
