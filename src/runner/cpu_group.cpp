#include "cpu_group.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <fstream>
#include <thread>

namespace kgym::runner {
namespace fs = std::filesystem;

namespace {

/// The cgroup v2 path of this process ("0::/path" in /proc/self/cgroup), "" when none.
std::string own_v2_path() {
  std::ifstream f("/proc/self/cgroup");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  return "";
}

/// Writes `text` to an existing file (a cgroup control file); false with errno set on failure.
bool write_file(const fs::path& file, const std::string& text) {
  std::ofstream f(file);
  if (!f) return false;
  f << text;
  f.flush();
  return static_cast<bool>(f);
}

/// Removes the empty groups that supervisors no longer running left below `parent` (a kgym
/// killed before its destructors ran); once per process.
void sweep_stale(const fs::path& parent) {
  static std::once_flag once;
  std::call_once(once, [&] {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(parent, ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("kgym-", 0) != 0) continue;
      const long owner = std::strtol(name.c_str() + 5, nullptr, 10);
      if (owner > 1 && ::kill(static_cast<pid_t>(owner), 0) != 0 && errno == ESRCH) ::rmdir(e.path().c_str());
    }
  });
}

}  // namespace

CpuGroup::CpuGroup(pid_t pid) {
  if (const char* off = std::getenv("KGYM_CPU_CGROUP"); off && std::string(off) == "0") {
    why_ = "control groups turned off (KGYM_CPU_CGROUP=0)";
    return;
  }
  fs::path parent;
  std::error_code ec;
  if (fs::exists("/sys/fs/cgroup/cpuacct/cpuacct.usage", ec)) {
    parent = "/sys/fs/cgroup/cpuacct";
  } else if (fs::exists("/sys/fs/cgroup/cgroup.controllers", ec)) {
    parent = fs::path("/sys/fs/cgroup") / fs::path(own_v2_path()).relative_path();
    v2_ = true;
  } else {
    why_ = "no cgroup cpuacct (v1) or cgroup v2 hierarchy mounted at /sys/fs/cgroup";
    return;
  }
  sweep_stale(parent);
  const fs::path dir = parent / ("kgym-" + std::to_string(::getpid()) + "-" + std::to_string(pid));
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    why_ = "cannot make the control group " + dir.string() + ": " + std::strerror(errno);
    return;
  }
  if (!write_file(dir / "cgroup.procs", std::to_string(pid))) {
    why_ = "cannot move process " + std::to_string(pid) + " into " + dir.string() + ": " + std::strerror(errno);
    ::rmdir(dir.c_str());
    return;
  }
  dir_ = dir;
  if (usage_ms() < 0) {
    why_ = "cannot read the CPU usage of " + dir.string();
    ::rmdir(dir.c_str());  // fails while the worker is inside; then it is left, unused
    dir_.clear();
  }
}

CpuGroup::~CpuGroup() {
  if (dir_.empty()) return;
  kill_all();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  while (::rmdir(dir_.c_str()) != 0 && errno == EBUSY && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

void CpuGroup::kill_all() const {
  if (dir_.empty()) return;
  if (v2_) {  // cgroup v2 (Linux 5.14+): the kernel kills every member at once, forks included
    std::ofstream f(dir_ / "cgroup.kill");
    f << "1";
  }
  // Without cgroup.kill (or where it failed): stop, then kill, every member, until none is left
  // (a member's children join the group, so a forking process cannot get away by new pids).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  for (;;) {
    const auto members = procs();
    if (members.empty() || std::chrono::steady_clock::now() >= deadline) return;
    for (int sig : {SIGSTOP, SIGKILL})
      for (pid_t p : members)
        if (p > 1 && p != ::getpid()) ::kill(p, sig);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::vector<pid_t> CpuGroup::procs() const {
  std::vector<pid_t> pids;
  if (dir_.empty()) return pids;
  std::ifstream f(dir_ / "cgroup.procs");
  long pid = 0;
  while (f >> pid) pids.push_back(static_cast<pid_t>(pid));
  return pids;
}

double CpuGroup::usage_ms() const {
  if (dir_.empty()) return -1;
  if (!v2_) {
    std::ifstream f(dir_ / "cpuacct.usage");
    double ns = 0;
    if (!(f >> ns)) return -1;
    return ns / 1e6;
  }
  std::ifstream f(dir_ / "cpu.stat");
  std::string key;
  double value = 0;
  while (f >> key >> value)
    if (key == "usage_usec") return value / 1e3;
  return -1;
}

}  // namespace kgym::runner
