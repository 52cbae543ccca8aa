#pragma once
// One evaluation as a list of phases (engine.cpp's Engine::Impl::run): the state the engine's
// evaluations share (EngineState: the zygote, the reference worker, the device locks), the state
// of one evaluation (Evaluation) and of its timing (TimingRun), and the phases, each in its own
// file (phase_*.cpp), in the order they run: load, link check, cases, timing (rounds, wall
// check, trace), clean-up. Internal to the runner component.

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <semaphore>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "channel.hpp"
#include "cpu_group.hpp"
#include "disk_guard.hpp"
#include "kgym/engine.hpp"
#include "kgym/verdict.hpp"
#include "proctree.hpp"
#include "protocol.hpp"
#include "workers.hpp"

namespace kgym::runner {

/// What the engine's evaluations share: its options, folders, the zygote, the reference worker
/// and the locks that order the evaluations on the device. Engine::Impl is one.
struct EngineState {
  EngineOptions options;
  std::string worker_device;  ///< the device as a worker sees it ("cpu" / "cuda:0")
  std::string visible_gpu;    ///< CUDA_VISIBLE_DEVICES for workers, "" on cpu
  std::filesystem::path work_dir, cache_dir;
  bool own_work_dir = false;  // made here (mkdtemp): removed with the engine unless KGYM_KEEP_WORK=1
  std::unique_ptr<Zygote> zygote;
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
  DiskLimits disk_limits = DiskLimits::from_env();  ///< per candidate (KGYM_DISK_*)
  /// GPU: the CPU both workers run on while an evaluation times (runner::PinnedToCpu,
  /// KGYM_TIMING_CPU); none on the CPU device or where it is off.
  std::optional<int> timing_cpu;

  explicit EngineState(EngineOptions o);
  /// The workers stop first; then the temporary work folder goes (engine.cpp says why).
  ~EngineState();

  std::map<std::string, std::string> base_env(const std::filesystem::path& dir) const;
  /// The reference worker, (re)started if needed. Caller holds device_mutex.
  Worker& reference_worker();
  /// Sends a request (protocol.hpp) to the reference worker; a failure of the trusted side
  /// (ReferenceStatus not ok, a death, a timeout) is a task failure.
  template <protocol::Message R>
  std::optional<Message> ask_reference(const R& req, const std::vector<Blob>& blobs, double timeout_s,
                                       Measurements& m) {
    return ask_reference(nlohmann::json(req), std::string(R::kOp), blobs, timeout_s, m);
  }
  template <protocol::Message R>
  std::optional<Message> ask_reference(const protocol::Encoded<R>& req, const std::vector<Blob>& blobs,
                                       double timeout_s, Measurements& m) {
    return ask_reference(req.header, std::string(R::kOp), blobs, timeout_s, m);
  }
  /// The same with the request's header and its op.
  std::optional<Message> ask_reference(const nlohmann::json& header, const std::string& op,
                                       const std::vector<Blob>& blobs, double timeout_s, Measurements& m);
  /// Has the reference worker drop its task `key`, where it is alive (a worker that fails to is
  /// restarted on the next request).
  void drop_reference_task(const std::string& key);
};

/// What one evaluation times, undisturbed by the others (H200, 2026-12-01: the eager baseline of
/// a 256x256 matmul read 0.158 ms instead of 0.03 while other candidates of a --jobs run loaded,
/// and a candidate that precomputed its timed outputs passed 2.41x on it): the processes `scan`
/// names are stopped (runner::PausedTree), and `quiet` is held exclusively so that no candidate
/// worker is spawned meanwhile (a spawn holds it shared; a worker started after the scan would
/// run beside the timing). Other evaluations' loads and builds only wait.
class QuietDevice {
 public:
  QuietDevice(std::shared_mutex& quiet, const std::function<std::vector<pid_t>()>& scan);

 private:
  std::unique_lock<std::shared_mutex> lock_;
  PausedTree paused_;  // (declared after the lock: continued before the lock is released)
};

/// A seed from the OS's entropy, below 2^63.
std::uint64_t random_seed();
/// The timing options as a worker's request carries them.
protocol::TimingSettings timing_settings(const TimingOptions& t);
/// Copies the reference side's comparison statistics into a case record (never the candidate's).
void apply_comparison(const protocol::Comparison& h, CaseRecord& cr);
/// Appends one round's timing to the merged record of its kind (engine.cpp says how).
void merge_round(std::optional<TimingRecord>& into, TimingRecord r);
/// Appends each of `lines` to `into` unless it is there already (findings collected over several
/// looks at the candidate's processes).
void add_unique(std::vector<std::string>& into, const std::vector<std::string>& lines);
/// KGYM_KEEP_WORK: keep the work folder's files (1, true, yes) or not (unset, 0, false, no).
bool keep_work();
/// KGYM_CPU_THREADS: torch's thread count in CPU workers, a whole number from 1 to 1024 (default 1).
int cpu_threads();
/// Checks every KGYM_* setting the workers read, before any starts (a bad value is
/// Error(usage) naming it).
void check_worker_environment();
/// A crash of the candidate's process: how it ended and when.
Failure process_failure(const ExitStatus& st, std::string message);

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

/// The state of one evaluation (Engine::Impl::run): the candidate's worker and its folders, what
/// the phases measured, and what the verdict's messages need. The phases take it in turn.
struct Evaluation {
  EngineState& engine;
  const Task& task;
  const Candidate& cand;
  const EvalOptions& eo;
  Measurements m;
  int n = 0;  ///< this evaluation's number: its work folder's, its reference task key's
  SpawnSpec spec;                                   ///< the candidate's worker
  std::filesystem::path build_dir;                  ///< its build cache folder
  std::vector<std::filesystem::path> disk_folders;  ///< its folders, under the disk quota
  // CPU: the candidate's processes in a control group of their own, for the CPU time of all of
  // them in the wall check (runner::CpuGroup; declared first so that it outlives the worker).
  std::optional<CpuGroup> cpu_group;
  std::unique_ptr<Worker> cw;           ///< the candidate's worker, once started
  std::optional<DiskGuard> disk_guard;  // after cw: stops before the worker is reaped
  int zygote_deaths = 0;                ///< zygote->deaths() when the worker started
  nlohmann::json candidate_parameters, reference_parameters;  // parameters.py's lists, for a message
  nlohmann::json tolerances = nlohmann::json::object();       ///< per dtype, {atol, rtol}
  nlohmann::json scaled;                ///< the task's scaled constants, as the reference loaded it
  JudgeOptions jo;                      ///< the judge's options, with the policy profile
  std::string held_key;  // the reference's task, dropped when the evaluation is cut short
  std::set<std::string> link_checked;   ///< the shared objects the link check has read

  Evaluation(EngineState& e, const Task& t, const Candidate& c, const EvalOptions& options);
  /// Kills worker `w` and records the crash, `what` saying why.
  void died(Worker& w, const std::string& what);
  /// The candidate loaded, and nothing has ended the evaluation.
  bool loaded_cleanly() const { return m.load.ok && !m.crash && !m.timed_out_stage && !m.task_failure; }
};

/// Load (phase_load.cpp), first: starts the candidate's worker in its folders, under the disk
/// guard. False when it could not start (m.task_failure says why): nothing else runs then.
bool start_candidate(Evaluation& ev);
/// Load: the candidate loaded (and built) in its worker, into m.load; a task failure it reports
/// is believed only when the reference cannot load the task either.
void load_candidate(Evaluation& ev);
/// Gate 2's link check (phase_link_check.cpp): what each shared object the candidate built
/// imports, into m.link. Run after the load and again before the verdict.
void link_check(Evaluation& ev);
/// Whether the link check rejected the candidate.
bool link_rejected(const Evaluation& ev);
/// Cases (phase_cases.cpp): the reference loads the task under `key` (the caller holds the
/// device lock). False when it failed (m.task_failure says why).
bool load_reference_task(Evaluation& ev, const std::string& key, PhaseClock& phase);
/// Cases: the secret correctness cases, the trivial-answer audit's and the other shape's, into
/// m.cases and m.audit. False when the evaluation cannot go on (crash, timeout, reference
/// failure).
bool run_cases(Evaluation& ev, const std::string& key, PhaseClock& phase);
/// The state of one evaluation's timing phase: the candidate's worker, the reference's task, the
/// records the rounds merge and the wall check adds to, and the requests both make.
struct TimingRun {
  using clock = std::chrono::steady_clock;
  EngineState& engine;
  Worker& c;                       ///< the candidate's worker
  const std::string& key;          ///< the reference's task
  const EvalOptions& eo;
  Measurements& m;
  const nlohmann::json& tolerances;
  std::unique_lock<std::mutex>& device_lock;  ///< held; the trace lets it go while the profiler starts
  const CpuGroup* cpu_group;       ///< the candidate's control group (CPU), or null
  /// CPU: the baseline twin eager is timed in (start_baseline_twin), or null: eager in the reference
  Worker* twin = nullptr;
  std::mt19937_64 rng{random_seed()};
  /// Processes of the candidate other than its worker that hold the GPU, looked for while its
  /// tree is stopped (before each baseline and each calibration): a second CUDA context runs
  /// kernels that no trace sees and shares the GPU with the reference's measurements (red team
  /// rt5). On a CPU run the worker itself must not hold it either.
  std::vector<std::string> gpu_holders{};
  std::optional<TimingRecord> cand{}, eager{}, compiled{};  ///< merged over the rounds

  static double ms_since(clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  }
  std::uint64_t fresh_seed() { return rng() & ((1ULL << 63) - 1); }
  void note_gpu_holders();
  /// What the candidate's harness found in a wall request (replaced loop functions, an output in
  /// an input's storage; the full fingerprint in the untimed requests) or when the profiler
  /// started: as a timed call's, a contract violation (red team rt24), onto m.candidate_timing.
  /// Only strings are taken (the reply is the candidate's: the field is lenient).
  void note_tampered(const std::vector<std::string>& tampered);
  /// While the candidate's calls are timed or traced: the other candidates' workers stopped, the
  /// candidate's own tree and the reference (as it is now: it may have been restarted) running.
  std::vector<pid_t> bystanders() const;
  /// While the reference times: the candidate's tree stopped too (PausedTree's set).
  std::vector<pid_t> all_but_reference() const;
  /// The processes to stop while the twin is timed: the candidate's and the bystanders (the
  /// reference, idle meanwhile, runs on).
  std::vector<pid_t> all_but_twin() const;
  /// A twin that failed (`why`): logged and dropped; eager is timed in the reference from then on.
  void drop_twin(const std::string& why);
  /// A request (protocol.hpp) to the candidate's worker; nullopt (with the crash or timeout
  /// recorded) when it failed or its harness reported an error (CandidateStatus).
  template <protocol::Message R>
  std::optional<Message> candidate_request(const R& req, const char* what) {
    return candidate_request(nlohmann::json(req), what);
  }
  template <protocol::Message R>
  std::optional<Message> candidate_request(const protocol::Encoded<R>& req, const char* what) {
    return candidate_request(req.header, what);
  }
  std::optional<Message> candidate_request(const nlohmann::json& header, const char* what);
  /// On the timing CPU (GPU): waits, up to 50 ms, until the reference worker sleeps, so that its
  /// work after its last reply does not run on the CPU of the candidate's next request
  /// (runner::wait_until_sleeping). candidate_request does it first; a clock that holds the
  /// request calls it before the clock starts. Nothing without a timing CPU.
  void reference_settled();
  /// A recheck that could not be compared (the output was not returned, or not committed to): a
  /// contract violation of that call.
  static void unreturned(std::vector<CaseRecord>& into, int index, std::uint64_t seed, const char* transform,
                         std::string why);
  /// The reference compares `items` (bytes in `blobs`) with the task on inputs regenerated from
  /// each seed; the results go to `into`, indices + `offset`. False when the reference failed
  /// (the evaluation cannot go on).
  bool recheck(std::vector<CaseRecord>& into, const std::vector<protocol::RecheckItem>& items,
               const std::vector<Blob>& blobs, const char* transform, int offset, const std::string& phase);
};

/// The timing phase (phase_timing.cpp), once every case passed: the timing rounds (the
/// candidate's timed calls with their rechecks and spot check, and the baselines', alternating
/// which side goes first), then the wall check and the trace. Records m.candidate_timing,
/// m.eager_timing, m.compile_timing and m.launch; a crash or timeout into m.crash or
/// m.timed_out_stage.
/// Whether eager is timed in a baseline twin: on the CPU device unless KGYM_BASELINE_TWIN=0.
bool baseline_twin_enabled(const EngineState& engine);

/// The baseline twin (CPU; docs/timing.md "Same path for candidate and baselines"): a worker
/// started for one evaluation exactly as the candidate's is (a zygote fork with the candidate's
/// role: its sandbox, its loader, its timing and wall-check requests), loaded with the task's own
/// `Model` renamed `ModelNew`, under the same init seed and scale. Eager's timed calls and its
/// side of the CPU wall check run there: the candidate's process and the long-lived reference
/// differed by themselves (a renamed reference read 0.95x to 0.98x median against eager in the
/// reference on the 2-core CPU, bench/cpu/session26_baseline_twin.md), and two processes on the
/// same path differ only by chance.
struct TwinStart {
  std::unique_ptr<Worker> worker;  ///< null when it could not start or load (then `why` says why)
  std::string why;
  double ms = 0;  ///< the start and load (ms)
};

/// Starts and loads the twin of evaluation number `n` (its folder: work_dir/twin-<n>). Safe to
/// run on another thread while the evaluation goes on (it touches no Measurements). A twin that
/// cannot start or load is never the candidate's failure: eager is then timed in the reference.
TwinStart start_baseline_twin(EngineState& engine, const Task& task, const EvalOptions& eo, std::uint64_t init_seed,
                              int n, long long address_space_bytes);
/// Kills and reaps the twin of evaluation `n` and removes its folder (unless KGYM_KEEP_WORK).
void finish_baseline_twin(EngineState& engine, std::unique_ptr<Worker> twin, int n);

void time_phase(TimingRun& t);
/// The wall-clock cross-check (D7; phase_wall_check.cpp), after the timing rounds, onto
/// m.candidate_timing and the baselines' records. False when the evaluation ended in it (a
/// crash, a timeout, a reference failure): nothing runs after it then.
bool wall_check(TimingRun& t);
/// Launch accounting (D7, D14; phase_trace.cpp), last: into m.launch.
void trace_launches(TimingRun& t);

/// Clean-up (phase_cleanup.cpp): the candidate's worker, processes and folders released; a disk
/// breach or the zygote's death recorded.
void clean_up(Evaluation& ev);
/// The verdict on what the phases measured, with the parameter rule's message.
Verdict verdict_of(const Evaluation& ev);

}  // namespace kgym::runner
