// A candidate's disk use (src/runner/disk_guard.hpp): what its folders hold, its quota, the free
// space reserve, and the guard that stops it.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <future>
#include <pthread.h>
#include <sys/syscall.h>
#include <sched.h>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "../../src/runner/disk_guard.hpp"
#include "kgym/error.hpp"

namespace {

namespace fs = std::filesystem;
using kgym::runner::DiskGuard;
using kgym::runner::DiskLimits;

struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "kgym-disk-XXXXXX").string();
    path = ::mkdtemp(t.data());
  }
  ~TempDir() { fs::remove_all(path); }
};

void write_file(const fs::path& p, std::size_t bytes) {
  std::ofstream f(p, std::ios::binary);
  std::string chunk(1 << 16, 'x');
  for (std::size_t n = 0; n < bytes; n += chunk.size()) f.write(chunk.data(), std::min(chunk.size(), bytes - n));
}

/// This process, as the holder of the files a test keeps open or mapped.
kgym::runner::Holders me() { return {{::getpid()}, {}}; }

/// A forked process that runs `body(ready_fd)` and then waits to be killed; `body` writes one
/// byte to `ready_fd` once the child holds what the test reads. Killed and reaped on scope exit.
class HoldingChild {
 public:
  explicit HoldingChild(const std::function<void(int)>& body) {
    if (::pipe(ready_) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      body(ready_[1]);
      for (;;) ::pause();
    }
  }
  ~HoldingChild() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(ready_[0]);
    ::close(ready_[1]);
  }
  HoldingChild(const HoldingChild&) = delete;
  HoldingChild& operator=(const HoldingChild&) = delete;
  /// Waits for the child's byte; false when it died first.
  bool ready() {
    char c = 0;
    return pid_ > 0 && ::read(ready_[0], &c, 1) == 1;
  }
  pid_t pid() const { return pid_; }

 private:
  int ready_[2] = {-1, -1};
  pid_t pid_ = -1;
};

/// Waits up to 5 s for the guard to report.
bool wait_for(const std::atomic<int>& calls) {
  for (int i = 0; i < 500 && calls.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return calls.load() > 0;
}

TEST(FolderUsage, CountsAllocatedBytesAndEntriesOnceThroughHardLinks) {
  TempDir t;
  fs::create_directories(t.path / "a" / "b");
  write_file(t.path / "a" / "b" / "one", 3 << 20);
  fs::create_hard_link(t.path / "a" / "b" / "one", t.path / "a" / "link");
  const auto u = kgym::runner::folder_usage({t.path, t.path / "missing"}, {}, 1000);
  EXPECT_GE(u.bytes, 3u << 20);
  EXPECT_LT(u.bytes, 4u << 20);  // the hard link does not count the file twice
  EXPECT_EQ(u.entries, 5u);      // root, a, b, one, link
}

TEST(FolderUsage, SparseFileCountsWhatItHolds) {
  TempDir t;
  { std::ofstream f(t.path / "sparse"); }
  fs::resize_file(t.path / "sparse", 1ULL << 40);  // 1 TiB of nothing
  EXPECT_LT(kgym::runner::folder_usage({t.path}, me(), 10).bytes, 1u << 20);
}

TEST(FolderUsage, StopsAfterTheEntryLimit) {
  TempDir t;
  for (int i = 0; i < 50; ++i) std::ofstream(t.path / std::to_string(i));
  EXPECT_EQ(kgym::runner::folder_usage({t.path}, me(), 10).entries, 11u);
}

TEST(DiskGuard, StopsACandidateOverItsByteQuota) {
  TempDir t;
  DiskLimits l;
  l.quota_bytes = 4 << 20;
  l.reserve_bytes = 0;
  l.period_s = 0.02;
  std::atomic<int> calls{0};
  DiskGuard g({t.path / "work", t.path / "build"}, nullptr, l, [&] { ++calls; });
  write_file(t.path / "small", 8 << 20);  // outside its folders: not its use
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(calls.load(), 0);
  EXPECT_FALSE(g.breach());
  fs::create_directories(t.path / "build");
  write_file(t.path / "build" / "big", 6 << 20);
  ASSERT_TRUE(wait_for(calls));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(calls.load(), 1);  // once
  const auto b = g.breach();
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->candidate_at_fault);
  EXPECT_NE(b->message.find("KGYM_DISK_QUOTA_MB"), std::string::npos) << b->message;
}

TEST(DiskGuard, StopsACandidateOverItsEntryQuota) {
  TempDir t;
  DiskLimits l;
  l.quota_entries = 20;
  l.reserve_bytes = 0;
  l.period_s = 0.02;
  std::atomic<int> calls{0};
  DiskGuard g({t.path}, nullptr, l, [&] { ++calls; });
  for (int i = 0; i < 30; ++i) std::ofstream(t.path / std::to_string(i));
  ASSERT_TRUE(wait_for(calls));
  EXPECT_TRUE(g.breach()->candidate_at_fault);
  EXPECT_NE(g.breach()->message.find("KGYM_DISK_FILES"), std::string::npos);
}

TEST(DiskGuard, LowFreeSpaceIsNotTheCandidatesFault) {
  TempDir t;
  DiskLimits l;
  l.reserve_bytes = *kgym::runner::free_bytes(t.path) + (1ULL << 40);  // more than the disk will have
  l.period_s = 0.02;
  EXPECT_TRUE(kgym::runner::check_reserve({t.path / "not" / "yet"}, l));  // checked where it will be made
  std::atomic<int> calls{0};
  DiskGuard g({t.path}, nullptr, l, [&] { ++calls; });
  ASSERT_TRUE(wait_for(calls));
  EXPECT_FALSE(g.breach()->candidate_at_fault);
  EXPECT_NE(g.breach()->message.find("KGYM_DISK_RESERVE_MB"), std::string::npos);
}

TEST(DiskGuard, QuietWithinItsLimitsAndStopsPromptly) {
  TempDir t;
  write_file(t.path / "ok", 1 << 20);
  std::atomic<int> calls{0};
  const auto t0 = std::chrono::steady_clock::now();
  {
    DiskLimits l;
    l.reserve_bytes = 0;
    DiskGuard g({t.path}, nullptr, l, [&] { ++calls; });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(400));
  EXPECT_EQ(calls.load(), 0);
}

TEST(DiskLimits, ReadsTheEnvironmentAndRefusesMalformedValues) {
  ::setenv("KGYM_DISK_QUOTA_MB", "64", 1);
  EXPECT_EQ(DiskLimits::from_env().quota_bytes, 64u << 20);
  ::setenv("KGYM_DISK_QUOTA_MB", "64MB", 1);
  try {
    (void)DiskLimits::from_env();
    ADD_FAILURE() << "a malformed KGYM_DISK_QUOTA_MB was accepted";
  } catch (const kgym::Error& e) {
    EXPECT_NE(std::string(e.what()).find("KGYM_DISK_QUOTA_MB"), std::string::npos);
  }
  ::unsetenv("KGYM_DISK_QUOTA_MB");
  EXPECT_EQ(DiskLimits::from_env().quota_bytes, DiskLimits{}.quota_bytes);
}

}  // namespace

namespace {

TEST(ReleaseFolders, EmptiesTheFoldersAndKeepsTheLogsEnd) {
  TempDir t;
  fs::create_directories(t.path / "work" / "fill");
  fs::create_directories(t.path / "build" / "x");
  write_file(t.path / "work" / "fill" / "a", 1 << 20);
  write_file(t.path / "build" / "x" / "b", 1 << 20);
  {
    std::ofstream log(t.path / "work" / "worker.log");
    for (int i = 0; i < 100000; ++i) log << "line " << i << "\n";
  }
  kgym::runner::release_folders({t.path / "work", t.path / "build", t.path / "missing"}, t.path / "work" / "worker.log",
                                4096);
  EXPECT_FALSE(fs::exists(t.path / "work" / "fill"));
  EXPECT_FALSE(fs::exists(t.path / "build" / "x"));
  ASSERT_TRUE(fs::exists(t.path / "work" / "worker.log"));
  EXPECT_LT(fs::file_size(t.path / "work" / "worker.log"), 4096u + 200);
  std::ifstream in(t.path / "work" / "worker.log");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("line 99999\n"), std::string::npos);
  EXPECT_NE(text.find("were removed"), std::string::npos);
}

}  // namespace

namespace {

TEST(ReleaseFolders, NeverCutsAFileALinkedLogPointsTo) {
  TempDir t;
  fs::create_directories(t.path / "work");
  write_file(t.path / "kgym_own_file", 2 << 20);  // outside the candidate's folders
  fs::create_symlink(t.path / "kgym_own_file", t.path / "work" / "worker.log");
  kgym::runner::release_folders({t.path / "work"}, t.path / "work" / "worker.log", 4096);
  EXPECT_EQ(fs::file_size(t.path / "kgym_own_file"), 2u << 20);
  EXPECT_FALSE(fs::exists(fs::symlink_status(t.path / "work" / "worker.log")));
}

}  // namespace

namespace {

/// Makes `levels` nested folders of 200-character names below `root` by descriptors (the path
/// passes PATH_MAX) and writes `bytes` at the bottom; returns false where the system refuses.
bool make_deep(const fs::path& root, int levels, std::size_t bytes) {
  int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY);
  const std::string name(200, 'd');
  for (int i = 0; i < levels && fd >= 0; ++i) {
    ::mkdirat(fd, name.c_str(), 0755);
    const int child = ::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY);
    ::close(fd);
    fd = child;
  }
  if (fd < 0) return false;
  const int f = ::openat(fd, "payload", O_WRONLY | O_CREAT, 0644);
  std::string chunk(1 << 16, 'x');
  for (std::size_t n = 0; f >= 0 && n < bytes; n += chunk.size()) (void)!::write(f, chunk.data(), chunk.size());
  ::close(f);
  ::close(fd);
  return f >= 0;
}

TEST(FolderUsage, SeesBelowPathMaxAndRefusesDeepNesting) {
  TempDir t;
  ASSERT_TRUE(make_deep(t.path, 30, 2 << 20));  // about 6000 characters of path
  const auto u = kgym::runner::folder_usage({t.path}, me(), 1000);
  EXPECT_TRUE(u.unmeasured.empty()) << u.unmeasured;
  EXPECT_GE(u.bytes, 2u << 20);  // red team rt18: a walk by path names saw nothing below PATH_MAX
  EXPECT_EQ(u.entries, 32u);     // root, 30 folders, payload
  const auto shallow = kgym::runner::folder_usage({t.path}, me(), 1000, 8);
  EXPECT_NE(shallow.unmeasured.find("deeper than 8 levels"), std::string::npos) << shallow.unmeasured;
  kgym::runner::remove_tree(t.path / std::string(200, 'd'));
  EXPECT_FALSE(fs::exists(t.path / std::string(200, 'd')));
}

TEST(FolderUsage, CountsDeletedFilesStillHeldOpen) {
  TempDir t;
  write_file(t.path / "held", 3 << 20);
  const int fd = ::open((t.path / "held").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  fs::remove(t.path / "held");
  EXPECT_GE(kgym::runner::folder_usage({t.path}, me(), 1000).bytes, 3u << 20);  // rt18: 3 GB held this way
  ::close(fd);
  EXPECT_LT(kgym::runner::folder_usage({t.path}, me(), 1000).bytes, 1u << 20);
}

TEST(FolderUsage, CountsDeletedFilesStillMapped) {
  TempDir t;
  write_file(t.path / "mapped", 3 << 20);
  const int fd = ::open((t.path / "mapped").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  void* p = ::mmap(nullptr, 3 << 20, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  ASSERT_NE(p, MAP_FAILED);
  fs::remove(t.path / "mapped");
  EXPECT_GE(kgym::runner::folder_usage({t.path}, me(), 1000).bytes, 3u << 20);
  ::munmap(p, 3 << 20);
}

}  // namespace

namespace {

// Red team rt19 (session 12): the count of deleted files still held.
TEST(FolderUsage, CountsAHeldFileByItsBlocksNotByTheLengthMapped) {
  if (::geteuid() != 0) GTEST_SKIP() << "/proc/PID/map_files needs root; without it the mapped length counts";
  TempDir t;
  write_file(t.path / "big", 8 << 20);
  const int fd = ::open((t.path / "big").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  void* page = ::mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0);  // one page of 8 MiB
  ::close(fd);
  ASSERT_NE(page, MAP_FAILED);
  // An empty file mapped over 1 GiB holds no block (rt19 made an honest guard count 8 GiB so).
  const int lock = ::open((t.path / "lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(lock, 0);
  void* wide = ::mmap(nullptr, 1ULL << 30, PROT_READ, MAP_SHARED, lock, 0);
  ::close(lock);
  ASSERT_NE(wide, MAP_FAILED);
  fs::remove(t.path / "big");
  fs::remove(t.path / "lock");
  const auto u = kgym::runner::folder_usage({t.path}, me(), 1000);
  EXPECT_GE(u.bytes, 8u << 20);   // rt19: counted as 4 KiB
  EXPECT_LT(u.bytes, 16u << 20);  // not the 1 GiB mapped
  ::munmap(page, 4096);
  ::munmap(wide, 1ULL << 30);
}

TEST(FolderUsage, CountsAHeldFileWhosePathIsLongerThanAPage) {
  TempDir t;
  ASSERT_TRUE(make_deep(t.path, 30, 3 << 20));  // about 6000 characters of path
  int dir = ::open(t.path.c_str(), O_RDONLY | O_DIRECTORY);
  for (int i = 0; i < 30 && dir >= 0; ++i) {
    const int child = ::openat(dir, std::string(200, 'd').c_str(), O_RDONLY | O_DIRECTORY);
    ::close(dir);
    dir = child;
  }
  ASSERT_GE(dir, 0);
  const int fd = ::openat(dir, "payload", O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::unlinkat(dir, "payload", 0), 0);
  ::close(dir);
  EXPECT_GE(kgym::runner::folder_usage({t.path}, me(), 1000).bytes, 3u << 20);  // rt19: readlink lost " (deleted)"
  ::close(fd);
  kgym::runner::remove_tree(t.path / std::string(200, 'd'));
}

TEST(FolderUsage, FilesHeldByOtherProcessesDoNotCountAgainstTheCandidate) {
  TempDir t;
  write_file(t.path / "theirs", 4 << 20);
  const std::string path = (t.path / "theirs").string();
  HoldingChild other([&](int ready) {  // another candidate's process: holds the file open and mapped, far past its end
    const int fd = ::open(path.c_str(), O_RDONLY);
    void* p = ::mmap(nullptr, 1ULL << 32, PROT_READ, MAP_SHARED, fd, 0);
    (void)p;
    (void)!::write(ready, "x", 1);
  });
  ASSERT_TRUE(other.ready());
  fs::remove(t.path / "theirs");
  EXPECT_LT(kgym::runner::folder_usage({t.path}, me(), 1000).bytes, 1u << 20);  // rt19 blamed the honest one
  const auto theirs = kgym::runner::folder_usage({t.path}, {{other.pid()}, {}}, 1000).bytes;
  EXPECT_GE(theirs, 4u << 20);
  if (::geteuid() == 0) {
    EXPECT_LT(theirs, 1u << 30);  // blocks (map_files), not the 4 GiB mapped
  }
}

TEST(ReleaseFolders, RemovesAFolderPutInPlaceOfTheLog) {
  TempDir t;
  fs::create_directories(t.path / "work" / "worker.log" / "deep");
  write_file(t.path / "work" / "worker.log" / "deep" / "fill", 2 << 20);
  kgym::runner::release_folders({t.path / "work"}, t.path / "work" / "worker.log", 4096);
  EXPECT_FALSE(fs::exists(t.path / "work" / "worker.log"));  // rt19: kept, full, after the verdict
}

}  // namespace

namespace {

// Red team rt20 (session 13).
TEST(FolderUsage, SeesTheDescriptorTableAThreadUnshared) {
  TempDir t;
  write_file(t.path / "hidden", 3 << 20);
  std::promise<void> opened, done;
  std::thread holder([&] {
    ASSERT_EQ(::unshare(CLONE_FILES), 0);  // a table of its own: /proc/PID/fd shows the leader's
    const int fd = ::open((t.path / "hidden").c_str(), O_RDONLY);
    fs::remove(t.path / "hidden");
    opened.set_value();
    done.get_future().wait();
    ::close(fd);
  });
  opened.get_future().wait();
  const auto u = kgym::runner::folder_usage({t.path}, me(), 1000);
  done.set_value();
  holder.join();
  EXPECT_GE(u.bytes, 3u << 20);  // rt20: 300 MiB held this way passed
}

TEST(FolderUsage, FilesKgymsOwnProcessesHoldNeverCount) {
  TempDir t;
  write_file(t.path / "library", 3 << 20);
  const int fd = ::open((t.path / "library").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  // Stands for the zygote: it held the file (inherited here) before the worker forked.
  HoldingChild zygote([](int ready) { (void)!::write(ready, "x", 1); });
  ASSERT_TRUE(zygote.ready());
  fs::remove(t.path / "library");  // an upgrade deletes it while both still hold it
  EXPECT_GE(kgym::runner::folder_usage({t.path}, me(), 1000).bytes, 3u << 20);
  EXPECT_LT(kgym::runner::folder_usage({t.path}, {{::getpid()}, {zygote.pid()}}, 1000).bytes, 1u << 20);  // rt20
  ::close(fd);
}

TEST(FolderUsage, AProcessWhoseMainThreadExitedIsReadThroughALivingThread) {
  TempDir t;
  write_file(t.path / "mapped", 3 << 20);
  static std::string path;  // for the thread started in the child
  static int ready_fd;
  path = (t.path / "mapped").string();
  HoldingChild child([](int ready) {  // rt20: its maps and descriptors vanish from /proc/PID once the main thread exits
    ready_fd = ready;
    pthread_t holder;
    ::pthread_create(&holder, nullptr, [](void*) -> void* {
      const int fd = ::open(path.c_str(), O_RDONLY);
      void* p = ::mmap(nullptr, 3 << 20, PROT_READ, MAP_SHARED, fd, 0);
      (void)p;
      ::unlink(path.c_str());
      ::sleep(1);  // the main thread exits meanwhile
      (void)!::write(ready_fd, "x", 1);
      for (;;) ::pause();
    }, nullptr);
    ::syscall(SYS_exit, 0);  // this thread only (pthread_exit would unwind through gtest's frames)
  });
  ASSERT_TRUE(child.ready());
  const auto u = kgym::runner::folder_usage({t.path}, {{child.pid()}, {}}, 1000);
  EXPECT_TRUE(u.unmeasured.empty()) << u.unmeasured;  // rt21: an exiting honest tool was stopped so
  EXPECT_GE(u.bytes, 3u << 20);                        // rt20: unseen, /proc/PID/maps empty
}

TEST(ReleaseFolders, ALogLinkedToAFolderDoesNotKeepTheFolder) {
  TempDir t;
  fs::create_directories(t.path / "work");
  fs::create_directories(t.path / "build" / "torch_extensions");
  write_file(t.path / "build" / "torch_extensions" / "keep", 1 << 20);
  fs::create_directory_symlink(t.path / "build" / "torch_extensions", t.path / "work" / "worker.log");
  kgym::runner::release_folders({t.path / "work", t.path / "build"}, t.path / "work" / "worker.log", 4096);
  EXPECT_FALSE(fs::exists(t.path / "build" / "torch_extensions"));  // rt20: kept as if it were the log
  EXPECT_FALSE(fs::exists(fs::symlink_status(t.path / "work" / "worker.log")));
}

}  // namespace
