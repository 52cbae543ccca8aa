#pragma once
// The candidate's processes as /proc shows them: which to stop while the reference measures
// (PausedTree) and which hold the GPU besides the candidate's worker (foreign_gpu_holders).
// Internal to the runner component; Linux only.

#include <sys/stat.h>
#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace kgym::runner {

/// The pids to stop while the reference measures: `root` (the candidate's worker), the processes
/// below it (by parent pid, from /proc) and its process group, and every process below `zygote`
/// except `keep` (the reference worker) and the processes below that. The zygote is a child
/// subreaper, so a child that escapes the candidate's tree and group (double fork and setsid)
/// comes back under it (red team, 2026-12-01: such hogs inflated the eager baseline 2 to 2.7x);
/// other candidates' workers there are stopped too, which only delays them. Never the zygote
/// or the supervisor. `zygote` or `keep` <= 1: none.
std::vector<pid_t> pausable_processes(pid_t root, pid_t zygote, pid_t keep);

/// The pids below `zygote` except those in `keep` and the processes below them (by parent pid,
/// from /proc), never the zygote or the supervisor: while one evaluation times its candidate,
/// the other candidates' workers (loading, building, creating CUDA contexts) and what they
/// started. `zygote` <= 1: none.
std::vector<pid_t> bystander_processes(pid_t zygote, const std::set<pid_t>& keep);

/// The processes of the candidate whose worker is `root` (its files count on disk,
/// runner::DiskGuard; its CUDA contexts, foreign_gpu_holders): `root`, those below it or in its
/// process group, never the workers in `workers` but `root`, nor `reference`, nor what is below
/// them. Plus `group`: the members of the candidate's control group (CPU,
/// runner::CpuGroup::procs), which stay its whatever their parent or session (red teams rt20 and
/// rt21). Sorted, no duplicates. The orphans re-parented to the zygote never count: a candidate's
/// worker is a child subreaper (zygote.keep_orphans), so what a living candidate started is below
/// its worker; an orphan below the zygote is a dead worker's. Session 13 counted them while one
/// candidate ran: red team rt23 then left fork-walking processes behind a worker that exited,
/// which outran the zygote's sweep and had 100 MiB of theirs counted against the honest
/// candidate left running (`runtime_error`). They are killed with the dead worker's control
/// group (CPU, CpuGroup's cgroup.kill) or by the zygote's sweep when it is reaped. Each worker
/// leads a session of its own, so no other candidate's process can join its process group (red
/// team rt20 did, with setpgid, when all workers shared one).
std::vector<pid_t> own_processes(pid_t root, const std::set<pid_t>& workers, pid_t reference,
                                 const std::vector<pid_t>& group = {});

/// Whether a file (stat of an open file) is a GPU device.
using DevicePredicate = std::function<bool(const struct stat&)>;

/// The NVIDIA character devices: majors named "nvidia*" in /proc/devices (nvidia: /dev/nvidiaN and
/// /dev/nvidiactl; nvidia-uvm; ...). Matches nothing where no NVIDIA driver is loaded.
DevicePredicate nvidia_devices();

/// The processes that belong to the candidate whose worker is `root`, other than `root` unless
/// `with_root` (a CPU run, where the worker must not hold the GPU either), that hold a CUDA
/// context of their own, one line each ("pid 123 (python3) holds /dev/nvidia0"). A context of
/// its own: the process maps one of the device files it has open (matched by device and inode,
/// not by path: a chroot or a mount namespace changes the path /proc shows, not the file), and
/// has one open that is not an open file description of the worker (kcmp KCMP_FILE; what a fork
/// of the worker shares does not count: CUDA cannot be used after a fork). A process whose open
/// files or memory map /proc will not show kgym (it made itself non-dumpable while kgym is not
/// root), or whose files kcmp may not compare, counts too. The candidate's processes are
/// own_processes(root, workers, reference): those below `root` or in its process group.
/// A candidate's worker is a child subreaper (zygote.keep_orphans), so what the candidate starts
/// stays below it even after a double fork and setsid; what is left below the zygote belongs to a
/// worker that died and counts for no one. Before, such orphans counted for whichever candidate
/// was checked: with several at once, rt5_escaped_hog's five escaped CPU hogs (their descriptors
/// inherited from their own worker) made the candidate judged beside it a `contract_violation`
/// (H200, session 14). kgym traces the kernels of
/// one CUDA context, the worker's (issue 4, launch accounting); a second context in a helper
/// process runs kernels no trace sees and shares the GPU with the reference's baselines (red team
/// rt5: an escaped process spinning kernels while the baselines were timed). Each line names the
/// process's parent.
std::vector<std::string> foreign_gpu_holders(pid_t root, pid_t zygote, const std::set<pid_t>& workers,
                                             pid_t reference, bool with_root = false,
                                             const DevicePredicate& is_device = nvidia_devices());

/// CPU time (ms: user + system, with that of reaped children) of the candidate whose worker is
/// `root`: the worker, the processes below it or in its group, the orphans re-parented to
/// `zygote` that are neither a worker in `workers` nor below one, plus the zygote's reaped
/// children (orphans that exited and were collected count there). Take it before and after a
/// measured stretch: the difference is the CPU time the candidate used in it.
/// With `precise`, each living process's own CPU time comes from its process CPU clock (ns,
/// process_cpu_ms) instead of /proc's 10 ms ticks: a red-team pool of helpers each retired
/// before its first tick hid whole matmuls from the tick sum (rt9). Reaped children stay in
/// ticks (of their summed time).
double tree_cpu_ms(pid_t root, pid_t zygote, const std::set<pid_t>& workers, bool precise = false);

/// The candidate's processes (as for tree_cpu_ms) that ignore SIGCHLD, one line each
/// ("pid 123 (python3) ignores SIGCHLD"): the kernel reaps their children at exit, and no
/// parent's child-time counters get the children's CPU time. Where no control group measures
/// the candidate (runner::CpuGroup), /proc cannot see that time: red team rt11 had each
/// wall-check request done by such a child (2.1x to 2.5x on matmul). A handler installed with
/// SA_NOCLDWAIT does the same and /proc does not show it (docs/timing.md, "Known limits").
std::vector<std::string> unreaping_processes(pid_t root, pid_t zygote, const std::set<pid_t>& workers);

/// Time (ms) the main thread of `pid` has spent runnable but waiting for a CPU (the second field
/// of /proc/<pid>/schedstat, ns); -1 when unavailable. The wall clock minus this is the time
/// the thread was running or blocked: contention from other processes drops out, while time
/// blocked on something (a pipe to a helper, a lock) stays in.
double runqueue_wait_ms(pid_t pid);

/// Time (ms) the main thread of `pid` has run on a CPU (the first field of
/// /proc/<pid>/schedstat, ns); -1 when unavailable. The process CPU clock minus this is the CPU
/// time of its other threads.
double main_thread_run_ms(pid_t pid);

/// CPU time (ms, all threads, living and exited, user + system) of process `pid` from its CPU
/// clock (clock_getcpuclockid: the kernel's accounting in ns, readable for any visible pid);
/// -1 when the clock cannot be read (no such process).
double process_cpu_ms(pid_t pid);

/// SIGKILLs every process below `top` except those in `spare` and what is below them: each pass
/// takes the tree from one snapshot of /proc and stops it (SIGSTOP: no more forks) before killing
/// it, and passes repeat until one finds nothing or `seconds` passed. Direct children of this
/// process among them are reaped. Returns how many were killed. A chain with descending pids
/// (clone3 set_tid) lost one level per pass to a sweep of direct children only (red team rt7).
int kill_below(pid_t top, const std::set<pid_t>& spare, double seconds = 10.0);

/// Time (ms) kgym has kept `pid` stopped with a PausedTree, a stop in progress included; 0 for a
/// pid never stopped. A worker's request deadline moves by what this grows during the request
/// (Worker::request): other evaluations' timing stops a loading candidate, and its load time must
/// not run out meanwhile (red team rt13: a candidate that stalled 130 s in its untimed warm-up,
/// with the others stopped, made an honest candidate's load `timeout`).
double stopped_ms(pid_t pid);

/// Stops (SIGSTOP) the processes `pausable_processes` names for its lifetime and continues them
/// after: the reference's baselines and the wall check's calibration are timed while nothing
/// the candidate started can run, and a child process spinning only then slowed them (red team,
/// 2026-12-01: 2 to 3x, also under strict). The scan repeats until a pass finds nothing new (at
/// most 16 passes), so that a process forked during a pass, or a chain that keeps re-forking,
/// is stopped too. A GPU kernel already queued by such a process keeps running: see
/// foreign_gpu_holders. Each stop is entered in the ledger `stopped_ms` reads.
/// SIGSTOP takes effect when a thread next leaves the kernel: the constructor waits until every
/// thread of every stopped process is stopped, and a process still running after
/// `kStopLimitMs` is killed (SIGKILL also ends the waits SIGSTOP sits out). Red team rt17
/// (CPU, session 11): children in a one-second madvise(MADV_POPULATE_READ) kept running through
/// the stop and slowed the eager baseline: a matmul at eager's speed passed at 1.67x.
class PausedTree {
 public:
  PausedTree(pid_t root, pid_t zygote, pid_t keep);
  /// Stops what `scan` returns, with the same repeated passes (e.g. bystander_processes).
  explicit PausedTree(const std::function<std::vector<pid_t>()>& scan);
  ~PausedTree();
  PausedTree(const PausedTree&) = delete;
  PausedTree& operator=(const PausedTree&) = delete;
  /// How long a process may take to stop before it is killed (ms).
  static constexpr double kStopLimitMs = 2000;
  /// The pids stopped.
  const std::vector<pid_t>& pids() const { return pids_; }
  /// "pid (comm)" of each process killed because it did not stop within kStopLimitMs.
  const std::vector<std::string>& killed() const { return killed_; }
  /// Continues them now (the destructor then does nothing): the CPU wall check starts its clocks
  /// before the candidate can run again.
  void release();

 private:
  void await_stopped(double limit_ms);
  std::vector<pid_t> pids_;
  std::vector<std::string> killed_;
};

/// A shared object of the candidate's making, for the link check (policy::check_linked_symbols).
struct CandidateObject {
  std::filesystem::path path;
  bool loaded = false;    ///< mapped in the process
  bool replaced = false;  ///< mapped, but the file at `path` is gone or another one (deleted, renamed over)
};

/// The ELF shared objects (e_type ET_DYN) below `folders`, not following links, at most 10000
/// entries looked at per folder; plus the ones that `pid` has mapped from below `folders` whose
/// file is gone or replaced (matched by device and inode), so a loaded extension cannot be
/// deleted or swapped before the check reads it. `folders` are the candidate's own (its working
/// folder and load_inline's build folder), where only it and its builds write. When /proc will
/// not show `pid`'s memory map, `note` says so and only the files are listed. Sorted by path.
std::vector<CandidateObject> candidate_objects(const std::vector<std::filesystem::path>& folders, pid_t pid,
                                               std::string* note = nullptr);

/// The folder of the first object `pid` has mapped whose file name is `file_name` (e.g.
/// "libtorch_cpu.so": torch's `lib` folder, for policy::torch_c_exports), or nullopt.
std::optional<std::filesystem::path> mapped_object_dir(pid_t pid, std::string_view file_name);

}  // namespace kgym::runner
