#include "kgym/engine.hpp"
#include "kgym/parameter_check.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <limits>
#include <random>
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
#include "proctree.hpp"
#include "wall_check.hpp"
#include "workers.hpp"

namespace kgym {
namespace fs = std::filesystem;
using runner::Blob;
using runner::ChannelClosed;
using runner::ChannelTimeout;
using runner::Message;
using runner::PausedTree;

namespace {
/// What one evaluation times, undisturbed by the others (H200, 2026-12-01: the eager baseline of
/// a 256x256 matmul read 0.158 ms instead of 0.03 while other candidates of a --jobs run loaded,
/// and a candidate that precomputed its timed outputs passed 2.41x on it): the processes `scan`
/// names are stopped (runner::PausedTree), and `quiet` is held exclusively so that no candidate
/// worker is spawned meanwhile (a spawn holds it shared; a worker started after the scan would
/// run beside the timing). Other evaluations' loads and builds only wait.
class QuietDevice {
 public:
  QuietDevice(std::shared_mutex& quiet, const std::function<std::vector<pid_t>()>& scan) : lock_(quiet), paused_(scan) {
    for (const auto& k : paused_.killed())
      spdlog::warn("kgym: process {} did not stop within {} ms of SIGSTOP before a timing and was killed", k,
                   PausedTree::kStopLimitMs);
  }

 private:
  std::unique_lock<std::shared_mutex> lock_;
  PausedTree paused_;  // (declared after the lock: continued before the lock is released)
};

/// A field of a reply from the candidate's process, which can write its own replies (red team
/// rt14: a "harness_error" of 5 or a kept output's "index" of "x" threw out of the engine and
/// ended the whole run): `fallback` when the reply is no object, or the field is missing or of
/// another type.
template <class T>
T reply_field(const nlohmann::json& reply, const char* key, T fallback) {
  if (!reply.is_object()) return fallback;
  const auto it = reply.find(key);
  if (it == reply.end()) return fallback;
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    return fallback;
  }
}
}  // namespace
using runner::SpawnSpec;
using runner::Worker;

namespace {

fs::path default_cache_dir() {
  if (const char* x = std::getenv("KGYM_CACHE_DIR")) return x;
  if (const char* x = std::getenv("XDG_CACHE_HOME")) return fs::path(x) / "kgym";
  if (const char* h = std::getenv("HOME")) return fs::path(h) / ".cache" / "kgym";
  return fs::temp_directory_path() / "kgym-cache";
}

std::uint64_t random_seed() {
  std::random_device rd;  // OS entropy
  return ((static_cast<std::uint64_t>(rd()) << 32) ^ rd()) & ((1ULL << 63) - 1);
}

nlohmann::json timing_json(const TimingOptions& t) {
  return {{"warmup", t.warmup},          {"min_calls", t.min_calls},
          {"max_calls", t.max_calls},    {"budget_ms", t.budget_ms},
          {"target_spread", t.target_spread}, {"l2_flush", t.l2_flush}};
}

/// Copies the reference side's comparison statistics into a case record (never the candidate's).
void apply_comparison(const nlohmann::json& h, CaseRecord& cr) {
  cr.compared = true;
  cr.output_plain_tensor = h.value("output_plain_tensor", cr.output_plain_tensor);
  if (h.contains("output_type")) cr.output_type = h.value("output_type", std::string());
  cr.structure_matches = h.value("structure_matches", true);
  cr.dtype_matches = h.value("dtype_matches", true);
  cr.shape_matches = h.value("shape_matches", true);
  cr.device_matches = h.value("device_matches", true);
  cr.detail = h.value("detail", std::string());
  cr.numel = h.value("numel", std::int64_t{0});
  cr.max_abs_error = h.value("max_abs_error", 0.0);
  cr.mean_abs_error = h.value("mean_abs_error", 0.0);
  cr.max_rel_error = h.value("max_rel_error", 0.0);
  cr.tolerance_ratio = h.value("tolerance_ratio", 0.0);
  cr.atol = h.value("atol", 0.0);
  cr.rtol = h.value("rtol", 0.0);
  cr.nonfinite_mismatches = h.value("nonfinite_mismatches", std::int64_t{0});
  cr.mismatches = h.value("mismatches", std::int64_t{0});
  cr.mismatches_outside_fp64 = h.value("mismatches_outside_fp64", std::int64_t{-1});
  cr.fp64_atol_ratio = h.value("fp64_atol_ratio", -1.0);
  cr.first_mismatch_index = h.value("first_mismatch_index", std::vector<std::int64_t>{});
  cr.reference_finite = h.value("reference_finite", true);
  cr.fp64_checked = h.value("fp64_checked", false);
  cr.fp64_error = h.value("fp64_error", 0.0);
  cr.fp64_reference_error = h.value("fp64_reference_error", 0.0);
  cr.fp64_scale = h.value("fp64_scale", 0.0);
  cr.dtype_eps = h.value("dtype_eps", 0.0);
  cr.trivial_passing = h.value("trivial_passing", std::vector<std::string>{});
}

/// Appends one round's timing to the merged record of its kind.
/// The rounds' call counts and the wall check's pairs are the supervisor's (a reply's own are
/// dropped): the round counts are the clusters of the speedup's interval.
void merge_round(std::optional<TimingRecord>& into, TimingRecord r) {
  r.wall_check_paired_ms.clear();
  r.wall_check_harness_ms.clear();
  r.round_calls = {static_cast<int>(r.times_ms.size())};
  if (!into) {
    into = std::move(r);
    return;
  }
  TimingRecord& t = *into;
  t.round_calls.push_back(static_cast<int>(r.times_ms.size()));
  t.times_ms.insert(t.times_ms.end(), r.times_ms.begin(), r.times_ms.end());
  t.wall_ms += r.wall_ms;
  t.l2_flushed = t.l2_flushed && r.l2_flushed;
  t.fresh_inputs = t.fresh_inputs && r.fresh_inputs;
  t.l2_persist_reset = t.l2_persist_reset && r.l2_persist_reset;
  t.l2_persist_violations += r.l2_persist_violations;
  t.threads_leaked += r.threads_leaked;
  if (t.thread_detail.empty()) t.thread_detail = r.thread_detail;
  for (auto& x : r.tampered)
    if (std::find(t.tampered.begin(), t.tampered.end(), x) == t.tampered.end()) t.tampered.push_back(x);
  if (!t.failure && r.failure) t.failure = r.failure;
  // A baseline's wall-clock floor (measured by the reference worker per round): the least
  // per-call value of the rounds (a floor must not be raised by one noisy round).
  if (r.wall_check_calls > 0 && r.wall_check_ms > 0 &&
      (t.wall_check_calls <= 0 || r.wall_check_ms / r.wall_check_calls < t.wall_check_ms / t.wall_check_calls)) {
    t.wall_check_calls = r.wall_check_calls;
    t.wall_check_ms = r.wall_check_ms;
    t.wall_check_host_ms = r.wall_check_host_ms;
  }
}

/// Wall clock of consecutive phases of one evaluation, recorded into Measurements::phase_ms (ms;
/// a repeated name accumulates).
class PhaseClock {
 public:
  /// `prefix` goes before every name (e.g. "cases/" for the parts of the cases phase).
  explicit PhaseClock(Measurements& m, std::string prefix = "")
      : m_(m), prefix_(std::move(prefix)), t_(std::chrono::steady_clock::now()) {}
  /// Ends the current phase under `name` and starts the next one.
  void lap(const std::string& name) {
    const auto now = std::chrono::steady_clock::now();
    m_.phase_ms[prefix_ + name] += std::chrono::duration<double, std::milli>(now - t_).count();
    t_ = now;
  }
  /// Starts the next phase now without recording the time since the last lap.
  void restart() { t_ = std::chrono::steady_clock::now(); }

 private:
  Measurements& m_;
  std::string prefix_;
  std::chrono::steady_clock::time_point t_;
};

/// Appends each of `lines` to `into` unless it is there already (findings collected over several
/// looks at the candidate's processes).
void add_unique(std::vector<std::string>& into, const std::vector<std::string>& lines) {
  for (const auto& line : lines)
    if (std::find(into.begin(), into.end(), line) == into.end()) into.push_back(line);
}

/// The value of environment variable `name` when it is one of `allowed` ("" when unset); else
/// Error(usage) naming the variable and the values it takes (a fresh user's KGYM_SANDBOX=maybe
/// ran silently with the default).
std::string env_choice(const char* name, std::initializer_list<std::string_view> allowed) {
  const char* v = std::getenv(name);
  if (!v || !*v) return "";
  std::string list;
  for (auto a : allowed) {
    if (a == v) return v;
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  throw Error(ErrorKind::usage, std::string(name) + "='" + v + "' is not one of " + list + "; unset it or give one of those");
}

/// KGYM_KEEP_WORK: keep the work folder's files (1, true, yes) or not (unset, 0, false, no).
bool keep_work() {
  const std::string v = env_choice("KGYM_KEEP_WORK", {"0", "1", "true", "false", "yes", "no"});
  return v == "1" || v == "true" || v == "yes";
}

/// KGYM_CPU_THREADS: torch's thread count in CPU workers, a whole number from 1 to 1024 (default 1).
int cpu_threads() {
  const char* v = std::getenv("KGYM_CPU_THREADS");
  if (!v || !*v) return 1;
  int n = 0;
  const std::string s(v);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size() || n < 1 || n > 1024)
    throw Error(ErrorKind::usage, "KGYM_CPU_THREADS='" + s + "' is not a whole number from 1 to 1024; unset it (1 thread) or give one");
  return n;
}

/// Checks every KGYM_* setting the workers read, before any starts: a bad value is a usage
/// error naming it, not a worker's traceback (KGYM_CPU_THREADS=abc) or a silent default.
void check_worker_environment() {
  (void)keep_work();
  (void)cpu_threads();
  (void)env_choice("KGYM_SANDBOX", {"landlock", "off"});
  (void)env_choice("KGYM_DEVICE_TRANSFER", {"ipc", "host"});
  (void)env_choice("KGYM_CPU_CGROUP", {"0", "1"});
}

Failure process_failure(const runner::ExitStatus& st, std::string message) {
  Failure f;
  f.stage = "process";
  f.type = st.signal ? "signal" : "exit";
  f.signal = st.signal;
  f.exit_code = st.exit_code;
  f.message = std::move(message);
  return f;
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


struct Engine::Impl {
  EngineOptions options;
  std::string worker_device;  ///< the device as a worker sees it ("cpu" / "cuda:0")
  std::string visible_gpu;    ///< CUDA_VISIBLE_DEVICES for workers, "" on cpu
  fs::path work_dir, cache_dir;
  bool own_work_dir = false;  // made here (mkdtemp): removed with the engine unless KGYM_KEEP_WORK=1
  std::unique_ptr<runner::Zygote> zygote;
  std::mutex device_mutex;              ///< held for the cases and timing of one evaluation
  std::unique_ptr<Worker> reference;    ///< guarded by device_mutex
  int reference_zygote_deaths = 0;      ///< zygote->deaths() when the reference was spawned
  std::atomic<pid_t> reference_pid{-1};  ///< the reference worker's pid, for other threads (disk guard)
  nlohmann::json environment;           ///< guarded by device_mutex
  std::counting_semaphore<64> build_slots{1};
  /// Exclusive while an evaluation times with the other workers stopped (QuietDevice); shared
  /// while a candidate worker is spawned.
  std::shared_mutex quiet_mutex;
  std::atomic<int> counter{0};
  runner::DiskLimits disk_limits = runner::DiskLimits::from_env();  ///< per candidate (KGYM_DISK_*)

  /// The workers stop first; then the temporary work folder goes (worker logs, the CPU wall
  /// check's input files: 26 MB for a four-candidate ReLU run, and every run used to leave its
  /// folder in /tmp). KGYM_KEEP_WORK=1 keeps it, for the logs a message names.
  ~Impl() {
    reference.reset();
    zygote.reset();
    if (own_work_dir && !keep_work()) runner::remove_tree(work_dir);  // also what nests below PATH_MAX
    else if (own_work_dir) spdlog::warn("kgym kept its work folder {} (KGYM_KEEP_WORK): worker logs, inputs", work_dir.string());
  }

  explicit Impl(EngineOptions o) : options(std::move(o)), build_slots(std::max(1, std::min(64, options.build_jobs))) {
    check_worker_environment();
    const Device& device = options.device;
    if (device.is_cpu()) {
      worker_device = "cpu";
    } else {
      worker_device = "cuda:0";
      visible_gpu = device.index ? std::to_string(*device.index) : "0";
    }
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

  std::map<std::string, std::string> base_env(const fs::path& dir) const {
    std::map<std::string, std::string> env = {{"TMPDIR", dir.string()}, {"HOME", dir.string()},
                                              {"OMP_NUM_THREADS", std::getenv("OMP_NUM_THREADS") ? std::getenv("OMP_NUM_THREADS") : "1"}};
    if (!visible_gpu.empty()) env["CUDA_VISIBLE_DEVICES"] = visible_gpu;
    else env["CUDA_VISIBLE_DEVICES"] = "";
    return env;
  }

  /// The reference worker, (re)started if needed. Caller holds device_mutex.
  Worker& reference_worker() {
    if (reference && zygote->deaths() != reference_zygote_deaths) reference.reset();  // died with its zygote
    if (!reference || !reference->alive()) {
      SpawnSpec spec{"reference", worker_device, work_dir / "reference", {}, 0};
      spec.env = base_env(spec.workdir);
      spec.env["TORCHINDUCTOR_CACHE_DIR"] = (cache_dir / "inductor").string();
      reference = std::make_unique<Worker>(*zygote, spec);
      reference_pid = reference->pid();
      reference_zygote_deaths = zygote->deaths();
      Message info = reference->request({{"op", "info"}}, {}, 120);
      environment = info.header;
      environment.erase("ok");
    }
    return *reference;
  }

  /// Sends a request to the reference worker; a failure of the trusted side is a task failure.
  std::optional<Message> ask_reference(const nlohmann::json& req, const std::vector<Blob>& blobs,
                                       double timeout_s, Measurements& m) {
    try {
      Message reply = reference_worker().request(req, blobs, timeout_s);
      if (!reply.header.value("ok", false)) {
        m.task_failure = "the reference failed: " + reply.header.value("error", std::string("reference worker error")) + "\n" +
                         reply.header.value("traceback", std::string());
        return std::nullopt;
      }
      return reply;
    } catch (const ChannelClosed&) {
      m.task_failure = "the reference worker died during '" + req.value("op", std::string()) + "'";
    } catch (const ChannelTimeout&) {
      m.task_failure = "the reference worker exceeded its time limit during '" + req.value("op", std::string()) + "'";
    }
    reference.reset();
    return std::nullopt;
  }

  Verdict run(const Task& task, const Candidate& cand, const EvalOptions& eo);
  void time_phase(Worker& c, const std::string& key, const EvalOptions& eo, Measurements& m,
                  const nlohmann::json& tolerances, std::unique_lock<std::mutex>& device_lock,
                  const runner::CpuGroup* cpu_group);
};

Verdict Engine::Impl::run(const Task& task, const Candidate& cand, const EvalOptions& eo) {
  Measurements m;
  m.init_seed = random_seed();
  const int n = ++counter;
  const std::string cand_hash = sha256_hex(cand.code);
  SpawnSpec spec{"candidate", worker_device, work_dir / ("candidate-" + std::to_string(n)), {}, 0};
  spec.env = base_env(spec.workdir);
  // Content-addressed build cache: the same candidate source reuses its load_inline/Triton build.
  const fs::path build_dir = cache_dir / "build" / cand_hash.substr(0, 24);
  spec.env["TORCH_EXTENSIONS_DIR"] = (build_dir / "torch_extensions").string();
  spec.env["TRITON_CACHE_DIR"] = (build_dir / "triton").string();
  spec.env["MAX_JOBS"] = "4";
  if (worker_device == "cpu") spec.address_space_bytes = 16LL << 30;

  auto died = [&](Worker& w, const std::string& what) {
    const auto st = w.kill();
    m.crash = process_failure(st, what);
  };

  // Disk: a candidate starts only with the reserve free where its folders lie, and is stopped
  // when it writes more than its quota there (runner::DiskGuard).
  const std::vector<fs::path> disk_folders{spec.workdir, build_dir};
  if (auto low = runner::check_reserve(disk_folders, disk_limits)) {
    m.task_failure = low->message;
    return judge(m, eo.judge);
  }
  // CPU: the candidate's processes in a control group of their own, for the CPU time of all of
  // them in the wall check (runner::CpuGroup; declared first so that it outlives the worker).
  std::optional<runner::CpuGroup> cpu_group;
  std::unique_ptr<Worker> cw;
  std::optional<runner::DiskGuard> disk_guard;  // after cw: stops before the worker is reaped
  try {
    std::shared_lock no_timing_stopped(quiet_mutex);
    cw = std::make_unique<Worker>(*zygote, spec);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::worker) throw;
    // No worker for this candidate (the zygote could not fork: no process or memory left, which
    // another candidate may have caused; red team rt7): it is not judged, and the run goes on.
    m.task_failure = std::string("kgym could not start a worker for this candidate: ") + e.what() +
                     "; the candidate was not judged: judge it again";
    return judge(m, eo.judge);
  }
  Worker& c = *cw;
  if (worker_device == "cpu") cpu_group.emplace(c.pid());
  disk_guard.emplace(
      disk_folders,
      [this, root = c.pid(), &cpu_group] {
        const pid_t ref = reference_pid.load();
        return runner::Holders{runner::own_processes(root, zygote->workers(), ref,
                                                     cpu_group ? cpu_group->procs() : std::vector<pid_t>{}),
                               {zygote->pid(), ref}};
      },
      disk_limits, [pgid = c.pid()] { ::kill(-pgid, SIGKILL); });
  // The zygote dying during the verdict (killed from outside) takes every worker with it: the
  // candidate is then not at fault, and its verdict says so (task_error) instead of blaming it.
  const int zygote_deaths = zygote->deaths();
  nlohmann::json candidate_parameters, reference_parameters;  // parameters.py's lists, for a message
  nlohmann::json tolerances = nlohmann::json::object();
  for (const char* dt : {"float32", "float16", "bfloat16", "float64"}) {
    Tolerance t = default_tolerance(dt);
    if (eo.tolerance && std::string(dt) == "float32") t = *eo.tolerance;
    tolerances[dt] = {t.atol, t.rtol};
  }
  {
    build_slots.acquire();
    try {
      Message r = c.request({{"op", "load"},
                             {"format", cand.format},
                             {"candidate_source", cand.code},
                             {"task_source", task.source},
                             {"scale", eo.scale},
                             {"init_seed", m.init_seed}},
                            {}, eo.timeouts.load_s);
      r.header.get_to(m.load);
      candidate_parameters = r.header.value("parameters", nlohmann::json::array());
      if (r.header.contains("failure") && r.header["failure"].value("stage", "") == "task")
        m.task_failure = "the task failed inside the candidate process: " + r.header["failure"].value("message", "");
    } catch (const nlohmann::json::exception& e) {  // a forged load reply (red team rt14)
      m.load = {};
      m.task_failure.reset();
      died(c, std::string("sent a malformed load reply: ") + e.what());
    } catch (const ChannelClosed&) {
      m.crash = process_failure(c.kill(), "while loading");
    } catch (const ChannelTimeout&) {
      m.timed_out_stage = "load";
    } catch (const Error& e) {  // malformed frame from the candidate
      died(c, std::string("broke the protocol: ") + e.what());
    }
    build_slots.release();
  }
  // A task failure that the candidate's process reports is believed only when the reference
  // worker cannot load the task either (red team rt15: a forged load reply made the verdict
  // task_error, which blames nobody and is left out of a model's statistics).
  if (m.task_failure && !m.crash && !m.timed_out_stage) {
    const std::string claimed = m.task_failure->substr(0, 300);
    m.task_failure.reset();
    std::unique_lock device(device_mutex);
    const std::string probe_key = "load-probe-" + std::to_string(n);
    if (ask_reference({{"op", "load_task"}, {"key", probe_key}, {"source", task.source}, {"scale", eo.scale}, {"task_id", task.id},
                       {"init_seed", m.init_seed}},
                      {}, eo.timeouts.reference_s, m)) {
      try {
        reference->request({{"op", "drop_task"}, {"key", probe_key}}, {}, 60);
      } catch (const std::exception&) {
        reference.reset();
      }
      died(c, "reported that the task failed in its process (" + claimed +
                  "), but the reference worker loads the task; a task that fails only beside the candidate's code "
                  "is the candidate's failure");
    }  // else the reference failed too: ask_reference recorded the task failure
  }

  // Gate 2's link check (policy::check_linked_symbols): the symbols each shared object the
  // candidate built imports, by the loader's names. Run once the candidate has loaded (its
  // extensions are built and mapped then; a rejection ends the verdict before any case) and
  // again before the verdict (an extension built or loaded in a call). Triton's cache is not
  // among the folders: Triton builds its launchers there itself, and they load libcuda by dlopen.
  const policy::Profile link_profile = eo.policy_profile;
  std::set<std::string> link_checked;
  const policy::Rule* dynamic_rule = policy::find_rule("dynamic_code");
  const auto dynamic_severity = dynamic_rule ? dynamic_rule->in(link_profile) : std::nullopt;
  auto link_check = [&] {
    if (!m.load.ok || !c.alive()) return;
    LinkRecord rec = m.link.value_or(LinkRecord{});
    rec.checked = true;
    rec.folder = (build_dir / "torch_extensions").string();
    std::string note;
    // The C routines torch's own libraries export (MKL, oneDNN, ...), read from the torch the
    // candidate's process mapped: any of them imported is library compute (policy::torch_c_exports).
    const std::set<std::string>* torch_exports = nullptr;
    if (const auto dir = runner::mapped_object_dir(c.pid(), "libtorch_cpu.so")) {
      std::string why;
      torch_exports = policy::torch_c_exports(dir->string(), &why);
      if (!torch_exports) note = "torch's exports could not be read (" + why + "); the symbol rules stand alone";
    }
    for (const auto& o : runner::candidate_objects({build_dir / "torch_extensions", spec.workdir}, c.pid(), &note)) {
      const std::string name = o.path.filename().string();
      if (!link_checked.insert(o.path.string() + (o.replaced ? " replaced" : "")).second) continue;
      rec.extensions.push_back(name + (o.loaded ? " (loaded)" : ""));
      const auto& severity = dynamic_severity;
      if (o.replaced) {
        if (severity)
          rec.findings.push_back({"dynamic_code", std::string(policy::to_string(*severity)),
                                  "the shared object " + name + " was deleted or replaced after the candidate's process "
                                  "loaded it, so what ran cannot be checked: leave built extensions in place"});
        continue;
      }
      std::string error;
      const auto symbols = policy::undefined_symbols(o.path.string(), &error);
      if (!symbols) {
        if (error.rfind("nm could not run", 0) == 0) {
          rec.note = error;  // no binutils here: the source scan stands alone
        } else if (severity) {
          rec.findings.push_back({"dynamic_code", std::string(policy::to_string(*severity)),
                                  "the shared object " + name + " cannot be read as a shared library (" + error.substr(0, 200) +
                                      "): build extensions with load_inline"});
        }
        continue;
      }
      for (const policy::Finding& f : policy::check_linked_symbols(*symbols, name, link_profile, torch_exports))
        rec.findings.push_back({f.rule_id, std::string(policy::to_string(f.severity)), f.message});
      if (const auto needed = policy::needed_libraries(o.path.string()))  // nm read it: readelf does too
        for (const policy::Finding& f : policy::check_needed_libraries(*needed, name, link_profile))
          rec.findings.push_back({f.rule_id, std::string(policy::to_string(f.severity)), f.message});
    }
    if (!note.empty()) rec.note = note;
    m.link = std::move(rec);
  };
  auto link_rejected = [&] {
    return m.link && std::any_of(m.link->findings.begin(), m.link->findings.end(),
                                 [](const LinkFinding& f) { return f.severity == "reject"; });
  };
  if (m.load.ok && !m.crash && !m.timed_out_stage && !m.task_failure) link_check();

  nlohmann::json scaled;
  JudgeOptions jo = eo.judge;
  jo.policy_profile = eo.policy_profile;
  // A reply of the wrong shape from the candidate's process anywhere in the evaluation (it can
  // write its own replies; the fields read through reply_field are safe already) is its breach
  // of the protocol: before, the JSON exception ended the whole run (red team rt14, exit 3).
  std::string held_key;  // the reference's task, dropped when the evaluation is cut short
  try {
    if (m.load.ok && !m.crash && !m.timed_out_stage && !m.task_failure && !link_rejected()) {
      std::unique_lock device(device_mutex);
      const std::string key = sha256_hex(task.source).substr(0, 16) + "-" + std::to_string(n);
      held_key = key;
      PhaseClock phase(m);
      auto loaded = ask_reference({{"op", "load_task"}, {"key", key}, {"source", task.source}, {"task_id", task.id},
                                   {"scale", eo.scale}, {"init_seed", m.init_seed}},
                                  {}, eo.timeouts.reference_s, m);
      phase.lap("load_task");
      if (auto& r = loaded) {
        scaled = r->header.value("scaled", nlohmann::json::object());
        reference_parameters = r->header.value("parameters", nlohmann::json::array());
        if (r->header.contains("roofline")) {
          RooflineRecord roof;
          r->header["roofline"].get_to(roof);
          m.roofline = roof;
        }
        // One correctness case: returns false when the evaluation cannot go on (crash, timeout,
        // reference failure); a skipped other-shape case returns true without a record.
        // The 20 ms output-stability wait (D8) runs in one secret case of the regular ones: the output
        // compared is always the snapshot taken as the call returned, so a late write is never
        // rewarded, and every case still compares that snapshot with the output after a device-wide
        // sync; the wait only widens that window where the candidate cannot know it (H200: the
        // waits were 100 of about 600 ms of a verdict's device time).
        const int stability_case = static_cast<int>(random_seed() % static_cast<std::uint64_t>(std::max(1, eo.n_cases)));
        auto run_one_case = [&](int i, const std::string& transform, bool other_shape, bool audit) -> bool {
          CaseRecord cr;
          cr.index = i;
          cr.transform = transform;
          nlohmann::json mk = {{"op", "make_case"}, {"key", key}, {"index", i}, {"transform", transform}};
          if (other_shape) mk["shape"] = "other";
          // Where a case's time goes (diagnostic; "cases/..." and "other_shape/..." are parts of those
          // phases, which hold the totals): the reference making the inputs, the candidate's run (its
          // first call, with any JIT build, apart), the reference's comparison.
          PhaseClock part(m, other_shape ? "other_shape/" : "cases/");
          auto made = ask_reference(mk, {}, eo.timeouts.reference_s, m);
          part.lap("make");
          if (!made) return false;
          if (made->header.contains("skipped")) {
            m.audit.other_shape = "skipped: " + made->header.value("skipped", std::string());
            return true;
          }
          if (other_shape) {
            m.audit.other_shape = "ran: " + made->header.value("sizes", nlohmann::json::object()).dump();
            cr.shape_variant = "other";
          }
          cr.seed = made->header.value("seed", std::uint64_t{0});
          // The candidate worker regenerates the inputs from the case seed and checks them against
          // the reference's fingerprint; when they differ (get_inputs not reproducible from torch's
          // seed) it answers need_inputs and gets the reference's inputs as bytes instead.
          Message out;
          bool regenerated = true;
          auto run_case = [&](const nlohmann::json& req, const std::vector<Blob>& blobs) -> bool {
            try {
              out = c.request(req, blobs, eo.timeouts.case_s);
              return true;
            } catch (const ChannelClosed&) {
              m.crash = process_failure(c.kill(), "during case " + std::to_string(i));
            } catch (const ChannelTimeout&) {
              m.timed_out_stage = "case";
            } catch (const Error& e) {
              died(c, std::string("broke the protocol: ") + e.what());
            }
            return false;
          };
          const bool wait = !other_shape && i == stability_case;
          if (!run_case({{"op", "run_case"}, {"index", i}, {"regenerate", made->header["regenerate"]},
                         {"tolerances", tolerances}, {"stability_wait", wait}},
                        {}))
            return false;
          part.lap(i == 0 ? "run_first" : "run");
          if (const auto need = out.header.find("need_inputs"); need != out.header.end() && *need == true) {
            auto sent = ask_reference({{"op", "case_inputs"}, {"key", key}, {"index", i}}, {},
                                      eo.timeouts.reference_s, m);
            if (!sent) return false;
            regenerated = false;
            if (!run_case({{"op", "run_case"}, {"index", i}, {"inputs", sent->header["inputs"]},
                           {"tolerances", tolerances}, {"stability_wait", wait}},
                          sent->blobs))
              return false;
            part.lap("inputs_fallback");
          }
          if (out.header.contains("harness_error")) {
            died(c, "kgym's candidate harness failed: " +
                        reply_field(out.header, "harness_error", out.header["harness_error"].dump()));
            return false;
          }
          try {
            from_json(out.header, cr);  // candidate-side fields (contract observations, failure)
          } catch (const nlohmann::json::exception& e) {
            died(c, std::string("sent a malformed reply: ") + e.what());
            return false;
          }
          cr.index = i;
          cr.transform = transform;
          cr.shape_variant = other_shape ? "other" : "";
          cr.trivial_passing.clear();
          cr.fp64_checked = false;  // reference-side fields are never taken from the candidate
          cr.reference_finite = true;  // only the reference worker may say otherwise
          cr.compared = false;         // ... and only apply_comparison sets this
          cr.inputs_regenerated = regenerated;  // what the supervisor sent, not what the candidate says
          if (!cr.failure && cr.output_plain_tensor && !out.header.contains("output")) {
            // Nothing to compare (a forged or truncated reply): never a pass by default.
            cr.failure = Failure{"case", "ProtocolError", "the candidate returned no output to compare", "", 0, 0};
          }
          if (!cr.failure && cr.output_plain_tensor && out.header.contains("output")) {
            auto cmp = ask_reference({{"op", "compare"}, {"key", key}, {"index", i},
                                      {"output", out.header["output"]},
                                      {"tolerances", tolerances}, {"audit", audit}, {"done", true}},
                                     out.blobs, eo.timeouts.reference_s, m);
            part.lap("compare");
            if (!cmp) return false;
            apply_comparison(cmp->header, cr);
            // GPU: the output went to the reference device to device (devicecopy.py) and is copied
            // now; the candidate's process drops it and returns cached memory before the reference
            // makes the next case (at full size, 6.4 GB per output).
            if (worker_device != "cpu" && !run_case({{"op", "release"}}, {})) return false;
          }
          m.cases.push_back(std::move(cr));
          return true;
        };
        bool going = true;
        for (int i = 0; i < eo.n_cases && going; ++i)
          going = run_one_case(i, eo.transforms.empty() ? "nominal" : eo.transforms[i % eo.transforms.size()],
                               false, true);
        // Trivial-answer audit (D12): answers that pass every regular case mean the cases are weak;
        // strengthen them with other value distributions and record it.
        if (going && !m.cases.empty()) {
          std::vector<std::string> passing = m.cases.front().trivial_passing;
          for (const auto& cr : m.cases) {
            std::vector<std::string> keep;
            for (const auto& t : passing)
              if (std::find(cr.trivial_passing.begin(), cr.trivial_passing.end(), t) != cr.trivial_passing.end())
                keep.push_back(t);
            passing = keep;
          }
          m.audit.trivial_passing = passing;
          if (!passing.empty()) {
            const std::size_t first_extra = m.cases.size();
            for (const char* tr : {"scale100", "cube"}) {
              m.audit.strengthened_with.push_back(tr);
              if (!(going = run_one_case(static_cast<int>(m.cases.size()), tr, false, true))) break;
            }
            std::vector<std::string> still = passing;
            for (std::size_t k = first_extra; k < m.cases.size(); ++k) {
              std::vector<std::string> keep;
              for (const auto& t : still)
                if (std::find(m.cases[k].trivial_passing.begin(), m.cases[k].trivial_passing.end(), t) !=
                    m.cases[k].trivial_passing.end())
                  keep.push_back(t);
              still = keep;
            }
            if (m.cases.size() > first_extra) m.audit.still_passing = still;
          }
        }
        phase.lap("cases");
        // Other sizes (D12, H23): one case with the task's size constants changed, where it allows.
        if (going && eo.other_shape) {
          going = run_one_case(static_cast<int>(m.cases.size()), "nominal", true, false);
          phase.lap("other_shape");
        }

        const bool time_it = going && eo.time_candidate && !m.task_failure && !m.crash && !m.timed_out_stage &&
                             judge(m, jo).correct;
        if (time_it) time_phase(c, key, eo, m, tolerances, device, cpu_group ? &*cpu_group : nullptr);
        if (reference && reference->alive()) {
          try {
            reference->request({{"op", "drop_task"}, {"key", key}}, {}, 60);
          } catch (const std::exception&) {
            reference.reset();
          }
        }
      }
    }
  } catch (const nlohmann::json::exception& e) {
    died(c, std::string("sent a reply kgym could not read (a field of the wrong type): ") + e.what());
    if (!held_key.empty() && reference && reference->alive()) {
      try {
        reference->request({{"op", "drop_task"}, {"key", held_key}}, {}, 60);
      } catch (const std::exception&) {
        reference.reset();
      }
    }
  }
  if (!link_rejected()) link_check();
  const auto disk_breach = disk_guard->breach();
  disk_guard.reset();
  if (c.alive()) {
    const auto st = c.finish();
    (void)st;
  }
  // CPU: what the candidate left running goes with its control group, before its folders are
  // released (fork-walking processes outran the zygote's pid sweep: red team rt23).
  if (cpu_group) cpu_group->kill_all();
  if (disk_breach && disk_breach->candidate_at_fault) {
    m.crash = process_failure(runner::ExitStatus{SIGKILL, 0}, disk_breach->message);
    m.crash->type = "disk_quota";
    runner::release_folders(disk_folders, spec.workdir / "worker.log");
  } else {
    if (disk_breach) m.task_failure = disk_breach->message;
    // What the verdict no longer needs: the work folder's files but the log (a long `kgym serve`
    // kept every candidate's until it ended; KGYM_KEEP_WORK=1 keeps them), and a build folder
    // too large to keep for the next run of the same source.
    if (!keep_work()) runner::release_folders({spec.workdir}, spec.workdir / "worker.log");
    const auto built = runner::folder_usage({build_dir}, {}, disk_limits.quota_entries);
    if (built.bytes > disk_limits.build_keep_bytes || !built.unmeasured.empty()) runner::remove_tree(build_dir);
  }
  if (zygote->deaths() != zygote_deaths)
    m.task_failure = "kgym's worker zygote died during this verdict (killed from outside, e.g. by the OOM killer; "
                     "log " + (work_dir / "zygote.log").string() + "), and every worker with it; a new one was started. "
                     "The candidate was not judged: judge it again";

  Verdict v = judge(m, jo);
  v.provenance["scaled_constants"] = scaled;
  // KernelBench's parameter rule (kgym/parameter_check.hpp): a wrong output from a model whose
  // parameters differ from the reference's says which one (a message only; the cases decided).
  if (v.outcome == Outcome::incorrect || v.outcome == Outcome::contract_violation)
    if (auto diff = parameter_difference(reference_parameters, candidate_parameters); diff && !v.messages.empty())
      v.messages.front() += "; " + *diff;
  return v;
}

void Engine::Impl::time_phase(Worker& c, const std::string& key, const EvalOptions& eo, Measurements& m,
                              const nlohmann::json& tolerances, std::unique_lock<std::mutex>& device_lock,
                              const runner::CpuGroup* cpu_group) {
  using clock = std::chrono::steady_clock;
  auto ms_since = [](clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  };
  const TimingOptions& to = eo.timing;
  const int rounds = std::max(1, to.rounds);
  TimingOptions per = to;
  per.min_calls = std::max(1, (to.min_calls + rounds - 1) / rounds);
  per.max_calls = std::max(per.min_calls, (to.max_calls + rounds - 1) / rounds);
  per.budget_ms = to.budget_ms / rounds;
  std::mt19937_64 rng(random_seed());
  auto fresh_seed = [&] { return rng() & ((1ULL << 63) - 1); };
  std::optional<TimingRecord> cand, eager, compiled;
  // Processes of the candidate other than its worker that hold the GPU, looked for while its
  // tree is stopped (before each baseline and each calibration): a second CUDA context runs
  // kernels that no trace sees and shares the GPU with the reference's measurements (red team
  // rt5). On a CPU run the worker itself must not hold it either.
  std::vector<std::string> gpu_holders;
  auto note_gpu_holders = [&] {
    add_unique(gpu_holders, runner::foreign_gpu_holders(c.pid(), zygote->pid(), zygote->workers(),
                                                        reference ? reference->pid() : -1, worker_device == "cpu"));
  };
  // While the candidate's calls are timed or traced: the other candidates' workers stopped, the
  // candidate's own tree and the reference (as it is now: it may have been restarted) running.
  auto bystanders = [&] {
    return runner::bystander_processes(zygote->pid(), {c.pid(), reference ? reference->pid() : -1});
  };
  // While the reference times: the candidate's tree stopped too (PausedTree's set).
  auto all_but_reference = [&] {
    return runner::pausable_processes(c.pid(), zygote->pid(), reference ? reference->pid() : -1);
  };
  auto candidate_request = [&](const nlohmann::json& req, const char* what) -> std::optional<Message> {
    try {
      Message reply = c.request(req, {}, eo.timeouts.timing_s);
      // The harness in the candidate's process raised (e.g. the device ran out of memory): a
      // failure of this run, said as it is, not a reply with missing parts (which reads as a
      // broken contract: full-size ReLU's wall request, H200 session 9).
      if (reply.header.contains("harness_error")) {
        m.crash = process_failure(c.kill(), std::string(what) + ": kgym's candidate harness failed: " +
                                                reply_field(reply.header, "harness_error",
                                                            reply.header["harness_error"].dump()));
        return std::nullopt;
      }
      return reply;
    } catch (const ChannelClosed&) {
      m.crash = process_failure(c.kill(), what);
    } catch (const ChannelTimeout&) {
      m.timed_out_stage = "timing";
    } catch (const Error& e) {
      const auto st = c.kill();
      m.crash = process_failure(st, std::string("broke the protocol: ") + e.what());
    }
    return std::nullopt;
  };
  // A recheck that could not be compared (the output was not returned, or not committed to): a
  // contract violation of that call.
  auto unreturned = [](std::vector<CaseRecord>& into, int index, std::uint64_t seed, const char* transform,
                       std::string why) {
    CaseRecord r;
    r.index = index;
    r.seed = seed;
    r.transform = transform;
    r.compared = true;
    r.structure_matches = false;
    r.detail = std::move(why);
    into.push_back(std::move(r));
  };
  // The reference compares `items` ({index, seed, output[, fingerprint]}, bytes in `blobs`) with
  // the task on inputs regenerated from each seed; the results go to `into`, indices + `offset`.
  // False when the reference failed (the evaluation cannot go on).
  auto recheck = [&](std::vector<CaseRecord>& into, const nlohmann::json& items, const std::vector<Blob>& blobs,
                     const char* transform, int offset, const std::string& phase) -> bool {
    const auto r0 = clock::now();
    auto res = ask_reference({{"op", "recheck"}, {"key", key}, {"items", items}, {"tolerances", tolerances}}, blobs,
                             eo.timeouts.reference_s, m);
    m.phase_ms[phase] += ms_since(r0);
    if (!res) return false;
    const auto& results = res->header.value("results", nlohmann::json::array());
    for (std::size_t i = 0; i < results.size() && i < items.size(); ++i) {
      CaseRecord r;
      r.index = offset + items[i].value("index", 0);
      r.seed = items[i].value("seed", std::uint64_t{0});
      r.transform = transform;
      apply_comparison(results[i], r);
      into.push_back(std::move(r));
    }
    return true;
  };
  for (int round = 0; round < rounds; ++round) {
    // Fresh inputs for every call (one seed each) and a secret recheck subset (recheck_positions,
    // wall_check.hpp; the worker adds the round's last call): the candidate code cannot know
    // which outputs are checked (D2, D3).
    // Which side goes first alternates by round (candidate first in even rounds, the baselines
    // in odd ones; docs/timing.md "Order"): with the candidate always first, whatever drifts
    // within a round (the machine's clock and load, the GPU's power state, caches the first
    // side warms) fell on one side; paired rounds of opposite order cancel a linear drift.
    // A baselines-first round times every side for the previous round's number of candidate
    // calls (the same windows for every side), the candidate included.
    const bool baselines_first = round % 2 == 1 && cand && !cand->round_calls.empty() && cand->round_calls.back() > 0;
    TimingOptions this_round = per;
    if (baselines_first) this_round.min_calls = this_round.max_calls = std::min(per.max_calls, cand->round_calls.back());
    std::vector<std::uint64_t> seeds(static_cast<std::size_t>(this_round.warmup + this_round.max_calls));
    for (auto& x : seeds) x = fresh_seed();
    const std::vector<int> keep =
        runner::recheck_positions(this_round.min_calls, this_round.max_calls, to.rechecks_per_round, rng);
    // The spot check's positions come from a seed of this round, as secret as `keep`.
    nlohmann::json spot = nullptr;
    if (to.spot_samples > 0) spot = {{"seed", fresh_seed()}, {"k", to.spot_samples}};
    // (declared before the candidate's part: the baselines' lambda reads them)
    nlohmann::json cand_spot = nullptr;
    std::size_t offset = cand ? cand->times_ms.size() : 0;
    int round_calls = 0;
    std::vector<int> rechecked;
    // The spot check's result (the reference's reply's "timing"), onto the candidate's record.
    auto read_spot = [&](const nlohmann::json& tj) {
      if (const auto sp = tj.find("spot"); sp != tj.end() && sp->is_object()) {
        if (const auto err = sp->find("error"); err != sp->end()) {
          cand->spot_unreadable = true;
          if (cand->spot_detail.empty()) cand->spot_detail = reply_field(*sp, "error", std::string("unreadable"));
        }
        cand->spot_checked_calls += reply_field(*sp, "checked", 0);
        for (const auto& f : sp->value("failed", nlohmann::json::array())) {
          const int index = static_cast<int>(offset) + reply_field(f, "index", 0);
          cand->spot_failed_calls.push_back(index);
          if (cand->spot_detail.empty())
            cand->spot_detail = fmt::format("timed call {}: {}", index, reply_field(f, "detail", std::string()));
        }
      }
    };
    // The baselines' timed calls of this round (eager, then torch.compile), `calls` each on the
    // round's seeds; with `with_spot`, eager's reply also carries the spot check of the
    // candidate's calls (it needs the candidate's samples, so only after the candidate ran).
    auto time_baselines = [&](int calls, bool with_spot) -> bool {
      for (const char* kind : {"eager", "compile"}) {
        if (std::string(kind) == "compile" && !eo.compile_baseline) continue;
        const auto t0 = clock::now();
        std::optional<Message> r;
        {
          QuietDevice quiet(quiet_mutex, all_but_reference);
          note_gpu_holders();
          // The baseline's own wall-clock loop (reference.time, GPU) in the last round only: it
          // decides whether the supervisor measures the baseline's floor (baseline_floor_can_bind)
          // and is that floor otherwise; run every round, it was half of a GPU-bound eager's
          // timing phase (H200, session 15).
          // The same number of timed calls as the candidate's round, on its seeds (issue 33: the
          // same windows for every side). With an adaptive stop of its own, eager stopped after 5
          // quiet calls where the candidate, whose rechecked calls copy their inputs first, ran 50,
          // so the two medians came from other stretches of a drifting machine.
          TimingOptions same = per;
          if (calls > 0) same.min_calls = same.max_calls = calls;
          nlohmann::json req = {{"op", "time"}, {"key", key}, {"kind", kind}, {"options", timing_json(same)},
                                {"seeds", seeds}, {"wall_target_ms", to.wall_check_ms},
                                {"own_floor", round == rounds - 1}};
          // Eager's calls run on the candidate's seeds: its outputs are the reference for the spot
          // check of every timed call of this round (docs/timing.md, "Spot check").
          if (std::string(kind) == "eager" && with_spot && !spot.is_null() && round_calls > 0) {
            // (the rechecked calls: their outputs were held to the cases' full check, so the spot
            // check holds the other calls to the agreement with eager those showed)
            req["spot"] = {{"seed", spot["seed"]}, {"k", spot["k"]}, {"candidate", cand_spot}, {"calls", round_calls},
                           {"trusted", rechecked}};
            req["tolerances"] = tolerances;
          } else if (std::string(kind) == "eager" && !with_spot && !spot.is_null()) {
            // (a baselines-first round: eager samples its outputs as the candidate will, the same
            // work per call on both sides; the reference's spot_check compares them afterwards)
            req["spot"] = {{"seed", spot["seed"]}, {"k", spot["k"]}};
          }
          r = ask_reference(req, {}, eo.timeouts.reference_s, m);
        }
        if (!r) return false;
        if (std::string(kind) == "eager" && with_spot && !spot.is_null() && round_calls > 0)
          read_spot(r->header.at("timing"));
        TimingRecord b;
        r->header.at("timing").get_to(b);
        b.wall_ms = ms_since(t0);
        m.phase_ms[std::string(kind) + "_timing"] += b.wall_ms;
        merge_round(std::string(kind) == "eager" ? eager : compiled, std::move(b));
      }
      return true;
    };
    if (baselines_first && !time_baselines(this_round.max_calls, false)) return;
    const auto began = clock::now();
    std::optional<Message> t;
    {
      QuietDevice quiet(quiet_mutex, bystanders);
      // (CPU: the last round also has the candidate's process compare every aten operator's
      // kernels with the snapshot taken before its code ran, integrity.Fingerprints.add_dispatcher;
      // on a GPU the profiler's start does it, outside the device lock)
      t = candidate_request({{"op", "time"}, {"options", timing_json(this_round)}, {"seeds", seeds}, {"keep", keep}, {"spot", spot},
                             {"audit_dispatcher", round == rounds - 1 && worker_device == "cpu"}},
                            "while timed");
    }
    m.phase_ms["candidate_timing"] += ms_since(began);
    if (!t) break;
    TimingRecord rec;
    try {
      t->header.at("timing").get_to(rec);
    } catch (const std::exception& e) {
      m.crash = process_failure(c.kill(), std::string("sent a malformed timing reply: ") + e.what());
      break;
    }
    rec.wall_ms = ms_since(began);
    // The spot check's results come from the reference only; the candidate's own samples go to it.
    rec.spot_checked_calls = 0;
    rec.spot_failed_calls.clear();
    rec.spot_detail.clear();
    rec.spot_unreadable = false;
    if (auto sp = t->header.find("spot"); sp != t->header.end()) cand_spot = *sp;
    offset = cand ? cand->times_ms.size() : 0;
    round_calls = static_cast<int>(rec.times_ms.size());
    const bool failed = rec.failure.has_value();
    merge_round(cand, std::move(rec));
    if (failed) break;
    // Every output asked for (the secret subset among the calls that ran, and the last call)
    // must come back: a reply that leaves one out (a forged reply, red team 2026-12-01) fails
    // the recheck of that call as a contract violation.
    std::set<int> wanted;
    for (int k : keep)
      if (k < round_calls) wanted.insert(k);
    if (round_calls > 0) wanted.insert(round_calls - 1);
    if (auto kept = t->header.find("kept"); kept != t->header.end() && kept->is_array()) {
      for (const auto& k : *kept)
        wanted.erase(reply_field(k, "index", -1));
    }
    for (int missing : wanted)
      unreturned(cand->rechecks, static_cast<int>(offset) + missing, seeds[static_cast<std::size_t>(this_round.warmup + missing)],
                 "timed", "the candidate's process did not return this timed output for the recheck");
    if (auto kept = t->header.find("kept"); kept != t->header.end() && kept->is_array() && !kept->empty()) {
      nlohmann::json items = nlohmann::json::array();
      for (const auto& k : *kept) {
        if (!k.is_object()) continue;
        const int index = reply_field(k, "index", -1);
        if (index < 0 || index >= this_round.max_calls) continue;
        items.push_back({{"index", index}, {"seed", seeds[static_cast<std::size_t>(this_round.warmup + index)]},
                         {"output", k.value("output", nlohmann::json::object())}});
      }
      if (!recheck(cand->rechecks, items, t->blobs, "timed", static_cast<int>(offset), "rechecks")) return;
    }
    // The round's rechecked calls whose outputs held as the judge decides (recheck_holds): the
    // spot check holds the other calls to the agreement with eager these showed.
    for (const CaseRecord& r : cand->rechecks) {
      const int i = r.index - static_cast<int>(offset);
      if (r.transform == "timed" && i >= 0 && i < round_calls && r.compared && recheck_holds(r, eo.judge))
        rechecked.push_back(i);
    }
    // On a GPU the kept outputs went to the reference device to device (devicecopy.py): the
    // candidate's process holds them until told that they were copied; they must not sit beside
    // the baselines' timing (at full size, 6.4 GB each).
    if (worker_device != "cpu" && !candidate_request({{"op", "release"}}, "while releasing its rechecked outputs"))
      break;
    if (!baselines_first) {
      if (!time_baselines(round_calls, true)) return;
    } else if (!spot.is_null() && round_calls > 0) {
      // The spot check of a baselines-first round: eager's outputs on the round's seeds,
      // computed by the reference after the candidate ran (untimed), against its samples.
      std::optional<Message> r;
      {
        QuietDevice quiet(quiet_mutex, all_but_reference);
        r = ask_reference({{"op", "spot_check"}, {"key", key}, {"seeds", seeds}, {"warmup", this_round.warmup},
                           {"spot", {{"seed", spot["seed"]}, {"k", spot["k"]}, {"candidate", cand_spot},
                                     {"calls", round_calls}, {"trusted", rechecked}}},
                           {"tolerances", tolerances}},
                          {}, eo.timeouts.reference_s, m);
      }
      if (!r) return;
      read_spot(r->header.at("timing"));
    }
  }
  if (cand) cand->rounds = rounds;
  if (eager) eager->rounds = rounds;
  if (compiled) compiled->rounds = rounds;
  m.eager_timing = eager;
  m.compile_timing = compiled;
  if (cand) cand->foreign_gpu_processes = gpu_holders;
  m.candidate_timing = cand;
  if (!cand || cand->failure || m.crash || m.timed_out_stage || cand->times_ms.empty()) return;
  TimingRecord& timing = *m.candidate_timing;  // the wall check adds to the recorded timing
  // Wall-clock cross-check (D7): N calls on fresh inputs timed by this process's clock
  // (synchronised each on the CPU, back to back on the GPU). Nothing the candidate's process
  // reports is trusted here (it can write its own replies: red team, 2026-12-01):
  //  - the cost of the request without the calls (N input sets, the round trip, the
  //    commitments) is measured on the reference worker, with the same code, and subtracted;
  //  - the timed request must commit to every call's output (a fingerprint of each, computed
  //    before it replies), and the outputs of two secret calls are then fetched and checked
  //    against the commitment and the task by the reference: a process that skipped calls, or
  //    computed them after replying, fails the recheck;
  //  - every request gets fresh seeds (a cache keyed by the seeds cannot hit).
  // Calibration is the least of three requests, the timed request the least of two, taken
  // alternately, so that one slow request cannot lower the floor.
  const auto wall_began = clock::now();
  const bool gpu = worker_device != "cpu";
  // What the candidate's harness found in a wall request (replaced loop functions, an output in
  // an input's storage; the full fingerprint in the untimed requests) or when the profiler
  // started: as a timed call's, a contract violation (red team rt24). Only strings are taken
  // (the reply is the candidate's).
  auto note_tampered = [&](const nlohmann::json& header) {
    if (const auto t = header.find("tampered"); t != header.end() && t->is_array())
      for (const auto& x : *t)
        if (x.is_string() && std::find(timing.tampered.begin(), timing.tampered.end(), x.get<std::string>()) ==
                                 timing.tampered.end())
          timing.tampered.push_back(x.get<std::string>());
  };
  const double median = summarize_times(timing.times_ms).median_ms;
  // GPU: up to 1000 calls, so that a call of a few microseconds still adds up to the target: at
  // 100 such calls were 1 to 3 ms read against 10 ms requests, and eager's very operator got
  // 0.26x to 1.75x (H200, session 13). CPU: up to 100 (there more calls do not lift the calls
  // above the noise, which grows with the request).
  int n_wall = std::clamp(static_cast<int>(std::ceil(to.wall_check_ms / std::max(median, 1e-3))), 5, gpu ? 1000 : 100);
  // The committed outputs stay alive until the reply: at most about 2 GiB of them (4 bytes per
  // output element assumed), never fewer than 5 calls.
  double out_bytes = 0;
  for (const auto& cr : m.cases) out_bytes = std::max(out_bytes, 4.0 * static_cast<double>(cr.numel));
  auto cap_calls = [&](int n) {
    if (out_bytes <= 0) return n;
    return std::max(5, std::min(n, static_cast<int>((2.0 * (1ull << 30)) / out_bytes)));
  };
  n_wall = cap_calls(n_wall);
  double host_ms = 0, cpu_used_ms = 0, cpu_wall_ms = 0;
  int cpu_requests = 0, grouped_requests = 0;  // CPU: timed requests, and those the cgroup measured
  // The wall clock on the GPU; on the CPU the busy clock (below; the wall clock is kept too)
  // (runner::WallCheckSeries, docs/timing.md "Wall-clock floor").
  runner::WallCheckSeries wall, cpu;
  // GPU: the baselines' requests with their calls, against the same calibrations (their floors
  // by the candidate's clock and rule); index 0 eager, 1 torch.compile.
  runner::WallCheckSeries baseline_wall[2];
  // GPU: the candidate's own calibrations (its committed request without the calls), which may
  // only raise its floor (runner::candidate_calls_ms).
  runner::WallCheckSeries own_calibration;
  // CPU: each baseline's committed requests with its calls, on the candidate's inputs, right
  // after each of the candidate's timed requests and so between the same two calibrations (the
  // same wall check for every side), on the wall clock and on the reference's busy clock.
  std::vector<double> baseline_timed_wall[2], baseline_timed_busy[2];
  bool baseline_wall_missing[2] = {false, false};
  // CPU: each request's own work outside the calls (ms of its process's CPU time, -1 when not
  // reported): the calibrations', the candidate's and the baselines' timed requests'
  // (runner::without_harness_work).
  std::vector<double> harness_cal, harness_cand, harness_base[2];
  auto harness_of = [](const Message& r) {
    const auto it = r.header.find("harness_ms");
    return it != r.header.end() && it->is_number() ? it->get<double>() : -1.0;
  };
  const bool baseline_ok[2] = {eager && !eager->failure && !eager->times_ms.empty(),
                               compiled && !compiled->failure && !compiled->times_ms.empty()};
  // GPU: a baseline's supervisor-timed requests only where their floor can bind (a host-bound
  // baseline); a GPU-bound one keeps its net event time whatever they say
  // (runner::baseline_floor_can_bind).
  bool baseline_floor[2] = {false, false};
  for (int b = 0; gpu && b < 2; ++b) {
    if (!baseline_ok[b]) continue;
    const TimingRecord& rec = b == 0 ? *eager : *compiled;
    const double own = rec.wall_check_calls > 0 ? rec.wall_check_ms / rec.wall_check_calls : 0.0;
    baseline_floor[b] = runner::baseline_floor_can_bind(own, summarize_times(rec.times_ms).median_ms,
                                                        baseline_ok[0] ? eager->window_overhead_ms : 0.0,
                                                        eo.judge.wall_floor_factor);
  }
  // GPU: 3 calibrations and 2 timed requests, alternating, then 10x the calls if inconclusive.
  // CPU: 7 and 6 at once and no retry: more calls per request do not lift the calls above the
  // noise there (it grows with the request), more requests make the least of each closer to
  // the quiet machine.
  const int requests = gpu ? 5 : 13;
  const pid_t reference_pid = reference ? reference->pid() : -1;
  // CPU: the timed requests' inputs come from a file the reference writes while the candidate
  // is stopped (common.SharedInputs); the candidate maps it in its untimed request. Without it
  // (an input that is not a contiguous tensor or a plain value) the candidate generates them.
  nlohmann::json shared_map;  // {path, bytes} once the reference made the file
  // The layout of the sets the file holds now (the timed request's header carries it): the
  // reference's calibrations and baseline requests carry it too, so that every request of the
  // check sends, parses and answers the same messages (below, "the same messages").
  nlohmann::json shared_layout;
  auto write_inputs = [&](std::uint64_t seed) -> std::optional<nlohmann::json> {
    auto r = ask_reference({{"op", "wall_inputs"}, {"key", key}, {"n", n_wall}, {"seed", seed}}, {},
                           eo.timeouts.reference_s, m);
    if (!r) return std::nullopt;
    if (r->header.contains("unsupported")) {
      shared_map = nullptr;
      return nlohmann::json();
    }
    shared_map = runner::shared_inputs_map(r->header);
    shared_layout = r->header.value("layout", nlohmann::json());
    return shared_layout;
  };
  if (!gpu && !write_inputs(fresh_seed())) return;
  for (int attempt = 0; attempt < 2; ++attempt) {
    wall.clear();
    cpu.clear();
    own_calibration.clear();
    for (auto& b : baseline_wall) b.clear();
    for (auto& b : baseline_timed_wall) b.clear();
    for (auto& b : baseline_timed_busy) b.clear();
    harness_cal.clear();
    harness_cand.clear();
    for (auto& b : harness_base) b.clear();
    for (int i = 0; i < requests; ++i) {
      const std::uint64_t wseed = fresh_seed();
      if (i % 2 == 0) {
        // The candidate's process tree is stopped while the reference calibrates: a child that
        // spins whenever the candidate is idle slowed the calibration and so lowered the floor
        // (H200, 2026-12-01: rt3_hog_baseline passed 2.63x). The pause itself costs nothing
        // measurable: the 4x floors first blamed on it came from garbage collections inside the
        // requests (protocol.serve). The settle request first, untimed: no collection pending
        // in the reference and its device idle.
        const auto pause_began = clock::now();
        QuietDevice quiet(quiet_mutex, all_but_reference);
        note_gpu_holders();
        m.phase_ms["wall_check/pause"] += ms_since(pause_began);
        // (CPU: with the output arena its calibration copies into, as the candidate's.)
        const auto settle_began = clock::now();
        if (!ask_reference({{"op", "settle"}, {"reserve_n", n_wall}, {"reserve_bytes", out_bytes}}, {},
                           eo.timeouts.reference_s, m))
          return;
        m.phase_ms["wall_check/settle"] += ms_since(settle_began);
        // The same messages as the candidate's timed request (issue 33): its header carries the
        // shared inputs' layout and its reply the N commitments, and the supervisor's clock holds
        // their encoding, sending and parsing on both ends (about 0.7 ms for 100 calls on the
        // 2-core dev VM, 7 us a call). A calibration with a short request and an {"ok": true}
        // reply left that in the candidate's paired differences alone, and eager's request, as
        // short, did not pay it: a renamed reference read 0.77x to 0.89x on the check.
        nlohmann::json cal_req = {{"op", "wall_calibration"}, {"key", key}, {"n", n_wall}, {"seed", wseed},
                                  {"sync_each", !gpu}, {"commit", true}, {"shared", !shared_map.is_null()}};
        if (!shared_map.is_null() && !shared_layout.is_null()) cal_req["layout"] = shared_layout;
        const double ref_wait0 = gpu ? 0 : runner::runqueue_wait_ms(reference_pid);
        const auto t0 = clock::now();
        std::optional<Message> cal = ask_reference(cal_req, {}, eo.timeouts.reference_s, m);
        if (!cal) return;
        const double cal_ms = ms_since(t0);
        m.phase_ms["wall_check/calibration"] += cal_ms;
        harness_cal.push_back(harness_of(*cal));
        wall.add_calibration(cal_ms);
        // GPU: each baseline's request with its calls (the same inputs, kept and committed to as
        // the candidate's are), timed by this clock right after the calibration: the baselines'
        // floors by the candidate's rule. Before, they came from the reference's own loop, which
        // charged host time the candidate's floor did not: an identical 256x256 matmul got 1.28x
        // and a candidate whose timed calls did nothing 1.37x (H200, session 9).
        for (int b = 0; gpu && b < 2; ++b) {
          if (!baseline_floor[b]) continue;
          const auto tb = clock::now();
          std::optional<Message> br = ask_reference({{"op", "wall_calibration"}, {"key", key}, {"n", n_wall},
                                                     {"seed", wseed}, {"sync_each", false},
                                                     {"call", b == 0 ? "eager" : "compile"}},
                                                    {}, eo.timeouts.reference_s, m);
          if (!br) return;
          const double b_ms = ms_since(tb);
          m.phase_ms["wall_check/baselines"] += b_ms;
          if (br->header.contains("unsupported")) continue;
          baseline_wall[b].add_calibration(cal_ms);
          baseline_wall[b].add_timed(b_ms);
        }
        if (!gpu) {
          const double ref_wait1 = runner::runqueue_wait_ms(reference_pid);
          cpu.add_calibration(ref_wait0 >= 0 && ref_wait1 >= 0 ? cal_ms - (ref_wait1 - ref_wait0) : -1.0);
        }
        continue;
      }
      // An untimed request first (one input set, no call): whatever the process has to catch up
      // on after the reference's phases is not counted as the calls' time.
      // It also has the caching allocator reserve the N outputs' blocks that the timed request
      // keeps alive (the first timed request was 2 to 3 ms slower on the H200 without it).
      nlohmann::json untimed = {{"op", "wall"},       {"n", 1},         {"call", false},
                                {"seed", fresh_seed()}, {"sync_each", true}, {"reserve_bytes", out_bytes},
                                {"reserve_n", n_wall}};
      if (!shared_map.is_null()) untimed["map"] = shared_map;
      auto untimed_began = clock::now();
      // The other candidates' workers stay stopped from here until the timed reply (QuietDevice).
      std::optional<QuietDevice> quiet;
      quiet.emplace(quiet_mutex, bystanders);
      if (gpu) {
        // The timed request without the calls in the candidate's own process, first (no kept
        // outputs alive then: at full size the N outputs and the stand-in did not fit beside the
        // reference's memory on the H200).
        const auto tc = clock::now();
        auto own = candidate_request({{"op", "wall"}, {"calibrate", true}, {"n", n_wall}, {"seed", fresh_seed()}},
                                     "during the wall-clock check");
        if (!own) return;
        const double own_ms = ms_since(tc);
        m.phase_ms["wall_check/own_calibration"] += own_ms;
        own_calibration.add_calibration(own_ms);
        untimed_began = clock::now();
      }
      auto untimed_reply = candidate_request(untimed, "during the wall-clock check");
      if (!untimed_reply) return;
      note_tampered(untimed_reply->header);
      m.phase_ms["wall_check/untimed"] += ms_since(untimed_began);
      nlohmann::json timed_req = {{"op", "wall"},         {"n", n_wall},       {"call", true},
                                  {"seed", wseed},        {"sync_each", !gpu}, {"commit", true}};
      // CPU with shared inputs: the reference writes this request's input sets while the
      // candidate's processes are stopped; the clocks start before they run again.
      std::optional<PausedTree> frozen;
      if (!shared_map.is_null()) {
        const auto inputs_began = clock::now();
        // (the candidate's processes only: the bystanders are the QuietDevice's, and stay stopped
        // when `frozen` continues what it stopped)
        frozen.emplace([&] {
          auto mine = all_but_reference();
          const auto others = bystanders();
          std::erase_if(mine, [&](pid_t p) { return std::find(others.begin(), others.end(), p) != others.end(); });
          return mine;
        });
        const auto layout = write_inputs(wseed);
        m.phase_ms["wall_check/inputs"] += ms_since(inputs_began);
        if (!layout) return;
        if (!shared_map.is_null()) timed_req["layout"] = *layout;
      }
      // CPU: the CPU time of all the candidate's processes over the same stretch (a forked helper
      // computing part of each call in parallel; the judge compares it with the wall clock).
      // The busy clock (CPU): the worker's wall clock minus its main thread's time waiting for a
      // CPU, plus the CPU time of everything else of the candidate: the worker's other threads
      // and its other processes (docs/timing.md).
      const bool grouped = !gpu && cpu_group && cpu_group->ok();
      const double group0 = grouped ? cpu_group->usage_ms() : -1;  // (the tree is stopped here)
      // Without a control group: the /proc sum over the candidate's processes (a walk of /proc).
      const double precise0 = gpu || grouped ? 0 : runner::tree_cpu_ms(c.pid(), zygote->pid(), zygote->workers(), true);
      const double main0 = gpu ? 0 : runner::main_thread_run_ms(c.pid());
      const double wait0 = gpu ? 0 : runner::runqueue_wait_ms(c.pid());
      const auto t1 = clock::now();
      if (frozen) frozen->release();
      auto reply = candidate_request(timed_req, "during the wall-clock check");
      const double ms = ms_since(t1);
      quiet.reset();
      if (!reply) return;
      if (!gpu) {
        const double wait1 = runner::runqueue_wait_ms(c.pid());
        double main1 = runner::main_thread_run_ms(c.pid());
        double precise = -1;
        if (grouped && group0 >= 0) {
          // The control group's charge, read with the candidate's processes stopped (exact): it
          // holds the processes that exited during the request, reaped or not (rt11).
          PausedTree still(c.pid(), zygote->pid(), reference_pid);
          const double group1 = cpu_group->usage_ms();
          // The main thread's run time read at the same stopped moment: between the reply and the
          // stop it collects garbage (protocol.serve), which the group's charge holds; read before,
          // that time counted as "other threads' CPU" and charged the candidate alone about 10 ms
          // per request (a renamed reference read 0.56x of eager on the wall check, RMSNorm).
          if (const double m1 = runner::main_thread_run_ms(c.pid()); m1 >= 0 && main1 >= 0) main1 = m1;
          if (group1 >= 0) {
            precise = group1 - group0;
            ++grouped_requests;
          }
        }
        // A group that could not be read this time leaves the request unmeasured: no CPU figure
        // and no busy-clock reading (the engine then keeps the wall clock, which holds everything).
        const bool measured = !grouped || precise >= 0;
        if (!grouped) precise = runner::tree_cpu_ms(c.pid(), zygote->pid(), zygote->workers(), true) - precise0;
        if (!measured) precise = 0;
        if (!grouped) {
          // /proc accounting: a process that ignores SIGCHLD hides its children's CPU time (rt11).
          add_unique(timing.unreaping_processes, runner::unreaping_processes(c.pid(), zygote->pid(), zygote->workers()));
        }
        ++cpu_requests;
        // Everything but the worker's main thread: its other threads (rt10: a helper thread on
        // the main thread's CPU did the calls while the main thread, SCHED_IDLE, sat in the run
        // queue, 2.2x to 3.5x) and the other processes.
        const double others = precise - (main1 - main0);
        cpu.add_timed(measured && wait0 >= 0 && wait1 >= 0 && main0 >= 0 && main1 >= 0
                          ? ms - (wait1 - wait0) + std::max(0.0, others)
                          : -1.0);
        cpu_used_ms += precise;  // every living process by its CPU clock (rt9's helpers hid from ticks)
        cpu_wall_ms += ms;
      }
      // CPU: the baselines through the same check (issue 33: the same path for candidate and
      // baselines). Each baseline serves the candidate's request with its own calls, on the same
      // inputs (the shared file still holds this request's sets, else the same seeds), its
      // outputs copied into an arena and committed to as the candidate's are, synchronised after
      // each call, timed by this clock and by the reference's busy clock, while the candidate's
      // processes are stopped. Without it the candidate alone paid the check's overstatement of
      // a small call (a renamed reference read 0.59x median over 12 level-1 tasks).
      for (int b = 0; !gpu && b < 2; ++b) {
        if (!baseline_ok[b] || baseline_wall_missing[b]) continue;
        // The same messages as the candidate's timed request: the layout in the header, the
        // commitments in the reply, both inside the clock (made before it, as the candidate's).
        nlohmann::json b_req = {{"op", "wall_calibration"}, {"key", key}, {"n", n_wall}, {"seed", wseed},
                                {"sync_each", true}, {"commit", true}, {"shared", !shared_map.is_null()},
                                {"call", b == 0 ? "eager" : "compile"}};
        if (timed_req.contains("layout")) b_req["layout"] = timed_req["layout"];
        QuietDevice paused(quiet_mutex, all_but_reference);
        const double w0 = runner::runqueue_wait_ms(reference_pid);
        const auto tb = clock::now();
        std::optional<Message> br = ask_reference(b_req, {}, eo.timeouts.reference_s, m);
        if (!br) return;
        const double b_ms = ms_since(tb);
        const double w1 = runner::runqueue_wait_ms(reference_pid);
        m.phase_ms["wall_check/baselines"] += b_ms;
        if (br->header.contains("unsupported")) {
          baseline_wall_missing[b] = true;
          continue;
        }
        baseline_timed_wall[b].push_back(b_ms);
        harness_base[b].push_back(harness_of(*br));
        baseline_timed_busy[b].push_back(w0 >= 0 && w1 >= 0 ? b_ms - (w1 - w0) : -1.0);
      }
      note_tampered(reply->header);
      m.phase_ms["wall_check/timed"] += ms;
      if (!gpu) harness_cand.push_back(harness_of(*reply));
      if (ms < wall.timed) host_ms = reply_field(reply->header, "host_ms", 0.0);
      wall.add_timed(ms);
      // The commitment, then two secret calls' outputs checked against it and the task.
      const auto fps = reply->header.value("fingerprints", nlohmann::json());
      std::vector<int> picks(static_cast<std::size_t>(n_wall));
      std::iota(picks.begin(), picks.end(), 0);
      std::shuffle(picks.begin(), picks.end(), rng);
      picks.resize(std::min<std::size_t>(picks.size(), 2));
      auto fail_commit = [&](int k, std::string why) {
        unreturned(timing.rechecks, k, wseed + static_cast<std::uint64_t>(k), "wall", std::move(why));
      };
      if (!fps.is_array() || static_cast<int>(fps.size()) != n_wall) {
        fail_commit(picks.front(), "the wall-clock request's reply did not commit to its " + std::to_string(n_wall) +
                                       " outputs");
        continue;
      }
      nlohmann::json indices = nlohmann::json::array();
      for (int k : picks) indices.push_back(k);
      auto fetched = candidate_request({{"op", "wall_output"}, {"indices", indices}}, "while returning wall-check outputs");
      if (!fetched) return;
      note_tampered(fetched->header);
      const auto outs = fetched->header.value("outputs", nlohmann::json::array());
      nlohmann::json items = nlohmann::json::array();
      for (std::size_t j = 0; j < picks.size(); ++j) {
        const int k = picks[j];
        if (!outs.is_array() || j >= outs.size() || !outs[j].is_object()) {
          fail_commit(k, "the candidate's process did not return this wall-check output");
          continue;
        }
        items.push_back({{"index", k}, {"seed", wseed + static_cast<std::uint64_t>(k)},
                         {"fingerprint", fps[static_cast<std::size_t>(k)]}, {"output", outs[j]}});
      }
      if (!items.empty() && !recheck(timing.rechecks, items, fetched->blobs, "wall", 0, "wall_check/rechecks")) return;
      // GPU: the fetched outputs were copied by the reference (devicecopy.py): dropped before its
      // calibration and baselines run.
      if (gpu && !candidate_request({{"op", "release"}}, "while releasing its rechecked outputs")) return;
    }
    // Inconclusive on the GPU (the calls' share below 5% of the request): once more with 10x
    // the calls.
    if (wall.conclusive(gpu) || attempt == 1 || !gpu) break;
    const int more = cap_calls(std::min(n_wall * 10, std::max(n_wall, 2000)));
    if (more == n_wall) break;
    n_wall = more;
  }
  // The reference worker outlives the task: its output arena (CPU, up to about 2 GiB) goes.
  if (!gpu && !ask_reference({{"op", "settle"}, {"release", true}}, {}, eo.timeouts.reference_s, m)) return;
  add_unique(timing.foreign_gpu_processes, gpu_holders);
  if (!gpu && cpu_wall_ms > 0) {
    timing.wall_check_cores = cpu_threads();
    timing.wall_check_cpu_source = grouped_requests == cpu_requests ? "cgroup" : grouped_requests ? "partial" : "proc";
    timing.wall_check_cpu_ms = cpu_used_ms;
    timing.wall_check_cpu_wall_ms = cpu_wall_ms;
  }
  timing.wall_check_calls = n_wall;
  timing.wall_check_calibrations_ms = wall.calibrations;
  timing.wall_check_own_calibrations_ms = own_calibration.calibrations;
  timing.wall_check_timed_ms = wall.timeds;
  timing.wall_check_ms = gpu ? runner::candidate_calls_ms(wall, own_calibration) : wall.calls_ms(false);
  // The baselines' floors (GPU): the lesser per call of the supervisor's measure and the
  // reference's own loop (runner::baseline_floor_per_call says why).
  for (int b = 0; gpu && b < 2; ++b) {
    auto& rec = b == 0 ? m.eager_timing : m.compile_timing;
    if (!baseline_ok[b] || !rec) continue;
    // Skipped (it cannot bind): the own loop's figure stays the floor. It does not raise the
    // baseline's time, but the judge compares it with a candidate taken by its own floor (one
    // basis); zeroed, that candidate kept the floor factor's 10% over a GPU-bound baseline.
    if (!baseline_floor[b]) continue;
    const double own = rec->wall_check_calls > 0 ? rec->wall_check_ms / rec->wall_check_calls : 0.0;
    const double per_call = runner::baseline_floor_per_call(baseline_wall[b], n_wall, own);
    rec->wall_check_calls = per_call > 0 ? n_wall : 0;
    rec->wall_check_timed_ms = baseline_wall[b].timeds;
    rec->wall_check_ms = per_call * n_wall;
  }
  timing.wall_check_spread_ms = gpu ? 0.0 : wall.resolution();
  timing.wall_check_upper_ms = gpu ? 0.0 : wall.upper();
  // CPU: the busy clock when every reading worked: the wall clock without the time the worker
  // waited for a CPU (other processes' load drops out: under ctest -j2 the wall clock gave an
  // honest ReLU 3.9 ms per call against its 0.28 ms), with the time it was blocked (on a helper)
  // kept in and the other processes' CPU time added. CPU time alone missed work done in
  // helpers retired before their first 10 ms tick while the worker slept on a pipe (rt9: 1.5x
  // on matmul); the lesser of two clocks kept the downward noise of either (2.7x).
  bool cpu_busy = false;
  if (!gpu && cpu.calibrations.size() == wall.calibrations.size() && cpu.timeds.size() == wall.timeds.size() &&
      std::all_of(cpu.calibrations.begin(), cpu.calibrations.end(), [](double x) { return x >= 0; }) &&
      std::all_of(cpu.timeds.begin(), cpu.timeds.end(), [](double x) { return x >= 0; })) {
    timing.wall_check_ms = cpu.calls_ms(false);
    timing.wall_check_spread_ms = cpu.resolution();
    timing.wall_check_upper_ms = cpu.upper();
    timing.wall_check_clock = "busy";
    cpu_busy = true;
  } else if (!gpu) {
    timing.wall_check_clock = "wall";  // (the supervisor's, whatever the candidate's reply said)
  }
  timing.wall_check_host_ms = host_ms;
  // CPU: the baselines' records of the same check, on the clock the candidate's used, and
  // every side's paired differences for the judge's like-for-like comparison. A baseline whose
  // busy reading failed where the candidate's worked gets no pairs (the judge then keeps the
  // one-sided rule): the candidate is never moved off the busy clock, which charges its helpers.
  if (!gpu) {
    const bool all_busy = cpu_busy;
    const runner::WallCheckSeries& cal = all_busy ? cpu : wall;
    // Each baseline's series: its requests against the candidate's calibrations, on the same
    // clock; none where its busy reading failed or it did not serve every request.
    std::optional<runner::WallCheckSeries> sides[2];
    for (int b = 0; b < 2; ++b) {
      if (all_busy && std::any_of(baseline_timed_busy[b].begin(), baseline_timed_busy[b].end(),
                                  [](double x) { return x < 0; }))
        continue;
      const auto& rec = b == 0 ? m.eager_timing : m.compile_timing;
      const auto& timeds = all_busy ? baseline_timed_busy[b] : baseline_timed_wall[b];
      if (!baseline_ok[b] || !rec || baseline_wall_missing[b] || timeds.size() != cal.timeds.size()) continue;
      runner::WallCheckSeries side;
      side.clear();
      for (double x : cal.calibrations) side.add_calibration(x);
      for (double x : timeds) side.add_timed(x);
      sides[b] = std::move(side);
    }
    // Every side's pairs without its own work outside the calls, as its process measured it
    // (runner::without_harness_work), or no side's: the sides stay like for like.
    std::vector<double> moved[3];
    std::optional<std::vector<double>> pairs[3];
    pairs[2] = runner::without_harness_work(cal, harness_cal, harness_cand, &moved[2]);
    bool harness_all = pairs[2].has_value();
    for (int b = 0; b < 2 && harness_all; ++b) {
      if (!sides[b]) continue;
      pairs[b] = runner::without_harness_work(*sides[b], harness_cal, harness_base[b], &moved[b]);
      harness_all = pairs[b].has_value();
    }
    timing.wall_check_paired_ms = harness_all ? *pairs[2] : cal.differences();
    timing.wall_check_harness_ms = harness_all ? moved[2] : std::vector<double>{};
    for (int b = 0; b < 2; ++b) {
      if (!sides[b]) continue;
      auto& rec = b == 0 ? m.eager_timing : m.compile_timing;
      const runner::WallCheckSeries& side = *sides[b];
      rec->wall_check_calls = n_wall;
      rec->wall_check_ms = side.calls_ms(false);
      rec->wall_check_spread_ms = side.resolution();
      rec->wall_check_upper_ms = side.upper();
      rec->wall_check_clock = all_busy ? "busy" : "wall";
      rec->wall_check_calibrations_ms = wall.calibrations;
      rec->wall_check_timed_ms = baseline_timed_wall[b];
      rec->wall_check_paired_ms = harness_all ? *pairs[b] : side.differences();
      rec->wall_check_harness_ms = harness_all ? moved[b] : std::vector<double>{};
    }
  }
  m.phase_ms["wall_check"] += ms_since(wall_began);
  // Launch accounting (D7, D14), last: the kernels of a few calls on the GPU; on the CPU, under
  // strict and hybrid, the ATen ops they dispatch (the judge rejects compute ops under strict).
  // It comes after the timing and the wall check because a profiler session leaves CUPTI
  // attached to the process (Kineto does not finalize it), which made every later launch slower
  // (H200: the ReLU's back-to-back calls took 0.24 ms instead of 0.06 ms). The profiler's
  // start-up (seconds, CPU) runs outside the device lock; the traced calls run under it.
  LaunchRecord launch;
  if (worker_device == "cpu" && eo.policy_profile != policy::Profile::strict &&
      eo.policy_profile != policy::Profile::hybrid) {
    launch.skipped = "cpu: no kernel trace";
  } else {
    nlohmann::json tseeds = nlohmann::json::array();
    for (int i = 0; i < 3; ++i) tseeds.push_back(fresh_seed());
    if (worker_device != "cpu") {
      const auto warm_began = clock::now();
      device_lock.unlock();
      auto warmed = candidate_request({{"op", "warm_profiler"}}, "while the profiler started");
      device_lock.lock();
      m.phase_ms["profiler_start"] += ms_since(warm_began);
      if (!warmed) return;
      // Every aten operator's kernels against the snapshot (about 0.1 s, outside the lock).
      note_tampered(warmed->header);
    }
    const auto trace_began = clock::now();
    std::optional<Message> tr;
    {
      QuietDevice quiet(quiet_mutex, bystanders);
      tr = candidate_request({{"op", "trace"}, {"seeds", tseeds}}, "while traced");
    }
    m.phase_ms["trace"] += ms_since(trace_began);
    if (!tr) return;
    try {
      tr->header.at("launch").get_to(launch);
    } catch (const std::exception& e) {
      launch = LaunchRecord{};
      launch.skipped = std::string("malformed trace reply: ") + e.what();
    }
  }
  m.launch = launch;
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
  auto r = impl_->ask_reference({{"op", "probe_task"}, {"source", task.source}, {"task_id", task.id}, {"scale", scale}},
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
