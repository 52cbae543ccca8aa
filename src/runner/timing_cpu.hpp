#pragma once
// The timing CPU (GPU devices): while an evaluation times, the candidate's worker and the
// reference worker run on one and the same CPU, so that the host work each side's clock holds
// (launches, input generation, the wall check's requests) runs at one speed.
// Internal to the runner component; Linux only.

#include <sched.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace kgym::runner {

/// The CPUs this process may run on (sched_getaffinity), ascending; empty when it cannot be read.
std::vector<int> allowed_cpus();

/// The CPU a device's timing runs on, from `setting` (KGYM_TIMING_CPU: "auto" or empty, "off", or a
/// CPU number) and the CPUs this process may run on: "auto" takes the last allowed CPU for device
/// ordinal 0, the one before it for ordinal 1, and so on (engines of several GPUs on one host time
/// on different CPUs), and none where fewer than 4 CPUs are allowed (two pinned workers would then
/// share a CPU with the supervisor and every build) or for a CPU device (`ordinal` < 0). A number
/// must be an allowed CPU. Throws Error(usage) naming the setting for anything else.
std::optional<int> choose_timing_cpu(const std::string& setting, const std::vector<int>& allowed, int ordinal);

/// The device ordinal of a worker device name: "cuda" 0, "cuda:N" N, anything else (the CPU) -1.
int device_ordinal(const std::string& device);

/// Sets every thread of each process in `pids` (/proc/<pid>/task) to run on `cpu` alone while it
/// lives, and gives each back the mask its main thread had before (threads started meanwhile
/// too) when it goes. A process or thread that exits meanwhile is skipped. Why: on the H100 (a
/// 16-CPU KVM guest) a fresh worker process did the wall check's own work (no calls) in 74 to
/// 121 us per iteration unpinned, varying by process and steady within one, and in 74.3 to 75.8
/// us pinned to one CPU (bench/h100/session24); the wall check subtracts the reference's
/// calibration from the candidate's requests, so a candidate process on the slow side paid the
/// difference as its calls' time (a renamed reference read 0.39x to 1.31x of eager at x0.1).
/// The candidate may move its own threads (sched_setaffinity on itself is allowed): that only
/// gives up the steady CPU; its other workers are stopped while it is timed.
class PinnedToCpu {
 public:
  PinnedToCpu(std::vector<pid_t> pids, int cpu);
  ~PinnedToCpu();
  PinnedToCpu(const PinnedToCpu&) = delete;
  PinnedToCpu& operator=(const PinnedToCpu&) = delete;
  /// Threads set to the CPU when it was made (0: nothing pinned, e.g. no permission).
  int threads() const { return threads_; }
  /// Processes of which at least one thread was set to the CPU.
  int processes() const { return static_cast<int>(saved_.size()); }

 private:
  struct Saved {
    pid_t pid;
    cpu_set_t mask;
  };
  std::vector<Saved> saved_;
  int threads_ = 0;
};

/// Waits, up to `max_ms`, until the main thread of `pid` sleeps (state S in /proc/<pid>/stat: a
/// worker waiting for its next request); true when it does, false on the deadline or when it
/// cannot be read. On the timing CPU a worker's own work after its reply (a garbage collection,
/// releasing device memory: protocol.serve) would otherwise run on the CPU the other side's next
/// timed request runs on, and count as that side's time.
bool wait_until_sleeping(pid_t pid, double max_ms);

/// Takes `cpu` out of the CPUs every thread of this process may run on (threads and processes it
/// starts later inherit it: the zygote and every worker), so that among kgym's processes only the
/// pair PinnedToCpu puts there runs on the timing CPU. Nothing when `cpu` is the only one left.
void keep_off_cpu(int cpu);

/// Sets every thread of `pid` to `mask` (sched_setaffinity per thread id); returns how many took it.
int set_threads_affinity(pid_t pid, const cpu_set_t& mask);

}  // namespace kgym::runner
