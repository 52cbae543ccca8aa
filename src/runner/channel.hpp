#pragma once
// A framed message channel over a Unix stream socket (the wire format of
// python/kgym_worker/protocol.py): u32 header length, u32 blob count, JSON header, then per blob
// a u64 length and its bytes. A length with bit 63 set is a blob passed as a sealed memfd (its
// size in the low bits, no bytes on the stream); the frame's memfds travel as SCM_RIGHTS with
// its first 8 bytes, in blob order. Internal to the runner component.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kgym::runner {

/// Largest number of memfd blobs in one frame.
inline constexpr std::size_t kMaxSharedBlobs = 64;
/// Blobs in one frame (a reply declaring more is a broken protocol).
inline constexpr std::uint32_t kMaxBlobs = 4096;
/// Nesting of a frame's JSON header (kgym's own headers stay below 20).
inline constexpr int kMaxJsonDepth = 64;

/// One blob of tensor bytes: inline, or a sealed memfd (a large tensor crossing from one worker to
/// the other through the supervisor without being copied through two sockets). On receipt a
/// memfd blob is checked: a regular file of exactly `size` bytes sealed against writing,
/// shrinking and growing (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW), so the sender cannot
/// change the bytes after sending them; anything else is a protocol error.
struct Blob {
  std::string bytes;         ///< inline bytes (empty for a memfd blob)
  std::shared_ptr<int> fd;   ///< the memfd (closed when the last copy of the blob goes), or null
  std::uint64_t size = 0;    ///< bytes in the memfd
  Blob() = default;
  Blob(std::string b) : bytes(std::move(b)) {}  // NOLINT: inline bytes convert implicitly
  bool shared() const { return fd != nullptr; }
};

/// One message: a JSON header and raw byte blobs (tensor bytes).
struct Message {
  nlohmann::json header;
  std::vector<Blob> blobs;
};

/// The peer closed the channel (process exited or crashed).
struct ChannelClosed : std::exception {
  const char* what() const noexcept override { return "worker channel closed"; }
};
/// The deadline passed before a whole message arrived.
struct ChannelTimeout : std::exception {
  const char* what() const noexcept override { return "worker channel timed out"; }
};

using Deadline = std::chrono::steady_clock::time_point;
/// A deadline that may move while it is waited for (read again at least once a second): a
/// worker's request deadline is extended by the time kgym kept the worker stopped (PausedTree).
using DeadlineFn = std::function<Deadline()>;

/// Owns a connected socket fd. Not thread-safe: one user at a time.
class Channel {
 public:
  explicit Channel(int fd = -1) : fd_(fd) {}
  ~Channel();
  Channel(Channel&& other) noexcept : fd_(other.fd_), watch_fd_(other.watch_fd_) {
    other.fd_ = -1;
    other.watch_fd_ = -1;
  }
  Channel& operator=(Channel&& other) noexcept;
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  int fd() const { return fd_; }
  /// Sends one message before `deadline`; throws ChannelClosed if the peer is gone and
  /// ChannelTimeout if it stops reading (a candidate must not block the supervisor).
  void send(const nlohmann::json& header, const std::vector<Blob>& blobs = {},
            Deadline deadline = Deadline::max());
  void send(const nlohmann::json& header, const std::vector<Blob>& blobs, const DeadlineFn& deadline);
  /// Sends a file descriptor (SCM_RIGHTS) with one dummy byte.
  void send_fd(int fd);
  /// Receives one message before `deadline`; throws ChannelClosed or ChannelTimeout.
  Message recv(Deadline deadline);
  Message recv(const DeadlineFn& deadline);
  /// Also ends a wait with ChannelClosed when `pidfd` (pidfd_open of the peer process; owned from
  /// now on) reports that the process exited and no data is waiting: a child the peer forked may
  /// hold the socket open after the peer died (seen: a candidate's daemon kept a dead worker's
  /// channel open until the stage's time limit).
  void watch(int pidfd);
  void close();

 private:
  void write_all(const void* data, std::size_t n, const DeadlineFn& deadline);
  /// With `fds`, reads with recvmsg and appends the descriptors that came along (SCM_RIGHTS).
  void read_exact(void* data, std::size_t n, const DeadlineFn& deadline, std::vector<int>* fds = nullptr);
  int fd_;
  int watch_fd_ = -1;
};

}  // namespace kgym::runner
