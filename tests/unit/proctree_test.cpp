// The candidate's processes (src/runner/proctree.hpp): which of them hold a device file besides
// the candidate's worker (foreign_gpu_holders; the GPU's /dev/nvidia* here replaced by a file in a
// temporary directory, matched by its inode as the device nodes are, so that it runs on a CPU
// machine).
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../../src/runner/proctree.hpp"

namespace {

namespace fs = std::filesystem;
using kgym::runner::foreign_gpu_holders;

/// Opens `path` and maps its first page (what a CUDA context does with /dev/nvidia*); -1 on error.
int open_and_map(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return -1;
  if (::mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED) {
    ::close(fd);
    return -1;
  }
  return fd;
}

/// A child that opens `path` (when not empty) and, with `map`, maps it; says so on a pipe and
/// sleeps until killed.
pid_t child_holding(const std::string& path, bool map) {
  int p[2];
  if (::pipe(p) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(p[0]);
    if (!path.empty() && (map ? open_and_map(path) : ::open(path.c_str(), O_RDONLY)) < 0) ::_exit(2);
    char ok = 1;
    if (::write(p[1], &ok, 1) != 1) ::_exit(3);
    for (;;) ::pause();
  }
  ::close(p[1]);
  char ok = 0;
  if (::read(p[0], &ok, 1) != 1) ok = 0;
  ::close(p[0]);
  return ok ? pid : -1;
}

void stop(pid_t pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

bool names(const std::vector<std::string>& lines, pid_t pid) {
  for (const auto& l : lines)
    if (l.rfind("pid " + std::to_string(pid) + " ", 0) == 0) return true;
  return false;
}

class ProcTree : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kgym-proctree-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    device_ = (fs::path(dir_) / "fakegpu0").string();
    {
      std::FILE* f = std::fopen(device_.c_str(), "w");
      ASSERT_NE(f, nullptr);
      const std::string page(4096, 'x');
      std::fwrite(page.data(), 1, page.size(), f);
      std::fclose(f);
    }
    struct stat st {};
    ASSERT_EQ(::stat(device_.c_str(), &st), 0);
    const dev_t dev = st.st_dev;
    const ino_t ino = st.st_ino;
    gpu_ = [dev, ino](const struct stat& s) { return s.st_dev == dev && s.st_ino == ino; };
  }
  void TearDown() override {
    for (pid_t p : kids_) stop(p);
    fs::remove_all(dir_);
  }
  /// A child that holds a context of its own (opens and maps the device) when `holding`.
  pid_t spawn(bool holding, bool map = true) {
    const pid_t p = child_holding(holding ? device_ : "", map);
    kids_.push_back(p);
    return p;
  }
  std::string dir_, device_;
  kgym::runner::DevicePredicate gpu_;
  std::vector<pid_t> kids_;
};

TEST_F(ProcTree, NamesChildrenOfTheWorkerThatHoldTheDevice) {
  const pid_t holder = spawn(true), idle = spawn(false);
  ASSERT_GT(holder, 0);
  ASSERT_GT(idle, 0);
  // This process plays the candidate's worker; its children are the candidate's processes.
  const auto found = foreign_gpu_holders(::getpid(), -1, {}, -1, false, gpu_);
  EXPECT_TRUE(names(found, holder));
  EXPECT_FALSE(names(found, idle));
  ASSERT_FALSE(found.empty());
  EXPECT_NE(found.front().find(device_), std::string::npos);
}

TEST_F(ProcTree, TheDeviceIsKnownByItsIdentityNotItsPath) {
  // Another path to the same file (here a hard link; a chroot or a mount namespace does the same
  // to a /dev/nvidia* node, red team rt6): /proc shows the other path, the file is the device.
  const std::string other = (fs::path(dir_) / "jail-dev-node").string();
  ASSERT_EQ(::link(device_.c_str(), other.c_str()), 0);
  const pid_t p = child_holding(other, true);
  kids_.push_back(p);
  ASSERT_GT(p, 0);
  const auto found = foreign_gpu_holders(::getpid(), -1, {}, -1, false, gpu_);
  ASSERT_TRUE(names(found, p));
  EXPECT_NE(found.front().find("jail-dev-node"), std::string::npos);
}

TEST_F(ProcTree, OpeningTheDeviceWithoutMappingItIsNoContext) {
  // An NVML query opens /dev/nvidiactl without a context.
  const pid_t opened = spawn(true, false);
  ASSERT_GT(opened, 0);
  EXPECT_FALSE(names(foreign_gpu_holders(::getpid(), -1, {}, -1, false, gpu_), opened));
}

TEST_F(ProcTree, AFileInheritedFromTheWorkerIsNotAContextOfItsOwn) {
  // The worker (this process) holds the device; a child forked after shares that open file
  // (what a fork of a CUDA process does, without a usable context); a child that opens the device
  // itself holds a context of its own. A plain file's mapping is copied into a fork (the
  // driver's is not), so the forked child also maps it here: only kcmp tells the two apart.
  const int fd = open_and_map(device_);
  ASSERT_GE(fd, 0);
  const pid_t forked = spawn(false), opened = spawn(true);
  ASSERT_GT(forked, 0);
  ASSERT_GT(opened, 0);
  const auto found = foreign_gpu_holders(::getpid(), -1, {}, -1, false, gpu_);
  EXPECT_FALSE(names(found, forked));
  EXPECT_TRUE(names(found, opened));
  ::close(fd);
}

TEST_F(ProcTree, TheWorkerItselfCountsOnlyWithRoot) {
  const int fd = open_and_map(device_);
  ASSERT_GE(fd, 0);
  EXPECT_FALSE(names(foreign_gpu_holders(::getpid(), -1, {}, -1, false, gpu_), ::getpid()));
  EXPECT_TRUE(names(foreign_gpu_holders(::getpid(), -1, {}, -1, true, gpu_), ::getpid()));
  ::close(fd);
  EXPECT_FALSE(names(foreign_gpu_holders(::getpid(), -1, {}, -1, true, gpu_), ::getpid()));
}

TEST_F(ProcTree, OrphansUnderTheZygoteAndOtherWorkersNeverCount) {
  // This process plays the zygote: `worker` is the candidate's worker, `reference` the reference
  // worker and `other` another candidate's worker (both may hold the GPU), `orphan` a re-parented
  // process that is none of them.
  const pid_t worker = spawn(false), reference = spawn(true), orphan = spawn(true);
  ASSERT_GT(worker, 0);
  ASSERT_GT(reference, 0);
  ASSERT_GT(orphan, 0);
  // A candidate's worker keeps its own orphans below it (zygote.keep_orphans): one below the
  // zygote is a dead worker's, and counts for no candidate, alone (red team rt23 had a dead
  // worker's leftovers counted against the one honest candidate left) or not (session 14:
  // rt5_escaped_hog's hogs made the candidate beside it a contract_violation on the H200).
  auto found = foreign_gpu_holders(worker, ::getpid(), {worker, reference}, reference, false, gpu_);
  EXPECT_FALSE(names(found, orphan));
  EXPECT_FALSE(names(found, reference));
  EXPECT_FALSE(names(found, worker));
  const pid_t other = spawn(true);
  ASSERT_GT(other, 0);
  found = foreign_gpu_holders(worker, ::getpid(), {worker, other, reference}, reference, false, gpu_);
  EXPECT_FALSE(names(found, orphan));
  EXPECT_FALSE(names(found, other));
  EXPECT_FALSE(names(found, reference));
  // Below the worker, a holder is the candidate's, named with its parent.
  const pid_t self = ::getpid();
  found = foreign_gpu_holders(self, -1, {}, -1, false, gpu_);
  ASSERT_TRUE(names(found, orphan));
  EXPECT_NE(found.front().find(", parent " + std::to_string(self) + ")"), std::string::npos) << found.front();
}

TEST_F(ProcTree, DiskHoldersAreTheCandidatesOwnNeverTheReferenceNorAnotherCandidatesOrphans) {
  // This process plays the zygote: `worker` the candidate's worker, `reference` the reference
  // worker, `orphan` a re-parented process that is neither (runner::own_processes).
  const pid_t worker = spawn(false), reference = spawn(false), orphan = spawn(false);
  ASSERT_GT(worker, 0);
  ASSERT_GT(reference, 0);
  ASSERT_GT(orphan, 0);
  auto has = [](const std::vector<pid_t>& v, pid_t p) { return std::find(v.begin(), v.end(), p) != v.end(); };
  // The one candidate beside the reference: the orphan is a dead worker's, not its (zygote.
  // keep_orphans; red team rt23's fork walkers were counted against the honest candidate left),
  // and the reference never is (rt20).
  auto alone = kgym::runner::own_processes(worker, {worker, reference}, reference);
  EXPECT_TRUE(has(alone, worker));
  EXPECT_FALSE(has(alone, orphan));
  EXPECT_FALSE(has(alone, reference));
  // Two candidates: it counts for neither.
  const pid_t second = spawn(false);
  auto two = kgym::runner::own_processes(worker, {worker, second, reference}, reference);
  EXPECT_TRUE(has(two, worker));
  EXPECT_FALSE(has(two, orphan));
  EXPECT_FALSE(has(two, second));
  EXPECT_FALSE(has(two, reference));
  // ... unless the candidate's control group lists it (CPU): then it is this candidate's.
  auto grouped = kgym::runner::own_processes(worker, {worker, second, reference}, reference, {orphan});
  EXPECT_TRUE(has(grouped, orphan));
  EXPECT_FALSE(has(grouped, second));
}

/// A chain of `depth` processes below a child of this process (each the parent of the next, all
/// paused), with the last one's pid written to `last`; returns the top's pid.
pid_t chain(int depth, pid_t* last) {
  int p[2];
  if (::pipe(p) != 0) return -1;
  const pid_t top = ::fork();
  if (top == 0) {
    ::close(p[0]);
    for (int i = 1; i < depth; ++i)
      if (::fork() != 0) {
        for (;;) ::pause();  // this link stays; its child goes on
      }
    const pid_t me = ::getpid();
    if (::write(p[1], &me, sizeof me) != sizeof me) ::_exit(3);
    for (;;) ::pause();
  }
  ::close(p[1]);
  if (::read(p[0], last, sizeof *last) != sizeof *last) *last = -1;
  ::close(p[0]);
  return top;
}

TEST(ProcTreeKill, KillsEveryLevelOfAChainInOnePassAndSparesWhatItIsTold) {
  pid_t last = -1, spared_last = -1;
  const pid_t doomed = chain(6, &last), spared = chain(3, &spared_last);
  ASSERT_GT(doomed, 0);
  ASSERT_GT(last, 0);
  ASSERT_GT(spared, 0);
  EXPECT_GE(kgym::runner::kill_below(::getpid(), {spared}, 5.0), 6);
  // The deepest link of the killed chain is gone (a zombie re-parented elsewhere at most).
  bool gone = true;
  for (int i = 0; i < 100; ++i) {
    std::ifstream stat("/proc/" + std::to_string(last) + "/stat");
    std::string s;
    gone = !std::getline(stat, s) || s.substr(s.rfind(')') + 2, 1) == "Z";
    if (gone) break;
    ::usleep(10000);
  }
  EXPECT_TRUE(gone);
  EXPECT_EQ(::kill(spared_last, 0), 0);  // the spared chain lives
  EXPECT_GE(kgym::runner::kill_below(::getpid(), {}, 5.0), 3);
  EXPECT_NE(::kill(spared, 0), 0);  // killed and reaped (a direct child)
}

/// The state letter of /proc/PID/stat ('T' stopped), '?' when gone.
char state_of(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string s;
  if (!std::getline(stat, s) || s.rfind(')') == std::string::npos) return '?';
  return s[s.rfind(')') + 2];
}

TEST(ProcTreeQuiet, StopsTheOtherWorkersTreesButNotTheKeptOnes) {
  // This process plays the zygote: the candidate's worker and the reference (chains that stay
  // running) and another candidate's worker with two processes below it (stopped while the
  // candidate is timed, continued after).
  pid_t cand_last = -1, ref_last = -1, other_last = -1;
  const pid_t cand = chain(2, &cand_last), ref = chain(2, &ref_last), other = chain(3, &other_last);
  ASSERT_GT(cand_last, 0);
  ASSERT_GT(ref_last, 0);
  ASSERT_GT(other_last, 0);
  const auto found = kgym::runner::bystander_processes(::getpid(), {cand, ref});
  auto has = [&](pid_t p) { return std::find(found.begin(), found.end(), p) != found.end(); };
  EXPECT_TRUE(has(other));
  EXPECT_TRUE(has(other_last));
  EXPECT_EQ(found.size(), 3u);
  EXPECT_FALSE(has(cand) || has(cand_last) || has(ref) || has(ref_last) || has(::getpid()));
  {
    kgym::runner::PausedTree paused([&] { return kgym::runner::bystander_processes(::getpid(), {cand, ref}); });
    EXPECT_EQ(paused.pids().size(), 3u);
    for (int i = 0; i < 100 && state_of(other_last) != 'T'; ++i) ::usleep(10000);
    EXPECT_EQ(state_of(other_last), 'T');
    EXPECT_NE(state_of(cand_last), 'T');
    EXPECT_NE(state_of(ref_last), 'T');
  }
  for (int i = 0; i < 100 && state_of(other_last) == 'T'; ++i) ::usleep(10000);
  EXPECT_NE(state_of(other_last), 'T');
  EXPECT_GE(kgym::runner::kill_below(::getpid(), {}, 5.0), 7);
}

TEST(ProcTreeQuiet, TheStopLedgerCountsWhileAndAfterAProcessIsStopped) {
  pid_t last = -1;
  const pid_t top = chain(1, &last);
  ASSERT_GT(top, 0);
  const double before = kgym::runner::stopped_ms(top);
  {
    kgym::runner::PausedTree outer([&] { return std::vector<pid_t>{top}; });
    kgym::runner::PausedTree inner([&] { return std::vector<pid_t>{top}; });  // nested: one stop
    ::usleep(60000);
    EXPECT_GE(kgym::runner::stopped_ms(top) - before, 50.0);  // a stop in progress counts
  }
  const double after = kgym::runner::stopped_ms(top);
  EXPECT_GE(after - before, 50.0);
  EXPECT_LT(after - before, 5000.0);
  ::usleep(30000);
  EXPECT_DOUBLE_EQ(kgym::runner::stopped_ms(top), after);  // continued: no longer counting
  EXPECT_EQ(kgym::runner::stopped_ms(::getpid()), 0.0);    // never stopped
  EXPECT_GE(kgym::runner::kill_below(::getpid(), {}, 5.0), 1);
}

}  // namespace

namespace {
/// State letter of every thread of `pid` ('?' when gone).
std::string thread_states(pid_t pid) {
  std::string out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(e.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;
    const auto close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size()) out += line[close + 2];
  }
  return out.empty() ? "?" : out;
}
}  // namespace

// Red team rt17 (CPU, session 11): a child inside one long madvise(MADV_POPULATE_READ) (about 1 s
// of kernel time over 8 GiB of unbacked address space) went on running for a second after
// SIGSTOP, beside the eager baseline the pause was for. The stop now waits until every thread is
// stopped (or kills the process after PausedTree::kStopLimitMs).
TEST(ProcTreeQuiet, AStopWaitsForAProcessInsideALongSystemCall) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::size_t n = std::size_t{8} << 30;
    for (;;) {
      void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (p == MAP_FAILED) ::_exit(2);
      if (::madvise(p, n, 22 /* MADV_POPULATE_READ */) != 0 && errno == EINVAL) ::_exit(3);  // kernel < 5.14
      ::munmap(p, n);
    }
  }
  ::usleep(300 * 1000);
  int status = 0;
  if (::waitpid(child, &status, WNOHANG) == child) GTEST_SKIP() << "MADV_POPULATE_READ unavailable";
  std::string states;
  {
    kgym::runner::PausedTree paused([&] { return std::vector<pid_t>{child}; });
    states = thread_states(child);  // right after the constructor: stopped (T) or killed (Z)
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(states.find_first_not_of("TtZX?") == std::string::npos) << "thread states: " << states;
}
