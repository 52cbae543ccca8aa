#include "workers.hpp"

#include "proctree.hpp"

#include <signal.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include <spdlog/spdlog.h>

#include "kgym/error.hpp"

extern char** environ;

namespace kgym::runner {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {
Deadline after(double seconds) {
  return Clock::now() + std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}
/// Every live zygote of this process (kgym serve runs one per device): a dead one's sweep of this
/// process's children must not take the others.
std::mutex live_zygotes_mutex;
std::set<pid_t> live_zygotes;

void register_zygote(pid_t pid, bool live) {
  std::lock_guard lock(live_zygotes_mutex);
  if (live) live_zygotes.insert(pid);
  else live_zygotes.erase(pid);
}

std::string tail_of(const fs::path& path, std::size_t n = 4000) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > n ? s.substr(s.size() - n) : s;
}
}  // namespace

Zygote::Zygote(const std::string& python, const fs::path& python_dir, const fs::path& log_path)
    : python_(python), python_dir_(python_dir), log_path_(log_path) {
  start();
}

void Zygote::start() {
  // This process becomes a child subreaper too: when the zygote dies, what its candidates left
  // below it (escaped daemons, which no PR_SET_PDEATHSIG reaches) comes back here, and
  // died_locked kills it (before, such processes outlived kgym, re-parented to init).
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  const std::string& python = python_;
  const fs::path& python_dir = python_dir_;
  const fs::path& log_path = log_path_;
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw Error(ErrorKind::worker, "socketpair failed for the worker zygote");
  std::vector<std::string> env_strings;
  std::string pythonpath = python_dir.string();
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    if (kv.starts_with("PYTHONPATH=")) pythonpath += ":" + kv.substr(11);
    else env_strings.push_back(kv);
  }
  env_strings.push_back("PYTHONPATH=" + pythonpath);
  env_strings.push_back("PYTHONUNBUFFERED=1");
  env_strings.push_back("PYTHONDONTWRITEBYTECODE=1");
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, sv[1], 3);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  std::string m = "-m", mod = "kgym_worker", role = "zygote";
  std::string py = python;
  char* argv[] = {py.data(), m.data(), mod.data(), role.data(), nullptr};
  pid_t spawned = -1;
  int rc = ::posix_spawnp(&spawned, python.c_str(), &actions, &attr, argv, envp.data());
  pid_ = rc == 0 ? spawned : -1;
  if (rc == 0) register_zygote(spawned, true);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(sv[1]);
  control_ = Channel(sv[0]);
  if (rc != 0)
    throw Error(ErrorKind::worker, "cannot start '" + python + "' for the worker zygote: " + std::strerror(rc) +
                                       "; pass --python PATH to an interpreter with torch 2.11");
  try {
    Message ready = control_.recv(after(300));
    if (protocol::read<protocol::ZygoteReady>(ready.header).op != "ready") throw ChannelClosed();
  } catch (const std::exception&) {
    ::kill(spawned, SIGKILL);
    ::waitpid(spawned, nullptr, 0);
    register_zygote(spawned, false);
    pid_ = -1;
    throw Error(ErrorKind::worker, "the worker zygote (" + python + " -m kgym_worker zygote) did not start; "
                                   "is torch installed (bash scripts/install.sh)? Log " + log_path.string() +
                                   ":\n" + tail_of(log_path));
  }
}

bool Zygote::exited_locked() {
  const pid_t p = pid_;
  if (p <= 0) return true;
  if (::waitpid(p, nullptr, WNOHANG) != p) return false;
  pid_ = -1;  // reaped: died_locked has no process left to kill
  register_zygote(p, false);
  died_locked();
  return true;
}

void Zygote::died_locked() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    register_zygote(pid_, false);
  }
  pid_ = -1;
  ++deaths_;
  control_.close();
  for (pid_t w : workers_) ::kill(-w, SIGKILL);  // their parent's death killed them; their groups too
  workers_.clear();
  // The dead zygote's orphans came back to this process (a child subreaper since start): kill
  // them and everything below them, sparing the live zygotes (other devices' under kgym serve).
  std::set<pid_t> spare;
  {
    std::lock_guard lock(live_zygotes_mutex);
    spare = live_zygotes;
  }
  kill_below(::getpid(), spare);
}

Zygote::~Zygote() {
  if (pid_ > 0) {
    register_zygote(pid_, false);
    try {
      std::lock_guard lock(mutex_);
      control_.send(protocol::ExitRequest{});
    } catch (...) {
    }
    control_.close();
    for (int i = 0; i < 200; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return;
      ::usleep(10000);
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

std::pair<pid_t, Channel> Zygote::spawn(const SpawnSpec& spec) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw Error(ErrorKind::worker, "socketpair failed for a worker");
  Channel mine(sv[0]);
  const nlohmann::json req = protocol::SpawnRequest{.role = spec.role,
                                                   .device = spec.device,
                                                   .workdir = spec.workdir.string(),
                                                   .log = (spec.workdir / "worker.log").string(),
                                                   .env = spec.env,
                                                   .limits = {.address_space_bytes = spec.address_space_bytes}};
  std::lock_guard lock(mutex_);
  for (int attempt = 0;; ++attempt) {
    if (exited_locked()) {
      spdlog::warn("the worker zygote had died (log {}); starting a new one", log_path_.string());
      start();
    }
    try {
      control_.send(req);
      control_.send_fd(sv[1]);
      Message reply = control_.recv(after(60));
      ::close(sv[1]);
      const auto spawned = protocol::read<protocol::SpawnReply>(reply.header);
      if (!spawned.ok) throw Error(ErrorKind::worker, "zygote refused to spawn: " + spawned.error);
      if (!spawned.pid) throw Error(ErrorKind::worker, "the zygote's spawn reply has no pid");
      const pid_t pid = *spawned.pid;
      workers_.insert(pid);
      return {pid, std::move(mine)};
    } catch (const ChannelClosed&) {
      // It died during the request: wait for its exit, then start a new one (once).
      for (int i = 0; i < 100 && !exited_locked(); ++i) ::usleep(10000);
      if (attempt == 0 && pid_ <= 0) continue;
      ::close(sv[1]);
      throw Error(ErrorKind::worker, "the worker zygote died; log " + log_path_.string() + ":\n" + tail_of(log_path_));
    } catch (const ChannelTimeout&) {
      ::close(sv[1]);
      throw Error(ErrorKind::worker, "the worker zygote did not answer a spawn request");
    }
  }
}

std::set<pid_t> Zygote::workers() {
  std::lock_guard lock(mutex_);
  return workers_;
}

ExitStatus Zygote::reap(pid_t pid, double timeout_s) {
  std::lock_guard lock(mutex_);
  if (!workers_.erase(pid) || exited_locked()) {
    // Not a child of the zygote that lives now: it died with its zygote (PR_SET_PDEATHSIG).
    ::kill(-pid, SIGKILL);
    return {SIGKILL, 0};
  }
  try {
    control_.send(protocol::ReapRequest{.pid = pid, .timeout = timeout_s});
    const auto reply = protocol::read<protocol::ReapReply>(control_.recv(after(timeout_s + 30)).header);
    return {reply.signal, reply.exit_code};
  } catch (const ChannelTimeout&) {
    throw Error(ErrorKind::worker, "the worker zygote did not answer a reap request; log " + log_path_.string());
  } catch (const std::exception&) {
    for (int i = 0; i < 100 && !exited_locked(); ++i) ::usleep(10000);
    if (pid_ > 0) died_locked();
    ::kill(-pid, SIGKILL);
    return {SIGKILL, 0};
  }
}

Worker::Worker(Zygote& zygote, const SpawnSpec& spec) : zygote_(zygote), pid_(-1) {
  auto [pid, channel] = zygote.spawn(spec);
  pid_ = pid;
  channel_ = std::move(channel);
#ifdef SYS_pidfd_open
  // The worker's exit ends any wait on its channel, even while a process it forked holds the
  // socket open (without it a dead worker was noticed only at the stage's time limit).
  const long pidfd = ::syscall(SYS_pidfd_open, pid, 0);
  if (pidfd >= 0) channel_.watch(static_cast<int>(pidfd));
#endif
}

Worker::~Worker() {
  if (!exit_) {
    try {
      kill();
    } catch (...) {
    }
  }
}

Message Worker::request(const nlohmann::json& header, const std::vector<Blob>& blobs,
                        double timeout_s) {
  try {
    // The deadline moves by the time kgym keeps this worker stopped meanwhile (another
    // evaluation's timing: QuietDevice), which is not this worker's time.
    const Deadline base = after(timeout_s);
    const double stopped0 = stopped_ms(pid_);
    const DeadlineFn deadline = [&] {
      const double extra_ms = stopped_ms(pid_) - stopped0;
      return base + std::chrono::microseconds(static_cast<long long>(extra_ms * 1000));
    };
    channel_.send(header, blobs, deadline);
    return channel_.recv(deadline);
  } catch (const ChannelClosed&) {
    channel_.close();
    exit_ = zygote_.reap(pid_, 5.0);
    throw;
  } catch (const ChannelTimeout&) {
    kill();
    throw;
  }
}

ExitStatus Worker::finish() {
  if (exit_) return *exit_;
  try {
    channel_.send(protocol::ExitRequest{}, {}, after(5));
  } catch (const std::exception&) {
  }
  channel_.close();
  exit_ = zygote_.reap(pid_, 5.0);
  return *exit_;
}

ExitStatus Worker::kill() {
  if (exit_) return *exit_;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  channel_.close();
  exit_ = zygote_.reap(pid_, 5.0);
  return *exit_;
}

}  // namespace kgym::runner
