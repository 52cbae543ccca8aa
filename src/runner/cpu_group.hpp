#pragma once
// CPU accounting of one candidate's processes by a control group (Linux cgroups). Internal to
// the runner component.

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace kgym::runner {

/// A control group holding one candidate worker and everything it forks, for the CPU time of
/// all of them: the kernel charges every task in the group as it runs, so the total counts
/// processes that exited, were reaped by anyone or by the kernel itself (a parent that ignores
/// SIGCHLD), or lived between two /proc snapshots. The /proc sums of tree_cpu_ms saw none of
/// those: red team rt11 (session 8) handed each wall-check request to a helper process that
/// exited, auto-reaped, before the request's end, and got 2.1x to 2.5x on matmul against an
/// honest 0.62x to 0.73x.
///
/// Uses cgroup v1's cpuacct hierarchy (cpuacct.usage, ns) where it is mounted, else the cgroup
/// v2 hierarchy (cpu.stat usage_usec) below the supervisor's own group; both need kgym to be
/// allowed to create groups there (root, or a delegated subtree). The candidate cannot leave the
/// group where it cannot write to the cgroup file system: on the CPU its writes are confined to
/// its work folders (Landlock, python/kgym_worker/zygote.py). When no group can be made, ok() is
/// false and why() says why; the caller falls back to /proc (docs/timing.md, "Known limits").
/// KGYM_CPU_CGROUP=0 in the supervisor's environment turns groups off (the fallback's test).
class CpuGroup {
 public:
  /// Makes the group `kgym-<supervisor pid>-<pid>` and moves process `pid` into it. Call it
  /// before the process runs candidate code (its children made before would stay outside).
  explicit CpuGroup(pid_t pid);
  /// Removes the group when it is empty (retried for up to 0.5 s while the worker's processes
  /// exit); a group that stays busy is left, and the next kgym removes it once its supervisor
  /// is gone (as it removes those of a kgym killed before its destructors ran).
  ~CpuGroup();
  CpuGroup(const CpuGroup&) = delete;
  CpuGroup& operator=(const CpuGroup&) = delete;

  bool ok() const { return !dir_.empty(); }
  const std::string& why() const { return why_; }
  /// The processes in the group now (cgroup.procs), whatever their parent, session or process
  /// group: a double-forked, setsid orphan stays the candidate's (the disk guard's holders, red
  /// teams rt20 and rt21). Empty when there is no group.
  std::vector<pid_t> procs() const;
  /// Kills every process in the group (cgroup v2's cgroup.kill, then SIGSTOP and SIGKILL to each
  /// member listed, for up to 0.5 s). The destructor calls it: a dead worker's processes that
  /// fork and let their parents exit in a loop outran the zygote's pid sweep (red team rt23).
  void kill_all() const;
  /// CPU time (ms, user + system) charged to the group since it was made; -1 when unavailable.
  /// Read while the group's processes are stopped for an exact figure: the kernel updates a
  /// running task's charge at its scheduler events (ticks, switches).
  double usage_ms() const;

 private:
  std::filesystem::path dir_;
  bool v2_ = false;
  std::string why_;
};

}  // namespace kgym::runner
