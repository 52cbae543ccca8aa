// The timing CPU (src/runner/timing_cpu.hpp): which CPU a device times on, and pinning a
// process's threads to it and back.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "../../src/runner/timing_cpu.hpp"
#include "kgym/error.hpp"

using namespace kgym;
using namespace kgym::runner;

TEST(TimingCpu, DeviceOrdinal) {
  EXPECT_EQ(device_ordinal("cuda"), 0);
  EXPECT_EQ(device_ordinal("cuda:0"), 0);
  EXPECT_EQ(device_ordinal("cuda:3"), 3);
  EXPECT_EQ(device_ordinal("cpu"), -1);
  EXPECT_EQ(device_ordinal("cuda:x"), -1);
  EXPECT_EQ(device_ordinal("cuda:1x"), -1);
}

TEST(TimingCpu, AutoTakesTheLastCpusByOrdinal) {
  const std::vector<int> cpus = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(choose_timing_cpu("auto", cpus, 0), 7);
  EXPECT_EQ(choose_timing_cpu("", cpus, 1), 6);
  EXPECT_EQ(choose_timing_cpu("auto", cpus, 9), 6);  // wraps
  EXPECT_EQ(choose_timing_cpu("auto", cpus, -1), std::nullopt);  // a CPU device
  EXPECT_EQ(choose_timing_cpu("auto", {0, 1, 2}, 0), std::nullopt);  // too few CPUs to set one aside
  EXPECT_EQ(choose_timing_cpu("off", cpus, 0), std::nullopt);
}

TEST(TimingCpu, ANumberMustBeAnAllowedCpu) {
  const std::vector<int> cpus = {2, 3, 5, 7};
  EXPECT_EQ(choose_timing_cpu("5", cpus, 0), 5);
  try {
    choose_timing_cpu("4", cpus, 0);
    FAIL() << "an unallowed CPU was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("KGYM_TIMING_CPU=4"), std::string::npos) << e.what();
  }
  EXPECT_THROW(choose_timing_cpu("fast", cpus, 0), Error);
  EXPECT_THROW(choose_timing_cpu("-1", cpus, 0), Error);
}

namespace {
cpu_set_t mask_of(pid_t tid) {
  cpu_set_t m;
  CPU_ZERO(&m);
  EXPECT_EQ(::sched_getaffinity(tid, sizeof m, &m), 0);
  return m;
}
}  // namespace

// Every thread of the process runs on the CPU while pinned, and takes the main thread's old mask
// back afterwards.
TEST(TimingCpu, PinsEveryThreadAndGivesTheMaskBack) {
  const std::vector<int> cpus = allowed_cpus();
  ASSERT_FALSE(cpus.empty());
  const int cpu = cpus.back();
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::thread t([] { ::pause(); });  // a second thread the pin must reach
    char c = 1;
    (void)!::write(ready[1], &c, 1);
    ::pause();
    _exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  const cpu_set_t before = mask_of(child);
  {
    PinnedToCpu pin({child}, cpu);
    EXPECT_EQ(pin.threads(), 2);
    int seen = 0;
    for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(child) + "/task")) {
      const cpu_set_t m = mask_of(static_cast<pid_t>(std::stoi(e.path().filename().string())));
      EXPECT_EQ(CPU_COUNT(&m), 1);
      EXPECT_TRUE(CPU_ISSET(cpu, &m));
      ++seen;
    }
    EXPECT_EQ(seen, 2);
  }
  const cpu_set_t after = mask_of(child);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST(TimingCpu, AGoneProcessIsSkipped) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ::waitpid(child, nullptr, 0);
  PinnedToCpu pin({child, -1, 0}, allowed_cpus().front());
  EXPECT_EQ(pin.threads(), 0);
}

// A worker waiting for its next request sleeps; one still working does not (until the deadline).
TEST(TimingCpu, WaitsUntilAProcessSleeps) {
  const pid_t sleeper = ::fork();
  ASSERT_GE(sleeper, 0);
  if (sleeper == 0) {
    ::pause();
    _exit(0);
  }
  const pid_t spinner = ::fork();
  ASSERT_GE(spinner, 0);
  if (spinner == 0) {
    volatile unsigned long k = 0;
    for (;;) k = k + 1u;
  }
  EXPECT_TRUE(wait_until_sleeping(sleeper, 2000));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(wait_until_sleeping(spinner, 30));
  const double waited = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(waited, 29.0);
  for (pid_t p : {sleeper, spinner}) {
    ::kill(p, SIGKILL);
    ::waitpid(p, nullptr, 0);
  }
  EXPECT_FALSE(wait_until_sleeping(spinner, 10));  // gone
}

// The supervisor keeps off the timing CPU, and what it starts afterwards inherits that.
TEST(TimingCpu, KeepsThisProcessOffTheCpu) {
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "one CPU: nothing to keep off";
  cpu_set_t before;
  CPU_ZERO(&before);
  ASSERT_EQ(::sched_getaffinity(0, sizeof before, &before), 0);
  keep_off_cpu(cpus.back());
  const std::vector<int> now = allowed_cpus();
  EXPECT_EQ(now.size() + 1, cpus.size());
  EXPECT_EQ(std::find(now.begin(), now.end(), cpus.back()), now.end());
  const pid_t child = ::fork();
  if (child == 0) _exit(allowed_cpus() == now ? 0 : 1);
  int status = -1;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  set_threads_affinity(::getpid(), before);
  EXPECT_EQ(allowed_cpus(), cpus);
}
