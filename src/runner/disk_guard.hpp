#pragma once
// Disk use of one candidate: a quota on what it writes below its folders, and a reserve of free
// space on the file systems that hold them. Internal to the runner component.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <sys/types.h>
#include <string>
#include <thread>
#include <vector>

namespace kgym::runner {

/// What lies below some folders: allocated bytes (st_blocks x 512, so a sparse file counts only
/// what it holds on disk) and directory entries of any kind (the inodes a candidate uses).
struct FolderUsage {
  std::uintmax_t bytes = 0;
  std::uintmax_t entries = 0;
  std::string unmeasured;  ///< non-empty: why part of the folders could not be measured
};

/// The processes whose held files a disk count reads: `own`, the candidate's (their deleted
/// files count against it), and `shared`, kgym's own (the zygote, the reference worker), whose
/// deleted files never count, even where a candidate's process holds them too (a library mapped
/// before the fork and deleted by an upgrade: red team rt20).
struct Holders {
  std::vector<pid_t> own;
  std::vector<pid_t> shared;
};

/// Walks `roots` by file descriptors (missing roots count nothing; symbolic links are counted,
/// never followed; entries that vanish during the walk are skipped) and stops once `entries`
/// passes `stop_after`, so a folder of millions of files costs one bounded walk. Adds the
/// deleted files that the processes `holders.own` still hold open (in any of their descriptor
/// tables) or mapped, wherever they lay (a candidate writes only below its folders), by their
/// allocated blocks, except those `holders.shared` hold; files in memory (tmpfs, memfd,
/// /dev/shm) are not disk. Only the candidate's own processes may be `holders.own`: a file
/// counts against whoever holds it, so another candidate cannot make it count against this one.
/// A holder's executable counts too when deleted; where its main thread exited, a living
/// thread's maps are read. Folders nested deeper than `max_depth`, an entry that cannot be
/// read, a holder whose open files /proc will not list, or more than 65536 descriptors (or 5 s)
/// in one pass set `unmeasured` (no load_inline or Triton build nests more than a few levels).
/// Not seen: a file whose descriptor only a unix socket holds in flight (SCM_RIGHTS); the
/// free-space reserve bounds that (docs/architecture.md, Disk). Holders without a descriptor
/// that the candidate's seccomp filter closes (zygote.py): io_uring's registered files, and a
/// splice / sendfile / tee blocked on a full pipe.
FolderUsage folder_usage(const std::vector<std::filesystem::path>& roots, const Holders& holders,
                         std::uintmax_t stop_after, int max_depth = 64);

/// Removes `path` and everything below it without following links, also below PATH_MAX
/// (falls back to `rm -rf --one-file-system`). Errors are ignored.
void remove_tree(const std::filesystem::path& path);

/// Bytes an unprivileged process may still write on the file system holding `path`
/// (statvfs: f_bavail x f_frsize); std::nullopt when it cannot be read.
std::optional<std::uintmax_t> free_bytes(const std::filesystem::path& path);

/// Limits of one candidate's disk use. Defaults: 2 GiB and 100000 entries below its folders (a
/// load_inline build takes tens of MB and a few dozen files), and 1 GiB left free on their file
/// systems. `from_env` reads KGYM_DISK_QUOTA_MB, KGYM_DISK_FILES, KGYM_DISK_RESERVE_MB and KGYM_BUILD_KEEP_MB
/// (whole numbers; a malformed value throws Error(usage) naming the variable).
struct DiskLimits {
  std::uintmax_t quota_bytes = 2ULL << 30;
  std::uintmax_t quota_entries = 100000;
  std::uintmax_t reserve_bytes = 1ULL << 30;
  /// A build folder larger than this after its verdict is removed rather than kept for the next
  /// run of the same source (KGYM_BUILD_KEEP_MB, default 256 MiB): red team rt18 left 95 MiB in
  /// each of four build folders (sources differing by a comment), a cache that only grew.
  std::uintmax_t build_keep_bytes = 256ULL << 20;
  double period_s = 0.5;  ///< between two walks of the candidate's folders
  static DiskLimits from_env();
};

/// Why a candidate's disk use ended its evaluation.
struct DiskBreach {
  bool candidate_at_fault = false;  ///< over its quota (its failure), or the disk ran low (nobody's)
  std::string message;              ///< names the folders, the amounts and the variable to change
};

/// The free-space check before a candidate starts: a breach (not the candidate's fault) when a
/// file system holding one of `folders` has less than `limits.reserve_bytes` free, else nullopt.
std::optional<DiskBreach> check_reserve(const std::vector<std::filesystem::path>& folders, const DiskLimits& limits);

/// After a candidate broke its quota: empties `folders` (the content-addressed build folder
/// would otherwise keep its bytes for every later run of the same source, and a long-running
/// server would keep every work folder) except the file `log`, cut to its last `log_keep_bytes`
/// (the end of a candidate's output is what its verdict quotes). A `log` that is not a regular
/// file (a link, a folder: rt19 kept a full folder there) is removed. Errors are ignored: what
/// cannot be removed stays.
void release_folders(const std::vector<std::filesystem::path>& folders, const std::filesystem::path& log,
                     std::uintmax_t log_keep_bytes = 1 << 20);

/// Watches one candidate's folders from a thread of the supervisor while the candidate runs.
/// Every `period_s` it walks them (folder_usage, with the pids `holders` returns then: the
/// candidate's processes, runner::own_processes, and kgym's); over the quota, or with less than the reserve
/// left free where they lie, or when part of them cannot be measured, it records the breach and calls `on_breach` once (which kills the
/// candidate's process group: the evaluation then sees its process gone). Its writes elsewhere
/// are refused by the write sandbox (python/kgym_worker/zygote.py, Landlock); without the sandbox
/// (KGYM_SANDBOX=off) nothing bounds them. Red team rt17 (session 11): a candidate could fill
/// the disk below its work folder and every later verdict failed.
class DiskGuard {
 public:
  DiskGuard(std::vector<std::filesystem::path> folders, std::function<Holders()> holders, DiskLimits limits,
            std::function<void()> on_breach);
  ~DiskGuard();  ///< stops the thread (within one period)
  DiskGuard(const DiskGuard&) = delete;
  DiskGuard& operator=(const DiskGuard&) = delete;
  /// The breach, once one was found (thread-safe).
  std::optional<DiskBreach> breach() const;

 private:
  void loop();
  std::vector<std::filesystem::path> folders_;
  std::function<Holders()> holders_;
  DiskLimits limits_;
  std::function<void()> on_breach_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::optional<DiskBreach> breach_;
  std::thread thread_;
};

}  // namespace kgym::runner
