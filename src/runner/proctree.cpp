#include "proctree.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <mutex>
#include <cstdlib>
#include <sstream>
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

/// The candidate's processes, `root` (its worker) among them: those below `root` or in its
/// process group, and those below `zygote` that are neither a worker in `workers` nor below one
/// (orphans re-parented to the child subreaper). Sorted, no duplicates.
std::vector<pid_t> candidate_processes(pid_t root, pid_t zygote, const std::set<pid_t>& workers) {
  const auto table = process_table();
  const auto children = children_of(table);
  std::vector<pid_t> mine;
  const pid_t group = candidate_group(root);
  for (const auto& [pid, e] : table)
    if (group > 1 && e.pgrp == group) mine.push_back(pid);
  collect_below(children, root, {}, true, mine);
  if (zygote > 1) {
    std::set<pid_t> skip = workers;
    skip.erase(root);
    collect_below(children, zygote, skip, false, mine);
  }
  std::sort(mine.begin(), mine.end());
  mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
  return mine;
}

/// One open file of a process that is a GPU device.
struct DeviceFd {
  int fd = -1;
  std::string path;  ///< as /proc shows it (for the message only: a chroot changes it)
  dev_t dev = 0;     ///< the node's identity, which no mount or chroot changes
  ino_t ino = 0;
};

/// The open files of `pid` that `is_device` accepts (stat through /proc/PID/fd/N: the file itself,
/// whatever path it was opened by). `readable` is false when /proc denies the list (a process
/// that made itself non-dumpable, when kgym is not root).
std::vector<DeviceFd> device_fds(pid_t pid, const DevicePredicate& is_device, bool& readable) {
  std::vector<DeviceFd> out;
  readable = true;
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    readable = !(ec == std::errc::permission_denied || ec == std::errc::operation_not_permitted);
    return out;
  }
  for (const auto& entry : it) {
    struct stat st {};
    if (::stat(entry.path().c_str(), &st) != 0 || !is_device(st)) continue;
    DeviceFd d;
    try {
      d.fd = std::stoi(entry.path().filename().string());
    } catch (const std::exception&) {
      continue;
    }
    std::error_code lec;
    d.path = fs::read_symlink(entry.path(), lec).string();
    d.dev = st.st_dev;
    d.ino = st.st_ino;
    out.push_back(std::move(d));
  }
  return out;
}

/// 1 when fd `a` of `pa` and fd `b` of `pb` are one open file description (kcmp KCMP_FILE: what a
/// fork shares), 0 when not, -1 when this kernel has no kcmp, -2 when it was denied.
int same_description(pid_t pa, int a, pid_t pb, int b) {
#ifdef SYS_kcmp
  const long r = ::syscall(SYS_kcmp, pa, pb, 0 /* KCMP_FILE */, a, b);
  if (r == 0) return 1;
  if (r > 0) return 0;
  return errno == EPERM || errno == EACCES ? -2 : -1;
#else
  (void)pa, (void)a, (void)pb, (void)b;
  return -1;
#endif
}

/// Whether `pid` maps one of `files`: same device and inode (the dev and inode columns of
/// /proc/PID/maps), or the same path as /proc renders it for the fd (both are rendered from the
/// reader's root, so a chroot changes both alike). A CUDA context maps /dev/nvidiactl and
/// /dev/nvidiaN. -1 when unreadable.
int maps_any(pid_t pid, const std::vector<DeviceFd>& files) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/maps");
  if (!f) return ::access(("/proc/" + std::to_string(pid)).c_str(), F_OK) == 0 ? -1 : 0;
  std::string line;
  while (std::getline(f, line)) {
    char range[128], perms[8], offset[32], dev[32];
    unsigned long long inode = 0;
    if (std::sscanf(line.c_str(), "%127s %7s %31s %31s %llu", range, perms, offset, dev, &inode) != 5 || inode == 0)
      continue;
    unsigned maj = 0, min = 0;
    if (std::sscanf(dev, "%x:%x", &maj, &min) != 2) continue;
    const dev_t d = ::makedev(maj, min);
    const auto slash = line.find('/');
    const std::string path = slash == std::string::npos ? std::string() : line.substr(slash);
    for (const auto& file : files)
      if ((file.ino == static_cast<ino_t>(inode) && file.dev == d) || (!path.empty() && path == file.path)) return 1;
  }
  return 0;
}

/// The character-device majors named "nvidia*" in /proc/devices (nvidia, nvidia-uvm, ...).
std::set<unsigned> nvidia_majors() {
  std::set<unsigned> majors;
  std::ifstream f("/proc/devices");
  std::string line;
  bool chars = false;
  while (std::getline(f, line)) {
    if (line.rfind("Character", 0) == 0) chars = true;
    else if (line.rfind("Block", 0) == 0) chars = false;
    unsigned major = 0;
    char name[64];
    if (chars && std::sscanf(line.c_str(), "%u %63s", &major, name) == 2 && std::string(name).rfind("nvidia", 0) == 0)
      majors.insert(major);
  }
  return majors;
}

}  // namespace

std::vector<pid_t> own_processes(pid_t root, const std::set<pid_t>& workers, pid_t reference,
                                 const std::vector<pid_t>& group) {
  std::set<pid_t> skip = workers;  // the reference and what is below it are never the candidate's (rt20)
  if (reference > 1) skip.insert(reference);
  std::vector<pid_t> own = candidate_processes(root, 0, skip);
  own.insert(own.end(), group.begin(), group.end());
  std::sort(own.begin(), own.end());
  own.erase(std::unique(own.begin(), own.end()), own.end());
  return own;
}

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

std::vector<pid_t> bystander_processes(pid_t zygote, const std::set<pid_t>& keep) {
  std::vector<pid_t> out;
  if (zygote <= 1) return out;
  const auto children = children_of(process_table());
  collect_below(children, zygote, keep, false, out);
  const pid_t self = ::getpid();
  std::erase_if(out, [&](pid_t p) { return p <= 1 || p == self || p == zygote || keep.count(p) > 0; });
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

DevicePredicate nvidia_devices() {
  std::set<unsigned> majors = nvidia_majors();
  majors.insert(195);  // the NVIDIA driver's fixed major (/dev/nvidiaN, /dev/nvidiactl)
  return [majors](const struct stat& st) { return S_ISCHR(st.st_mode) && majors.count(major(st.st_rdev)) > 0; };
}

std::vector<std::string> foreign_gpu_holders(pid_t root, pid_t zygote, const std::set<pid_t>& workers,
                                             pid_t reference, bool with_root, const DevicePredicate& is_device) {
  const std::vector<pid_t> mine = own_processes(root, workers, reference);
  std::vector<std::string> found;
  const pid_t self = ::getpid();
  std::optional<std::map<pid_t, ProcEntry>> table;  // read for a holder's parent only (rare)
  auto name = [&](pid_t p) {
    if (!table) table = process_table();
    const auto e = table->find(p);
    return "pid " + std::to_string(p) + " (" + comm_of(p) +
           (e != table->end() ? ", parent " + std::to_string(e->second.ppid) : std::string()) + ")";
  };
  // The worker's own descriptions: a child forked from the worker shares them without having a
  // context of its own (CUDA cannot be used after a fork), so only files it opened itself count.
  bool root_readable = true;
  const auto root_fds = with_root ? std::vector<DeviceFd>{} : device_fds(root, is_device, root_readable);
  for (pid_t p : mine) {
    if (p == root ? !with_root : (p <= 1 || p == self || p == zygote || workers.count(p) || p == reference)) continue;
    bool readable = true;
    const auto fds = device_fds(p, is_device, readable);
    if (!readable) {  // it hid its files from kgym (not dumpable): no way to tell, so it counts
      found.push_back(name(p) + " does not let kgym read its open files");
      continue;
    }
    if (fds.empty()) continue;
    // A context maps the device; a process that only opened it (an NVML query), or a child
    // forked before the worker's context existed, does not (seen on the H200: children forked
    // at import held /dev/nvidiactl that the worker had since closed).
    const int maps = maps_any(p, fds);
    if (maps < 0) {
      found.push_back(name(p) + " does not let kgym read its memory map");
      continue;
    }
    if (maps == 0) continue;
    for (const auto& d : fds) {
      bool inherited = false, denied = false;
      for (const auto& r : root_fds) {
        if (r.dev != d.dev || r.ino != d.ino) continue;
        const int same = same_description(root, r.fd, p, d.fd);
        inherited = inherited || same == 1 || same == -1;  // without kcmp: shared by identity = inherited
        denied = denied || same == -2;
        if (inherited) break;
      }
      if (inherited) continue;
      found.push_back(name(p) + (denied ? " does not let kgym compare its files with the worker's: " : " holds ") +
                      d.path);
      break;
    }
  }
  return found;
}

namespace {
/// utime + stime (+ cutime + cstime with `reaped`) of `pid`, in clock ticks; 0 when gone.
double cpu_ticks(pid_t pid, bool own, bool reaped) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(f, stat)) return 0;
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream in(stat.substr(close + 2));
  std::string field;
  double t[4] = {0, 0, 0, 0};
  for (int i = 3; i <= 17 && (in >> field); ++i)  // fields 14..17: utime stime cutime cstime
    if (i >= 14) t[i - 14] = std::strtod(field.c_str(), nullptr);
  return (own ? t[0] + t[1] : 0) + (reaped ? t[2] + t[3] : 0);
}
}  // namespace

double process_cpu_ms(pid_t pid) {
  clockid_t clock;
  timespec ts{};
  if (pid <= 0 || ::clock_getcpuclockid(pid, &clock) != 0 || ::clock_gettime(clock, &ts) != 0) return -1;
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double runqueue_wait_ms(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/schedstat");
  double run_ns = 0, wait_ns = 0;
  if (!(f >> run_ns >> wait_ns)) return -1;
  return wait_ns / 1e6;
}

double main_thread_run_ms(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/schedstat");
  double run_ns = 0;
  if (!(f >> run_ns)) return -1;
  return run_ns / 1e6;
}

double tree_cpu_ms(pid_t root, pid_t zygote, const std::set<pid_t>& workers, bool precise) {
  const std::vector<pid_t> mine = candidate_processes(root, zygote, workers);
  const double ms_per_tick = 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
  double ms = 0;
  for (pid_t p : mine) {
    if (p <= 1 || p == ::getpid() || p == zygote || (p != root && workers.count(p))) continue;
    const double own = precise ? process_cpu_ms(p) : -1;
    ms += own >= 0 ? own + cpu_ticks(p, false, true) * ms_per_tick : cpu_ticks(p, true, true) * ms_per_tick;
  }
  if (zygote > 1) ms += cpu_ticks(zygote, false, true) * ms_per_tick;
  return ms;
}

std::vector<std::string> unreaping_processes(pid_t root, pid_t zygote, const std::set<pid_t>& workers) {
  std::vector<std::string> lines;
  for (pid_t p : candidate_processes(root, zygote, workers)) {
    if (p <= 1 || p == ::getpid() || p == zygote || (p != root && workers.count(p))) continue;
    std::ifstream f("/proc/" + std::to_string(p) + "/status");
    std::string line;
    while (std::getline(f, line)) {
      if (line.rfind("SigIgn:", 0) != 0) continue;
      const unsigned long long mask = std::strtoull(line.c_str() + 7, nullptr, 16);
      if (mask & (1ULL << (SIGCHLD - 1)))
        lines.push_back("pid " + std::to_string(p) + " (" + comm_of(p) + ") ignores SIGCHLD");
      break;
    }
  }
  return lines;
}

int kill_below(pid_t top, const std::set<pid_t>& spare, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  const pid_t self = ::getpid();
  int total = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto children = children_of(process_table());
    std::vector<pid_t> doomed;
    collect_below(children, top, spare, false, doomed);
    std::erase_if(doomed, [&](pid_t p) { return p <= 1 || p == self || spare.count(p); });
    if (doomed.empty()) break;
    for (int sig : {SIGSTOP, SIGKILL})
      for (pid_t p : doomed) ::kill(p, sig);
    if (auto it = children.find(self); it != children.end())
      for (pid_t p : it->second)
        if (std::find(doomed.begin(), doomed.end(), p) != doomed.end()) ::waitpid(p, nullptr, 0);
    total += static_cast<int>(doomed.size());
  }
  return total;
}

namespace {
/// The stop ledger: per pid, how many PausedTrees hold it stopped, since when, and the time of
/// the stops that ended (ms).
struct StopEntry {
  int depth = 0;
  std::chrono::steady_clock::time_point since{};
  double total_ms = 0;
};
std::mutex stop_ledger_mutex;
std::map<pid_t, StopEntry> stop_ledger;

void ledger_stop(pid_t pid) {
  std::lock_guard lock(stop_ledger_mutex);
  StopEntry& e = stop_ledger[pid];
  if (e.depth++ == 0) e.since = std::chrono::steady_clock::now();
}

void ledger_continue(pid_t pid) {
  std::lock_guard lock(stop_ledger_mutex);
  auto it = stop_ledger.find(pid);
  if (it == stop_ledger.end() || it->second.depth <= 0) return;
  if (--it->second.depth == 0)
    it->second.total_ms +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - it->second.since).count();
}
}  // namespace

double stopped_ms(pid_t pid) {
  std::lock_guard lock(stop_ledger_mutex);
  auto it = stop_ledger.find(pid);
  if (it == stop_ledger.end()) return 0;
  double ms = it->second.total_ms;
  if (it->second.depth > 0)
    ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - it->second.since).count();
  return ms;
}

PausedTree::PausedTree(pid_t root, pid_t zygote, pid_t keep)
    : PausedTree([&]() -> std::vector<pid_t> {
        if (root <= 1 || root == ::getpid()) return {};
        return pausable_processes(root, zygote, keep);
      }) {}

PausedTree::PausedTree(const std::function<std::vector<pid_t>()>& scan) {
  for (int pass = 0; pass < 16; ++pass) {
    bool found = false;
    for (pid_t p : scan())
      if (std::find(pids_.begin(), pids_.end(), p) == pids_.end() && ::kill(p, SIGSTOP) == 0) {
        pids_.push_back(p);
        ledger_stop(p);
        found = true;
      }
    if (!found && pass >= 1) break;
  }
  await_stopped(kStopLimitMs);
}

namespace {
/// True when every thread of `pid` is stopped (T/t), exiting (Z/X) or gone.
bool all_threads_stopped(pid_t pid) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(e.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;  // the thread is gone
    const auto close = line.rfind(')');
    if (close == std::string::npos || close + 2 >= line.size()) continue;
    const char state = line[close + 2];
    if (state != 'T' && state != 't' && state != 'Z' && state != 'X') return false;
  }
  return true;
}
}  // namespace

void PausedTree::await_stopped(double limit_ms) {
  using clock = std::chrono::steady_clock;
  auto wait_for = [&](double ms) {
    const auto deadline = clock::now() + std::chrono::duration<double, std::milli>(ms);
    std::vector<pid_t> running;
    do {
      running.clear();
      for (pid_t p : pids_)
        if (!all_threads_stopped(p)) running.push_back(p);
      if (running.empty()) break;
      ::usleep(500);
    } while (clock::now() < deadline);
    return running;
  };
  for (pid_t p : wait_for(limit_ms)) {
    std::string comm;
    std::ifstream(fs::path("/proc") / std::to_string(p) / "comm") >> comm;
    ::kill(p, SIGKILL);
    killed_.push_back(std::to_string(p) + " (" + comm + ")");
  }
  if (!killed_.empty()) wait_for(limit_ms);
}

PausedTree::~PausedTree() { release(); }

void PausedTree::release() {
  for (pid_t p : pids_) {
    ::kill(p, SIGCONT);
    ledger_continue(p);
  }
  pids_.clear();
}

namespace {

/// True when `p` is a regular file that starts with an ELF header of a shared object (ET_DYN).
bool is_shared_object(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  unsigned char h[18] = {};
  if (!f.read(reinterpret_cast<char*>(h), sizeof h)) return false;
  if (!(h[0] == 0x7f && h[1] == 'E' && h[2] == 'L' && h[3] == 'F')) return false;
  const bool little = h[5] == 1;
  const unsigned type = little ? (h[16] | (h[17] << 8)) : ((h[16] << 8) | h[17]);
  return type == 3;  // ET_DYN
}

bool below(const fs::path& p, const std::vector<fs::path>& folders) {
  for (const fs::path& f : folders) {
    const std::string a = p.lexically_normal().string(), b = f.lexically_normal().string();
    if (a.size() > b.size() && a.compare(0, b.size(), b) == 0 && (b.back() == '/' || a[b.size()] == '/')) return true;
  }
  return false;
}

}  // namespace

std::vector<CandidateObject> candidate_objects(const std::vector<fs::path>& folders, pid_t pid, std::string* note) {
  std::vector<fs::path> roots;  // canonical: /proc shows the canonical paths
  for (const fs::path& f : folders) {
    std::error_code ec;
    const fs::path c = fs::weakly_canonical(f, ec);
    roots.push_back(ec ? f : c);
  }
  std::map<fs::path, CandidateObject> found;
  for (const fs::path& folder : roots) {
    std::error_code ec;
    fs::recursive_directory_iterator it(folder, fs::directory_options::skip_permission_denied, ec), end;
    for (int seen = 0; !ec && it != end && seen < 10000; it.increment(ec), ++seen) {
      std::error_code ec2;
      if (it->is_regular_file(ec2) && !it->is_symlink(ec2) && is_shared_object(it->path()))
        found[it->path()].path = it->path();
    }
  }
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  bool any = false;
  while (std::getline(maps, line)) {
    any = true;
    // address perms offset dev(major:minor, hex) inode path
    std::istringstream ls(line);
    std::string addr, perms, offset, dev;
    unsigned long long inode = 0;
    if (!(ls >> addr >> perms >> offset >> dev >> inode) || inode == 0) continue;
    std::string path;
    std::getline(ls >> std::ws, path);
    bool deleted = false;
    if (const std::string tag = " (deleted)"; path.size() > tag.size() && path.ends_with(tag)) {
      deleted = true;
      path.resize(path.size() - tag.size());
    }
    if (path.empty() || path[0] != '/' || !below(path, roots)) continue;
    CandidateObject& o = found[path];
    o.path = path;
    o.loaded = true;
    struct stat st {};
    unsigned maj = 0, min = 0;
    std::sscanf(dev.c_str(), "%x:%x", &maj, &min);
    if (deleted || ::stat(path.c_str(), &st) != 0 || st.st_ino != inode || major(st.st_dev) != maj ||
        minor(st.st_dev) != min)
      o.replaced = true;
  }
  if (!any && note) *note = "the memory map of process " + std::to_string(pid) + " could not be read; only files were checked";
  std::vector<CandidateObject> out;
  for (auto& [p, o] : found) out.push_back(std::move(o));
  return out;
}

std::optional<fs::path> mapped_object_dir(pid_t pid, std::string_view file_name) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(maps, line);) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    const fs::path path(line.substr(slash));
    if (path.filename() == file_name) return path.parent_path();
  }
  return std::nullopt;
}

}  // namespace kgym::runner
