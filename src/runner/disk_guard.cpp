#include "disk_guard.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <charconv>
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

FolderUsage folder_usage(const std::vector<fs::path>& roots, std::uintmax_t stop_after) {
  FolderUsage u;
  std::set<std::pair<dev_t, ino_t>> seen;  // a hard link inside the folders counts once
  auto add = [&](const fs::path& p) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return;  // vanished meanwhile
    ++u.entries;
    if (st.st_nlink > 1 && !S_ISDIR(st.st_mode) && !seen.insert({st.st_dev, st.st_ino}).second) return;
    u.bytes += static_cast<std::uintmax_t>(st.st_blocks) * 512;
  };
  for (const auto& root : roots) {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(root, ec))) continue;
    add(root);
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      add(it->path());
      if (u.entries > stop_after) return u;
    }
  }
  return u;
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
                                   "free space there (or point --work-dir / KGYM_CACHE_DIR elsewhere) and judge it again"};
  }
  return std::nullopt;
}

void release_folders(const std::vector<fs::path>& folders, const fs::path& log, std::uintmax_t log_keep_bytes) {
  std::error_code ec;
  for (const auto& folder : folders) {
    for (const auto& e : fs::directory_iterator(folder, ec)) {
      std::error_code ec2;
      if (!fs::equivalent(e.path(), log, ec2)) fs::remove_all(e.path(), ec2);
    }
  }
  // The candidate could have replaced its log by a symbolic link to a file of kgym's: opened
  // without following links, and only a regular file is cut (the supervisor is not sandboxed).
  const int fd = ::open(log.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    fs::remove(log, ec);  // a link (ELOOP) or something else: not a log kgym wrote
    return;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::uintmax_t>(st.st_size) <= log_keep_bytes) {
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

DiskGuard::DiskGuard(std::vector<fs::path> folders, DiskLimits limits, std::function<void()> on_breach)
    : folders_(std::move(folders)), limits_(limits), on_breach_(std::move(on_breach)) {
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
    const FolderUsage u = folder_usage(folders_, limits_.quota_entries);
    if (u.bytes > limits_.quota_bytes || u.entries > limits_.quota_entries) {
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
