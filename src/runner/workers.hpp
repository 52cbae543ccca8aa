#pragma once
// Worker processes: the zygote (python -m kgym_worker zygote, torch imported once) and the
// workers it forks (reference worker, candidate executors). Internal to the runner component.

#include <sys/types.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "channel.hpp"
#include "kgym/measurement.hpp"
#include "protocol.hpp"

namespace kgym::runner {

/// How a worker process ended, as the zygote reaped it.
struct ExitStatus {
  int signal = 0;
  int exit_code = 0;
};

/// What a spawned worker needs.
struct SpawnSpec {
  std::string role;    ///< "reference" | "candidate"
  std::string device;  ///< device as the worker sees it ("cpu" or "cuda:0")
  std::filesystem::path workdir;
  std::map<std::string, std::string> env;
  long long address_space_bytes = 0;  ///< RLIMIT_AS, 0 = none
};

/// The zygote process. Thread-safe. When it dies (killed from outside: the OOM killer, a stray
/// signal) its workers die with it (PR_SET_PDEATHSIG); the next spawn starts a new one, so an
/// evaluation loses the verdicts in flight, not the rest.
class Zygote {
 public:
  /// Starts `python -m kgym_worker zygote` and waits for it to import torch. Throws Error(worker)
  /// with the log tail when it cannot start.
  Zygote(const std::string& python, const std::filesystem::path& python_dir,
         const std::filesystem::path& log_path);
  ~Zygote();
  /// Forks a worker; returns its pid and the supervisor's end of its channel. A dead zygote is
  /// replaced first. Throws Error(worker) when no zygote can be started or it refuses.
  std::pair<pid_t, Channel> spawn(const SpawnSpec& spec);
  /// Waits up to `timeout_s` for the worker to exit (then SIGKILLs its process group). A worker
  /// of a zygote that died (or of an earlier one) is SIGKILLed and reported as killed by SIGKILL.
  ExitStatus reap(pid_t pid, double timeout_s);
  /// The zygote's pid (the parent of every worker, and a child subreaper); -1 while dead.
  pid_t pid() const { return pid_; }
  /// The pids of the workers spawned and not yet reaped (reference and candidates).
  std::set<pid_t> workers();
  /// How many times the zygote was found dead (0 while the first one lives).
  int deaths() const { return deaths_; }

 private:
  void start();            ///< spawns the process; mutex_ held (or in the constructor)
  bool exited_locked();    ///< reaps the process if it exited; mutex_ held
  void died_locked();      ///< records a death (workers forgotten); mutex_ held
  std::mutex mutex_;
  Channel control_;
  std::atomic<pid_t> pid_{-1};
  std::atomic<int> deaths_{0};
  std::set<pid_t> workers_;
  std::string python_;
  std::filesystem::path python_dir_, log_path_;
};

/// A worker forked by the zygote. Owned by one thread at a time.
class Worker {
 public:
  Worker(Zygote& zygote, const SpawnSpec& spec);
  ~Worker();  ///< kills and reaps the process if still running
  /// Sends a request and waits up to `timeout_s` for the reply, plus the time kgym kept this
  /// worker stopped meanwhile (runner::stopped_ms). Throws ChannelClosed (the process died: see
  /// exit_status()) or ChannelTimeout (the process was killed).
  Message request(const nlohmann::json& header, const std::vector<Blob>& blobs,
                  double timeout_s);
  /// The same with a request of protocol.hpp (its reply read with protocol::read).
  template <protocol::Message R>
  Message request(const R& req, const std::vector<Blob>& blobs, double timeout_s) {
    return request(nlohmann::json(req), blobs, timeout_s);
  }
  /// Asks the worker to exit and reaps it; returns how it ended.
  ExitStatus finish();
  /// Kills the process group and reaps it.
  ExitStatus kill();
  pid_t pid() const { return pid_; }
  bool alive() const { return !exit_.has_value(); }

 private:
  Zygote& zygote_;
  pid_t pid_;
  Channel channel_;
  std::optional<ExitStatus> exit_;
};

}  // namespace kgym::runner
