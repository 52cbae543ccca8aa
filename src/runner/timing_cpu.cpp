#include "timing_cpu.hpp"

#include <charconv>
#include <chrono>
#include <fstream>
#include <thread>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <string_view>
#include <system_error>

#include <unistd.h>

#include "kgym/error.hpp"

namespace kgym::runner {
namespace fs = std::filesystem;

std::vector<int> allowed_cpus() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof mask, &mask) != 0) return cpus;
  for (int k = 0; k < CPU_SETSIZE; ++k)
    if (CPU_ISSET(k, &mask)) cpus.push_back(k);
  return cpus;
}

int device_ordinal(const std::string& device) {
  if (device == "cuda") return 0;
  if (device.rfind("cuda:", 0) != 0) return -1;
  int n = -1;
  const char* b = device.data() + 5;
  const char* e = device.data() + device.size();
  const auto [p, ec] = std::from_chars(b, e, n);
  return ec == std::errc() && p == e && n >= 0 ? n : -1;
}

std::optional<int> choose_timing_cpu(const std::string& setting, const std::vector<int>& allowed, int ordinal) {
  if (setting == "off") return std::nullopt;
  if (setting.empty() || setting == "auto") {
    if (ordinal < 0 || allowed.size() < 4) return std::nullopt;
    const std::size_t n = allowed.size();
    return allowed[n - 1 - static_cast<std::size_t>(ordinal) % n];
  }
  int cpu = -1;
  const auto [p, ec] = std::from_chars(setting.data(), setting.data() + setting.size(), cpu);
  if (ec != std::errc() || p != setting.data() + setting.size() || cpu < 0)
    throw Error(ErrorKind::usage, "KGYM_TIMING_CPU='" + setting +
                                      "' is not a CPU: give auto (the default), off, or the number of a CPU this "
                                      "process may run on");
  bool ok = false;
  for (int a : allowed) ok = ok || a == cpu;
  if (!ok)
    throw Error(ErrorKind::usage, "KGYM_TIMING_CPU=" + setting +
                                      " is not among the CPUs this process may run on (see `taskset -p $$`); give "
                                      "one of them, auto or off");
  if (ordinal < 0) return std::nullopt;
  return cpu;
}

bool wait_until_sleeping(pid_t pid, double max_ms) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration<double, std::milli>(max_ms);
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  for (;;) {
    std::ifstream f(path);
    const std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');  // (the name before it may hold spaces and parentheses)
    if (close == std::string::npos || close + 2 >= stat.size()) return false;  // gone or unreadable
    if (stat[close + 2] == 'S') return true;
    if (clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

int set_threads_affinity(pid_t pid, const cpu_set_t& mask) {
  int n = 0;
  std::error_code ec;
  for (fs::directory_iterator it(fs::path("/proc") / std::to_string(pid) / "task", ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    char* stop = nullptr;
    const long tid = std::strtol(name.c_str(), &stop, 10);
    if (!stop || *stop != '\0' || tid <= 0) continue;
    if (::sched_setaffinity(static_cast<pid_t>(tid), sizeof mask, &mask) == 0) ++n;
  }
  return n;
}

void keep_off_cpu(int cpu) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (::sched_getaffinity(0, sizeof mask, &mask) != 0 || !CPU_ISSET(cpu, &mask) || CPU_COUNT(&mask) < 2) return;
  CPU_CLR(cpu, &mask);
  set_threads_affinity(::getpid(), mask);
}

PinnedToCpu::PinnedToCpu(std::vector<pid_t> pids, int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  for (pid_t pid : pids) {
    if (pid <= 1) continue;
    Saved s{pid, {}};
    CPU_ZERO(&s.mask);
    if (::sched_getaffinity(pid, sizeof s.mask, &s.mask) != 0) continue;
    const int set = set_threads_affinity(pid, one);
    if (set == 0) continue;
    threads_ += set;
    saved_.push_back(s);
  }
}

PinnedToCpu::~PinnedToCpu() {
  for (const Saved& s : saved_) set_threads_affinity(s.pid, s.mask);
}

}  // namespace kgym::runner
