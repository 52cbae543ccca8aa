// CPU accounting by a control group (src/runner/cpu_group.hpp): work done by a process that
// exits unseen (its parent ignores SIGCHLD, so the kernel reaps it and no parent's child-time
// counters get it: red team rt11) is still charged to the group; the /proc sum misses it.
// Skipped where kgym may not make control groups (no cgroup file system, not root).
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <thread>

#include <algorithm>

#include <gtest/gtest.h>

#include "../../src/runner/cpu_group.hpp"
#include "../../src/runner/proctree.hpp"

namespace {

/// Spins on the CPU for `ms` of this process's own CPU time.
void burn(double ms) {
  timespec t{};
  auto cpu_ms = [&] {
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
  };
  const double end = cpu_ms() + ms;
  while (cpu_ms() < end) {
  }
}

}  // namespace

TEST(CpuGroup, ChargesAHelperThatExitedAutoReaped) {
  int go[2], done[2];
  ASSERT_EQ(::pipe(go), 0);
  ASSERT_EQ(::pipe(done), 0);
  const pid_t worker = ::fork();
  ASSERT_GE(worker, 0);
  if (worker == 0) {  // the "worker": waits to be grouped, then forks a helper and never waits for it
    char c;
    if (::read(go[0], &c, 1) != 1) ::_exit(1);
    ::signal(SIGCHLD, SIG_IGN);  // children reaped by the kernel at exit
    const pid_t helper = ::fork();
    if (helper == 0) {
      burn(150);
      ::_exit(0);
    }
    while (::kill(helper, 0) == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (::write(done[1], "x", 1) != 1) ::_exit(1);
    ::pause();
    ::_exit(0);
  }
  double group0 = -1, group1 = -1, proc0 = 0, proc1 = 0;
  bool grouped = false;
  std::string why;
  {
    kgym::runner::CpuGroup group(worker);
    grouped = group.ok();
    why = group.why();
    if (grouped) {
      group0 = group.usage_ms();
      proc0 = kgym::runner::tree_cpu_ms(worker, -1, {}, true);
    }
    char c = 'g';
    EXPECT_EQ(::write(go[1], &c, 1), 1);
    EXPECT_EQ(::read(done[0], &c, 1), 1);
    if (grouped) {
      ::kill(worker, SIGSTOP);  // read with the group's processes stopped
      group1 = group.usage_ms();
      proc1 = kgym::runner::tree_cpu_ms(worker, -1, {}, true);
    }
    ::kill(worker, SIGKILL);
    ::waitpid(worker, nullptr, 0);
  }
  if (!grouped) GTEST_SKIP() << "no control group here: " << why;
  EXPECT_GE(group1 - group0, 120.0);  // the helper's 150 ms
  EXPECT_LT(proc1 - proc0, 60.0);     // what /proc still shows: the worker alone
}

TEST(CpuGroup, ProcSeesAProcessThatIgnoresSigchld) {
  // The fallback without a control group: such a process is named (the judge's [reap]).
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t p = ::fork();
  ASSERT_GE(p, 0);
  if (p == 0) {
    ::signal(SIGCHLD, SIG_IGN);
    if (::write(ready[1], "x", 1) != 1) ::_exit(1);
    ::pause();
    ::_exit(0);
  }
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  const auto lines = kgym::runner::unreaping_processes(p, -1, {});
  ::kill(p, SIGKILL);
  ::waitpid(p, nullptr, 0);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("ignores SIGCHLD"), std::string::npos);
  EXPECT_TRUE(kgym::runner::unreaping_processes(::getpid(), -1, {}).empty());
}

TEST(CpuGroup, SaysWhyWhenTheProcessCannotBeGrouped) {
  kgym::runner::CpuGroup group(-5);  // no such process
  EXPECT_FALSE(group.ok());
  EXPECT_FALSE(group.why().empty());
  EXPECT_LT(group.usage_ms(), 0);
}

TEST(CpuGroup, ListsAnOrphanThatLeftTheWorkersSession) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  const pid_t worker = ::fork();
  ASSERT_GE(worker, 0);
  if (worker == 0) {  // waits to be grouped, then a setsid, double-forked orphan (rt20's a5)
    char c;
    if (::read(go[0], &c, 1) != 1) ::_exit(1);
    if (::fork() == 0) {
      ::setsid();
      if (::fork() == 0) {
        const pid_t me = ::getpid();
        (void)!::write(ready[1], &me, sizeof me);
        for (;;) ::pause();
      }
      ::_exit(0);
    }
    for (;;) ::pause();
  }
  kgym::runner::CpuGroup group(worker);
  char c = 'g';
  ASSERT_EQ(::write(go[1], &c, 1), 1);
  pid_t orphan = -1;
  ASSERT_EQ(::read(ready[0], &orphan, sizeof orphan), static_cast<ssize_t>(sizeof orphan));
  const auto procs = group.procs();
  const bool grouped = group.ok();
  const std::string why = group.why();
  ::kill(orphan, SIGKILL);
  ::kill(worker, SIGKILL);
  ::waitpid(worker, nullptr, 0);
  if (!grouped) GTEST_SKIP() << "no control group here: " << why;
  EXPECT_NE(std::find(procs.begin(), procs.end(), orphan), procs.end());
  EXPECT_NE(std::find(procs.begin(), procs.end(), worker), procs.end());
}

TEST(CpuGroup, KillAllEndsAForkWalkerThatOutranAPidSweep) {
  // Red team rt23: processes that fork and let their parent exit in a loop get new pids faster
  // than a sweep of /proc can signal them; the group keeps them, and kill_all ends them all.
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  const pid_t worker = ::fork();
  ASSERT_GE(worker, 0);
  if (worker == 0) {
    char c;
    if (::read(go[0], &c, 1) != 1) ::_exit(1);
    if (::fork() == 0) {  // the walker: each generation forks the next and exits
      ::setsid();
      for (;;) {
        const pid_t next = ::fork();
        if (next != 0) ::_exit(0);
        ::usleep(1000);
      }
    }
    for (;;) ::pause();
  }
  kgym::runner::CpuGroup group(worker);
  char c = 'g';
  ASSERT_EQ(::write(go[1], &c, 1), 1);
  ::usleep(50000);
  const bool grouped = group.ok();
  const std::string why = group.why();
  const std::size_t before = group.procs().size();
  group.kill_all();
  const std::size_t after = group.procs().size();
  ::kill(worker, SIGKILL);
  ::waitpid(worker, nullptr, 0);
  if (!grouped) GTEST_SKIP() << "no control group here: " << why;
  EXPECT_GE(before, 2u);  // the worker and a walker
  EXPECT_EQ(after, 0u);
}
