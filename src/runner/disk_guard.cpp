#include "disk_guard.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <algorithm>
#include <cstdlib>
#include <set>

#include "kgym/error.hpp"

namespace fs = std::filesystem;

namespace kgym::runner {
namespace {

std::string mib(std::uintmax_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

std::uintmax_t env_number(const char* name, std::uintmax_t fallback, std::uintmax_t unit) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  std::uintmax_t n = 0;
  const std::string s(v);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size())
    throw Error(ErrorKind::usage, std::string(name) + "='" + s + "' is not a whole number; unset it or give one, e.g. " +
                                      name + "=" + std::to_string(fallback / unit));
  return n * unit;
}

std::string joined(const std::vector<fs::path>& folders) {
  std::string s;
  for (const auto& f : folders) s += (s.empty() ? "" : ", ") + f.string();
  return s;
}

}  // namespace

namespace {

using Seen = std::set<std::pair<dev_t, ino_t>>;

/// Adds `st` (an entry below the folders) to `u`; a file with several links counts once.
void count(const struct stat& st, FolderUsage& u, Seen& seen) {
  ++u.entries;
  if (st.st_nlink > 1 && !S_ISDIR(st.st_mode) && !seen.insert({st.st_dev, st.st_ino}).second) return;
  u.bytes += static_cast<std::uintmax_t>(st.st_blocks) * 512;
}

/// Walks the directory open at `fd` (taken over) by descriptors (fstatat / openat relative to
/// it: no path grows, so nothing hides below PATH_MAX; red team rt18 hid 2.5 GB below a 6000
/// character path from a walk by path names, which took ENAMETOOLONG for a vanished entry).
void walk(int fd, int depth, const std::string& where, std::uintmax_t stop_after, int max_depth, FolderUsage& u,
          Seen& seen) {
  DIR* d = ::fdopendir(fd);
  if (!d) {
    u.unmeasured = "cannot read the folder " + where + ": " + std::strerror(errno);
    ::close(fd);
    return;
  }
  errno = 0;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;  // removed meanwhile
      u.unmeasured = "cannot read " + where + "/" + name + ": " + std::strerror(errno);
      break;
    }
    count(st, u, seen);
    if (u.entries > stop_after) break;
    if (!S_ISDIR(st.st_mode)) continue;
    if (depth + 1 > max_depth) {
      u.unmeasured = "folders nested deeper than " + std::to_string(max_depth) + " levels below " + where;
      break;
    }
    const int child = ::openat(::dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (child < 0) {
      if (errno == ENOENT) continue;
      u.unmeasured = "cannot open " + where + "/" + name + ": " + std::strerror(errno);
      break;
    }
    walk(child, depth + 1, depth < 3 ? where + "/" + name : where, stop_after, max_depth, u, seen);
    if (!u.unmeasured.empty() || u.entries > stop_after) break;
  }
  ::closedir(d);
}

/// Whether the file system holding `path` (followed) keeps its files in memory (tmpfs, ramfs,
/// hugetlbfs: /dev/shm, memfd): memory limits bound those, not the disk quota.
bool in_memory(const std::string& path) {
  struct statfs s {};
  if (::statfs(path.c_str(), &s) != 0) return false;
  return s.f_type == TMPFS_MAGIC || s.f_type == RAMFS_MAGIC || s.f_type == HUGETLBFS_MAGIC;
}

/// Limits of one pass over the holders' open files: red team rt20 held 8 million descriptors in
/// 400 processes, and a pass took tens of seconds while 800 MiB came and went unseen.
constexpr std::size_t kMaxDescriptors = 65536;
constexpr double kMaxPassSeconds = 5.0;

/// The threads of `pid` other than its main thread (/proc/PID/task).
std::vector<pid_t> other_threads(pid_t pid) {
  std::vector<pid_t> tids;
  DIR* tasks = ::opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
  if (!tasks) return tids;
  while (dirent* t = ::readdir(tasks))
    if (t->d_name[0] >= '0' && t->d_name[0] <= '9' && std::atol(t->d_name) != pid)
      tids.push_back(static_cast<pid_t>(std::atol(t->d_name)));
  ::closedir(tasks);
  return tids;
}

/// Whether thread `tid` of `pid` has a descriptor table of its own (it called
/// unshare(CLONE_FILES): /proc/PID/fd shows the main thread's table only; red team rt20 held
/// 300 MiB there), by kcmp KCMP_FILES; true where kcmp is missing.
bool own_fd_table(pid_t pid, pid_t tid) {
#ifdef SYS_kcmp
  return ::syscall(SYS_kcmp, pid, tid, 2 /* KCMP_FILES */, 0, 0) != 0;
#else
  (void)pid, (void)tid;
  return true;
#endif
}

/// Walks the deleted regular files (not in memory) that `pid` holds open or mapped, calling
/// `found(link, stat)` for each; `prefixes` serve the fallback without map_files (not root).
/// Returns why they could not all be seen, or "".
std::string held_deleted(pid_t pid, const std::vector<std::string>& prefixes, std::size_t& descriptors,
                         const std::chrono::steady_clock::time_point& deadline,
                         const std::function<void(const std::string&, const struct stat&, std::uintmax_t)>& found) {
  const std::string base = "/proc/" + std::to_string(pid);
  auto deleted = [](const std::string& link, const struct stat& st) {
    return S_ISREG(st.st_mode) && st.st_nlink == 0 && !in_memory(link);
  };
  const std::vector<pid_t> threads = other_threads(pid);
  std::vector<std::string> tables{base + "/fd"};
  for (pid_t tid : threads)
    if (own_fd_table(pid, tid)) tables.push_back(base + "/task/" + std::to_string(tid) + "/fd");
  for (const std::string& table : tables) {
    DIR* fds = ::opendir(table.c_str());
    if (!fds) {
      if (errno == ENOENT || errno == ESRCH) continue;  // exited meanwhile
      return "cannot read the open files of process " + std::to_string(pid) + ": " + std::strerror(errno);
    }
    while (dirent* f = ::readdir(fds)) {
      if (f->d_name[0] == '.') continue;
      if (++descriptors > kMaxDescriptors || std::chrono::steady_clock::now() > deadline) {
        ::closedir(fds);
        return "the candidate's processes hold more open files than kgym reads in one pass (" +
               std::to_string(kMaxDescriptors) + " descriptors, " + std::to_string(static_cast<int>(kMaxPassSeconds)) + " s)";
      }
      const std::string link = table + "/" + f->d_name;
      struct stat st {};
      if (::stat(link.c_str(), &st) == 0 && deleted(link, st)) found(link, st, static_cast<std::uintmax_t>(st.st_blocks) * 512);
    }
    ::closedir(fds);
  }
  // The executable: a process that unmapped all of its own pages holds its deleted program file
  // by /proc/PID/exe alone (red team rt21: 300 MiB after the program's end).
  {
    const std::string exe = base + "/exe";
    struct stat st {};
    if (::stat(exe.c_str(), &st) == 0 && deleted(exe, st)) found(exe, st, static_cast<std::uintmax_t>(st.st_blocks) * 512);
  }
  // The maps: the main thread's, else (it exited: /proc/PID/maps is empty while the other
  // threads run on; rt20 held a mapped 300 MiB file so) a living thread's. An exiting process
  // shows the same, which must not stop it: a rule that did stopped an honest candidate whose
  // helper tool exited (rt21). map_files exists for the main thread only: without it a deleted
  // file below the folders counts its mapped length.
  std::vector<std::string> sources{base};
  for (pid_t tid : threads) sources.push_back(base + "/task/" + std::to_string(tid));
  for (const std::string& source : sources) {
    std::ifstream maps(source + "/maps");
    std::string line;
    bool any = false;
    while (std::getline(maps, line)) {
      any = true;
      // "start-end perms offset major:minor inode   path"
      unsigned long long start = 0, end = 0, inode = 0;
      unsigned major = 0, minor = 0;
      int range_end = 0;
      // Only a deleted file's mapping ends so (the kernel escapes a newline in a name): the
      // thousands of a torch process's other mappings cost no stat.
      if (!line.ends_with(" (deleted)") ||
          std::sscanf(line.c_str(), "%llx-%llx%n %*s %*s %x:%x %llu", &start, &end, &range_end, &major, &minor,
                      &inode) != 5 ||
          inode == 0)
        continue;
      const std::string link = base + "/map_files/" + line.substr(0, static_cast<std::size_t>(range_end));
      struct stat st {};
      if (source == base && ::stat(link.c_str(), &st) == 0) {
        if (deleted(link, st)) found(link, st, static_cast<std::uintmax_t>(st.st_blocks) * 512);
        continue;
      }
      if (source == base && errno != EPERM && errno != EACCES) continue;  // unmapped meanwhile
      // Not root, or the leader gone: /proc shows the mapping's path, and the length mapped
      // stands for the file.
      const auto slash = line.find('/');
      if (slash == std::string::npos) continue;
      const std::string_view path = std::string_view(line).substr(slash);
      if (std::any_of(prefixes.begin(), prefixes.end(), [&](const auto& p) { return path.starts_with(p); })) {
        st = {};
        st.st_dev = makedev(major, minor);
        st.st_ino = static_cast<ino_t>(inode);
        found(link, st, end - start);
      }
    }
    if (any) break;  // every thread shares these maps: one that shows them is enough
  }
  return "";
}

/// Deleted files that the processes `holders.own` (the candidate's) still hold open or mapped:
/// they keep their disk blocks until the last holder lets go, and no walk sees them (red team
/// rt18 held 3 GB that way under a 100 MiB quota). Each counts its allocated blocks, from a stat
/// of the file itself through /proc/PID/fd/N (every descriptor table of the process) or
/// /proc/PID/map_files/RANGE (root only, else the mapped length of a file that lay below
/// `prefixes`), whatever its path: rt19 hid a file behind a one-page mapping (counted by mapped
/// length) and behind a path longer than a page (readlink lost its " (deleted)"), and made an
/// honest candidate's guard count 8 GiB for a file the red team, not the candidate, had mapped
/// (every process's maps were read then). What `holders.shared` hold never counts: a library the
/// zygote had mapped before it forked the worker, deleted by an upgrade during a run, made
/// honest candidates runtime_error (rt20).
void count_held_deleted(const Holders& holders, const std::vector<std::string>& prefixes, FolderUsage& u,
                        Seen& seen) {
  std::size_t descriptors = 0;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(kMaxPassSeconds));
  std::size_t shared_descriptors = 0;
  const auto no_deadline = std::chrono::steady_clock::time_point::max();
  for (const pid_t pid : holders.shared)
    (void)held_deleted(pid, prefixes, shared_descriptors, no_deadline,
                       [&](const std::string&, const struct stat& st, std::uintmax_t) { seen.insert({st.st_dev, st.st_ino}); });
  for (const pid_t pid : holders.own) {
    const std::string why = held_deleted(pid, prefixes, descriptors, deadline,
                                         [&](const std::string&, const struct stat& st, std::uintmax_t bytes) {
                                           if (seen.insert({st.st_dev, st.st_ino}).second) u.bytes += bytes;
                                         });
    if (!why.empty()) {
      u.unmeasured = why;
      return;
    }
  }
}

}  // namespace

FolderUsage folder_usage(const std::vector<fs::path>& roots, const Holders& holders, std::uintmax_t stop_after,
                         int max_depth) {
  FolderUsage u;
  Seen seen;
  for (const auto& root : roots) {
    const int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      if (errno != ENOENT) u.unmeasured = "cannot open " + root.string() + ": " + std::strerror(errno);
      if (!u.unmeasured.empty()) return u;
      continue;
    }
    struct stat st {};
    if (::fstat(fd, &st) == 0) count(st, u, seen);
    walk(fd, 0, root.string(), stop_after, max_depth, u, seen);
    if (!u.unmeasured.empty() || u.entries > stop_after) return u;
  }
  std::vector<std::string> prefixes;  // as the kernel prints them: without links
  for (const auto& r : roots) {
    std::error_code ec;
    const fs::path c = fs::weakly_canonical(r, ec);
    prefixes.push_back((ec ? r : c).string() + "/");
  }
  count_held_deleted(holders, prefixes, u, seen);
  return u;
}

void remove_tree(const fs::path& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (!fs::exists(fs::symlink_status(path, ec))) return;
  // Deeper than PATH_MAX (std::filesystem works by path names): GNU rm walks by descriptors.
  const std::string target = path.string();
  const char* argv[] = {"rm", "-rf", "--one-file-system", "--", target.c_str(), nullptr};
  pid_t pid = -1;
  if (::posix_spawnp(&pid, "rm", nullptr, nullptr, const_cast<char* const*>(argv), environ) == 0) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

std::optional<std::uintmax_t> free_bytes(const fs::path& path) {
  struct statvfs s {};
  if (::statvfs(path.c_str(), &s) != 0) return std::nullopt;
  return static_cast<std::uintmax_t>(s.f_bavail) * s.f_frsize;
}

DiskLimits DiskLimits::from_env() {
  DiskLimits l;
  l.quota_bytes = env_number("KGYM_DISK_QUOTA_MB", l.quota_bytes, 1ULL << 20);
  l.quota_entries = env_number("KGYM_DISK_FILES", l.quota_entries, 1);
  l.reserve_bytes = env_number("KGYM_DISK_RESERVE_MB", l.reserve_bytes, 1ULL << 20);
  l.build_keep_bytes = env_number("KGYM_BUILD_KEEP_MB", l.build_keep_bytes, 1ULL << 20);
  return l;
}

std::optional<DiskBreach> check_reserve(const std::vector<fs::path>& folders, const DiskLimits& limits) {
  for (const auto& f : folders) {
    fs::path p = f;
    std::error_code ec;
    while (!p.empty() && !fs::exists(p, ec) && p.has_parent_path() && p.parent_path() != p) p = p.parent_path();
    const auto free = free_bytes(p);
    if (free && *free < limits.reserve_bytes)
      return DiskBreach{false, "the disk holding " + p.string() + " has " + mib(*free) + " free, less than kgym's reserve of " +
                                   mib(limits.reserve_bytes) + " (KGYM_DISK_RESERVE_MB); the candidate was not judged: "
                                   "free space there (or point TMPDIR / KGYM_CACHE_DIR elsewhere) and judge it again"};
  }
  return std::nullopt;
}

void release_folders(const std::vector<fs::path>& folders, const fs::path& log, std::uintmax_t log_keep_bytes) {
  std::error_code ec;
  // The log is known by its name, not by fs::equivalent, which follows links: a log replaced by
  // a link to the build folder kept that folder as if it were the log (red team rt20, 200 MiB).
  for (const auto& folder : folders) {
    for (const auto& e : fs::directory_iterator(folder, ec))
      if (e.path() != log) remove_tree(e.path());
  }
  // The candidate could have replaced its log by a symbolic link to a file of kgym's: opened
  // without following links, and only a regular file is cut (the supervisor is not sandboxed).
  const int fd = ::open(log.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    remove_tree(log);  // a link (ELOOP), a folder (EISDIR: rt19 kept one full) or else: not a log kgym wrote
    return;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    remove_tree(log);  // a socket, a fifo or a device node: not a log kgym wrote
    return;
  }
  if (static_cast<std::uintmax_t>(st.st_size) <= log_keep_bytes) {
    ::close(fd);
    return;
  }
  const auto size = static_cast<std::uintmax_t>(st.st_size);
  std::string tail(log_keep_bytes, '\0');
  const ssize_t got = ::pread(fd, tail.data(), tail.size(), static_cast<off_t>(size - log_keep_bytes));
  tail.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  const std::string head = "[kgym: the log's first " + std::to_string(size - tail.size()) +
                           " bytes were removed with the candidate's files]\n";
  if (::ftruncate(fd, 0) == 0) {
    (void)!::pwrite(fd, head.data(), head.size(), 0);
    (void)!::pwrite(fd, tail.data(), tail.size(), static_cast<off_t>(head.size()));
  }
  ::close(fd);
}

DiskGuard::DiskGuard(std::vector<fs::path> folders, std::function<Holders()> holders, DiskLimits limits,
                     std::function<void()> on_breach)
    : folders_(std::move(folders)), holders_(std::move(holders)), limits_(limits), on_breach_(std::move(on_breach)) {
  thread_ = std::thread([this] { loop(); });
}

DiskGuard::~DiskGuard() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::optional<DiskBreach> DiskGuard::breach() const {
  std::lock_guard lock(mutex_);
  return breach_;
}

void DiskGuard::loop() {
  const auto period = std::chrono::duration<double>(limits_.period_s);
  std::unique_lock lock(mutex_);
  while (!stop_) {
    lock.unlock();
    std::optional<DiskBreach> found;
    const FolderUsage u = folder_usage(folders_, holders_ ? holders_() : Holders{}, limits_.quota_entries);
    if (!u.unmeasured.empty()) {
      found = DiskBreach{true, "kgym could not measure what the candidate wrote below " + joined(folders_) + " (" +
                                   u.unmeasured + "); it was stopped"};
    } else if (u.bytes > limits_.quota_bytes || u.entries > limits_.quota_entries) {
      found = DiskBreach{true, "the candidate wrote " + mib(u.bytes) + " in " + std::to_string(u.entries) +
                                   (u.entries > limits_.quota_entries ? "+" : "") + " files and folders below " +
                                   joined(folders_) + ", more than kgym allows a candidate (" + mib(limits_.quota_bytes) +
                                   ", " + std::to_string(limits_.quota_entries) +
                                   " entries: KGYM_DISK_QUOTA_MB, KGYM_DISK_FILES); it was stopped"};
    } else if (auto low = check_reserve(folders_, limits_)) {
      found = low;
    }
    lock.lock();
    if (found) {
      breach_ = std::move(found);
      lock.unlock();
      on_breach_();
      return;
    }
    wake_.wait_for(lock, period, [this] { return stop_; });
  }
}

}  // namespace kgym::runner
