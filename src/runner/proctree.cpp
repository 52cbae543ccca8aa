#include "proctree.hpp"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <system_error>

namespace kgym::runner {
namespace fs = std::filesystem;

namespace {

struct ProcEntry {
  pid_t ppid = 0;
  pid_t pgrp = 0;
};

/// pid -> parent and process group of every process /proc lists now.
std::map<pid_t, ProcEntry> process_table() {
  std::map<pid_t, ProcEntry> table;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream f(e.path() / "stat");
    std::string stat;
    if (!std::getline(f, stat)) continue;
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %ld %ld", &state, &ppid, &pgrp) != 3) continue;
    table[static_cast<pid_t>(std::stol(name))] = {static_cast<pid_t>(ppid), static_cast<pid_t>(pgrp)};
  }
  return table;
}

std::map<pid_t, std::vector<pid_t>> children_of(const std::map<pid_t, ProcEntry>& table) {
  std::map<pid_t, std::vector<pid_t>> children;
  for (const auto& [pid, e] : table) children[e.ppid].push_back(pid);
  return children;
}

/// `top` (when `with_top`) and every process below it, not descending into `skip`s.
void collect_below(const std::map<pid_t, std::vector<pid_t>>& children, pid_t top, const std::set<pid_t>& skip,
                   bool with_top, std::vector<pid_t>& out) {
  std::vector<pid_t> todo = {top};
  std::set<pid_t> seen;
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    if ((p != top && skip.count(p)) || !seen.insert(p).second) continue;
    if (p != top || with_top) out.push_back(p);
    if (auto it = children.find(p); it != children.end())
      for (pid_t c : it->second) todo.push_back(c);
  }
}

/// The candidate's own process group (each worker gets one); -1 when it is the supervisor's.
pid_t candidate_group(pid_t root) {
  pid_t group = ::getpgid(root);
  return group == ::getpgrp() ? -1 : group;
}

std::string comm_of(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/comm");
  std::string s;
  std::getline(f, s);
  return s;
}

/// The open files of `pid` whose path starts with `prefix`: fd number -> path.
std::map<int, std::string> device_fds(pid_t pid, const std::string& prefix) {
  std::map<int, std::string> out;
  std::error_code ec;
  for (const auto& fd : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::error_code lec;
    const std::string target = fs::read_symlink(fd.path(), lec).string();
    if (lec || target.rfind(prefix, 0) != 0) continue;
    try {
      out[std::stoi(fd.path().filename().string())] = target;
    } catch (const std::exception&) {
    }
  }
  return out;
}

/// 1 when fd `a` of `pa` and fd `b` of `pb` are one open file description (kcmp KCMP_FILE: what a
/// fork shares), 0 when not, -1 when the kernel cannot say.
int same_description(pid_t pa, int a, pid_t pb, int b) {
#ifdef SYS_kcmp
  const long r = ::syscall(SYS_kcmp, pa, pb, 0 /* KCMP_FILE */, a, b);
  if (r == 0) return 1;
  if (r > 0) return 0;
  return -1;
#else
  (void)pa, (void)a, (void)pb, (void)b;
  return -1;
#endif
}

/// Whether `pid` maps a file whose path starts with `prefix` (a CUDA context maps /dev/nvidia*;
/// the driver's mappings are not copied into a fork).
bool maps_device(pid_t pid, const std::string& prefix) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(f, line)) {
    const auto slash = line.find('/');
    if (slash != std::string::npos && line.compare(slash, prefix.size(), prefix) == 0) return true;
  }
  return false;
}

}  // namespace

std::vector<pid_t> pausable_processes(pid_t root, pid_t zygote, pid_t keep) {
  const auto table = process_table();
  const auto children = children_of(table);
  std::vector<pid_t> out;
  const pid_t group = candidate_group(root);
  for (const auto& [pid, e] : table)
    if (group > 1 && e.pgrp == group && pid != root) out.push_back(pid);
  collect_below(children, root, {}, true, out);
  if (zygote > 1) collect_below(children, zygote, {keep}, false, out);
  const pid_t self = ::getpid();
  std::erase_if(out, [&](pid_t p) { return p <= 1 || p == self || p == zygote || p == keep; });
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> foreign_gpu_holders(pid_t root, pid_t zygote, const std::set<pid_t>& workers,
                                             bool with_root, const std::string& device_prefix) {
  const auto table = process_table();
  const auto children = children_of(table);
  std::vector<pid_t> mine;
  const pid_t group = candidate_group(root);
  for (const auto& [pid, e] : table)
    if (group > 1 && e.pgrp == group) mine.push_back(pid);
  collect_below(children, root, {}, with_root, mine);
  if (zygote > 1) {
    std::set<pid_t> skip = workers;
    skip.erase(root);
    collect_below(children, zygote, skip, false, mine);
  }
  std::sort(mine.begin(), mine.end());
  mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
  std::vector<std::string> found;
  const pid_t self = ::getpid();
  // The worker's own descriptions: a child forked from the worker shares them without having a
  // context of its own (CUDA cannot be used after a fork), so only files it opened itself count.
  const auto root_fds = with_root ? std::map<int, std::string>{} : device_fds(root, device_prefix);
  for (pid_t p : mine) {
    if (p == root ? !with_root : (p <= 1 || p == self || p == zygote || workers.count(p))) continue;
    // A context maps the device; a process that only opened it (an NVML query), or a child
    // forked before the worker's context existed, does not (seen on the H200: children forked
    // at import held /dev/nvidiactl that the worker had since closed).
    if (!maps_device(p, device_prefix)) continue;
    for (const auto& [fd, target] : device_fds(p, device_prefix)) {
      bool inherited = false, unknown = false;
      for (const auto& [rfd, rtarget] : root_fds) {
        if (rtarget != target) continue;
        const int same = same_description(root, rfd, p, fd);
        if (same == 1) inherited = true;
        if (same < 0) unknown = true;
        if (inherited) break;
      }
      // Without kcmp, a file it shares by path with the worker is taken for inherited.
      if (inherited || unknown) continue;
      found.push_back("pid " + std::to_string(p) + " (" + comm_of(p) + ") holds " + target);
      break;
    }
  }
  return found;
}

PausedTree::PausedTree(pid_t root, pid_t zygote, pid_t keep) {
  if (root <= 1 || root == ::getpid()) return;
  for (int pass = 0; pass < 16; ++pass) {
    bool found = false;
    for (pid_t p : pausable_processes(root, zygote, keep))
      if (std::find(pids_.begin(), pids_.end(), p) == pids_.end() && ::kill(p, SIGSTOP) == 0) {
        pids_.push_back(p);
        found = true;
      }
    if (!found && pass >= 1) break;
  }
}

PausedTree::~PausedTree() {
  for (pid_t p : pids_) ::kill(p, SIGCONT);
}

}  // namespace kgym::runner
