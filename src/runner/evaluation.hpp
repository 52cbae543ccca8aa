#pragma once
// One evaluation as a list of phases (engine.cpp's Engine::Impl::run): the state the engine's
// evaluations share (EngineState: the zygote, the reference worker, the device locks), the state
// of one evaluation's timing (TimingRun), and the phases, each in its own file (phase_*.cpp).
// Internal to the runner component.

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
#include <shared_mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "channel.hpp"
#include "cpu_group.hpp"
#include "disk_guard.hpp"
#include "kgym/engine.hpp"
#include "proctree.hpp"
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

  explicit EngineState(EngineOptions o);
  /// The workers stop first; then the temporary work folder goes (engine.cpp says why).
  ~EngineState();

  std::map<std::string, std::string> base_env(const std::filesystem::path& dir) const;
  /// The reference worker, (re)started if needed. Caller holds device_mutex.
  Worker& reference_worker();
  /// Sends a request to the reference worker; a failure of the trusted side is a task failure.
  std::optional<Message> ask_reference(const nlohmann::json& req, const std::vector<Blob>& blobs,
                                       double timeout_s, Measurements& m);
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

/// A seed from the OS's entropy, below 2^63.
std::uint64_t random_seed();
/// The timing options as a worker's request carries them.
nlohmann::json timing_json(const TimingOptions& t);
/// Copies the reference side's comparison statistics into a case record (never the candidate's).
void apply_comparison(const nlohmann::json& h, CaseRecord& cr);
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
  /// Only strings are taken (the reply is the candidate's).
  void note_tampered(const nlohmann::json& header);
  /// While the candidate's calls are timed or traced: the other candidates' workers stopped, the
  /// candidate's own tree and the reference (as it is now: it may have been restarted) running.
  std::vector<pid_t> bystanders() const;
  /// While the reference times: the candidate's tree stopped too (PausedTree's set).
  std::vector<pid_t> all_but_reference() const;
  /// A request to the candidate's worker; nullopt (with the crash or timeout recorded) when it
  /// failed.
  std::optional<Message> candidate_request(const nlohmann::json& req, const char* what);
  /// A recheck that could not be compared (the output was not returned, or not committed to): a
  /// contract violation of that call.
  static void unreturned(std::vector<CaseRecord>& into, int index, std::uint64_t seed, const char* transform,
                         std::string why);
  /// The reference compares `items` ({index, seed, output[, fingerprint]}, bytes in `blobs`) with
  /// the task on inputs regenerated from each seed; the results go to `into`, indices + `offset`.
  /// False when the reference failed (the evaluation cannot go on).
  bool recheck(std::vector<CaseRecord>& into, const nlohmann::json& items, const std::vector<Blob>& blobs,
               const char* transform, int offset, const std::string& phase);
};

/// The timing phase (phase_timing.cpp), once every case passed: the timing rounds (the
/// candidate's timed calls with their rechecks and spot check, and the baselines', alternating
/// which side goes first), then the wall check and the trace. Records m.candidate_timing,
/// m.eager_timing, m.compile_timing and m.launch; a crash or timeout into m.crash or
/// m.timed_out_stage.
void time_phase(TimingRun& t);
/// The wall-clock cross-check (D7; phase_wall_check.cpp), after the timing rounds, onto
/// m.candidate_timing and the baselines' records. False when the evaluation ended in it (a
/// crash, a timeout, a reference failure): nothing runs after it then.
bool wall_check(TimingRun& t);
/// Launch accounting (D7, D14; phase_trace.cpp), last: into m.launch.
void trace_launches(TimingRun& t);

}  // namespace kgym::runner
