#pragma once
// A framed message channel over a Unix stream socket (the wire format of
// python/kgym_worker/protocol.py): u32 header length, u32 blob count, JSON header, then per blob
// a u64 length and its bytes. Internal to the runner component.

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kgym::runner {

/// One message: a JSON header and raw byte blobs (tensor bytes).
struct Message {
  nlohmann::json header;
  std::vector<std::string> blobs;
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

/// Owns a connected socket fd. Not thread-safe: one user at a time.
class Channel {
 public:
  explicit Channel(int fd = -1) : fd_(fd) {}
  ~Channel();
  Channel(Channel&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Channel& operator=(Channel&& other) noexcept;
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  int fd() const { return fd_; }
  /// Sends one message before `deadline`; throws ChannelClosed if the peer is gone and
  /// ChannelTimeout if it stops reading (a candidate must not block the supervisor).
  void send(const nlohmann::json& header, const std::vector<std::string>& blobs = {},
            Deadline deadline = Deadline::max());
  /// Sends a file descriptor (SCM_RIGHTS) with one dummy byte.
  void send_fd(int fd);
  /// Receives one message before `deadline`; throws ChannelClosed or ChannelTimeout.
  Message recv(Deadline deadline);
  void close();

 private:
  void write_all(const void* data, std::size_t n, Deadline deadline);
  void read_exact(void* data, std::size_t n, Deadline deadline);
  int fd_;
};

}  // namespace kgym::runner
