#include "channel.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kgym/error.hpp"

namespace kgym::runner {

Channel::~Channel() { close(); }

Channel& Channel::operator=(Channel&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.fd_;
    watch_fd_ = other.watch_fd_;
    other.fd_ = -1;
    other.watch_fd_ = -1;
  }
  return *this;
}

void Channel::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (watch_fd_ >= 0) ::close(watch_fd_);
  watch_fd_ = -1;
}

void Channel::watch(int pidfd) {
  if (watch_fd_ >= 0) ::close(watch_fd_);
  watch_fd_ = pidfd;
}

void Channel::write_all(const void* data, std::size_t n, const DeadlineFn& deadline) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t k = ::send(fd_, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {  // the peer is not reading: wait, bounded
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline() - std::chrono::steady_clock::now());
        if (left.count() <= 0) throw ChannelTimeout();
        pollfd pfd[2] = {{fd_, POLLOUT, 0}, {watch_fd_, POLLIN, 0}};
        ::poll(pfd, watch_fd_ >= 0 ? 2 : 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
        if (!(pfd[0].revents & POLLOUT) && watch_fd_ >= 0 && (pfd[1].revents & POLLIN)) throw ChannelClosed();
        continue;
      }
      throw ChannelClosed();
    }
    p += k;
    n -= static_cast<std::size_t>(k);
  }
}

void Channel::read_exact(void* data, std::size_t n, const DeadlineFn& deadline, std::vector<int>* fds) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline() - std::chrono::steady_clock::now());
    if (left.count() <= 0) throw ChannelTimeout();
    pollfd pfd[2] = {{fd_, POLLIN, 0}, {watch_fd_, POLLIN, 0}};
    int r = ::poll(pfd, watch_fd_ >= 0 ? 2 : 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (r < 0 && errno != EINTR) throw ChannelClosed();
    if (r <= 0) continue;
    // The peer exited and nothing is left to read (data it sent before exiting is read first).
    if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) && watch_fd_ >= 0 && (pfd[1].revents & POLLIN))
      throw ChannelClosed();
    ssize_t k;
    if (fds) {
      iovec iov{p, n};
      alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxSharedBlobs)];
      msghdr msg{};
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
      k = ::recvmsg(fd_, &msg, MSG_CMSG_CLOEXEC);
      if (k > 0) {
        for (cmsghdr* cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
          if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) continue;
          const std::size_t count = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
          for (std::size_t i = 0; i < count; ++i) {
            int got;
            std::memcpy(&got, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
            fds->push_back(got);
          }
        }
        if (msg.msg_flags & MSG_CTRUNC) {
          for (int f : *fds) ::close(f);
          fds->clear();
          throw Error(ErrorKind::worker, "worker sent more than " + std::to_string(kMaxSharedBlobs) +
                                             " shared blobs in one frame");
        }
      }
    } else {
      k = ::recv(fd_, p, n, 0);
    }
    if (k == 0) throw ChannelClosed();
    if (k < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw ChannelClosed();
    }
    p += k;
    n -= static_cast<std::size_t>(k);
  }
}

namespace {

constexpr std::uint64_t kSharedBit = 1ull << 63;

/// Closes the descriptors it holds unless released (the received memfds of a rejected frame).
struct FdList {
  std::vector<int> fds;
  ~FdList() {
    for (int f : fds)
      if (f >= 0) ::close(f);
  }
};

/// One sendmsg of `data` (at most `n` bytes; returns how many went) with `fds` as SCM_RIGHTS.
/// Throws ChannelClosed when the peer is gone.
std::size_t send_with_fds(int sock, const void* data, std::size_t n, const std::vector<int>& fds) {
  iovec iov{const_cast<void*>(data), n};
  std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()), 0);
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  cmsghdr* cm = CMSG_FIRSTHDR(&msg);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
  std::memcpy(CMSG_DATA(cm), fds.data(), sizeof(int) * fds.size());
  ssize_t k;
  while ((k = ::sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0) {
    if (errno != EINTR) throw ChannelClosed();
  }
  return static_cast<std::size_t>(k);
}

/// Throws unless `fd` is a regular file of `size` bytes sealed against write, shrink and grow.
void check_sealed(int fd, std::uint64_t size) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    throw Error(ErrorKind::worker, "worker sent a shared blob that is not a memory file");
  if (static_cast<std::uint64_t>(st.st_size) != size)
    throw Error(ErrorKind::worker, "worker sent a shared blob of " + std::to_string(st.st_size) +
                                       " bytes, declared " + std::to_string(size));
  const int seals = ::fcntl(fd, F_GET_SEALS);
  const int need = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW;
  if (seals < 0 || (seals & need) != need)
    throw Error(ErrorKind::worker, "worker sent a shared blob that is not sealed against writing");
}

}  // namespace

void Channel::send(const nlohmann::json& header, const std::vector<Blob>& blobs, Deadline deadline) {
  send(header, blobs, DeadlineFn([deadline] { return deadline; }));
}

void Channel::send(const nlohmann::json& header, const std::vector<Blob>& blobs, const DeadlineFn& deadline) {
  if (fd_ < 0) throw ChannelClosed();
  const std::string text = header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  uint32_t head[2] = {static_cast<uint32_t>(text.size()), static_cast<uint32_t>(blobs.size())};
  std::vector<int> fds;
  for (const auto& b : blobs)
    if (b.shared()) fds.push_back(*b.fd);
  if (fds.size() > kMaxSharedBlobs) throw Error(ErrorKind::internal, "too many shared blobs in one frame");
  if (fds.empty()) {
    write_all(head, sizeof head, deadline);
  } else {  // the memfds ride with the frame's first 8 bytes
    const std::size_t k = send_with_fds(fd_, head, sizeof head, fds);
    if (k < sizeof head)
      write_all(reinterpret_cast<const char*>(head) + k, sizeof head - k, deadline);
  }
  write_all(text.data(), text.size(), deadline);
  for (const auto& b : blobs) {
    uint64_t len = b.shared() ? (b.size | kSharedBit) : b.bytes.size();
    write_all(&len, sizeof len, deadline);
    if (!b.shared()) write_all(b.bytes.data(), b.bytes.size(), deadline);
  }
}

void Channel::send_fd(int fd) {
  char byte = 'F';
  send_with_fds(fd_, &byte, 1, {fd});
}

namespace {
/// Whether the JSON text nests arrays and objects deeper than `limit` (strings skipped). A
/// worker's reply nested 3,000,000 levels deep (6 MB) parsed, and then every recursive use of it
/// (dump, re-sending it to the reference) overflowed the supervisor's stack (red team rt15).
bool nested_deeper_than(const std::string& text, int limit) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char ch : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (ch == '\\') escaped = true;
      else if (ch == '"') in_string = false;
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '[' || ch == '{') {
      if (++depth > limit) return true;
    } else if (ch == ']' || ch == '}') {
      --depth;
    }
  }
  return false;
}
}  // namespace

Message Channel::recv(Deadline deadline) { return recv(DeadlineFn([deadline] { return deadline; })); }

Message Channel::recv(const DeadlineFn& deadline) {
  if (fd_ < 0) throw ChannelClosed();
  uint32_t head[2];
  FdList received;
  read_exact(head, sizeof head, deadline, &received.fds);
  if (head[0] > (64u << 20)) throw Error(ErrorKind::worker, "worker sent an oversized frame header");
  std::string text(head[0], '\0');
  read_exact(text.data(), text.size(), deadline);
  if (head[1] > kMaxBlobs)  // resized below before anything else is read (red team rt15: 2^32 - 1, bad_alloc)
    throw Error(ErrorKind::worker, "worker declared " + std::to_string(head[1]) + " blobs in one frame (at most " +
                                       std::to_string(kMaxBlobs) + ")");
  if (nested_deeper_than(text, kMaxJsonDepth))
    throw Error(ErrorKind::worker, "worker sent JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  Message m;
  try {
    m.header = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::worker, std::string("worker sent malformed JSON: ") + e.what());
  }
  m.blobs.resize(head[1]);
  std::size_t next_fd = 0;
  for (auto& b : m.blobs) {
    uint64_t len = 0;
    read_exact(&len, sizeof len, deadline);
    if (len & kSharedBit) {
      if (next_fd >= received.fds.size())
        throw Error(ErrorKind::worker, "worker declared a shared blob without sending its file");
      b.size = len & ~kSharedBit;
      check_sealed(received.fds[next_fd], b.size);
      b.fd = std::shared_ptr<int>(new int(received.fds[next_fd]), [](int* f) {
        ::close(*f);
        delete f;
      });
      received.fds[next_fd++] = -1;  // owned by the blob now
      continue;
    }
    if (len > (16ull << 30))  // larger tensors travel as memfds
      throw Error(ErrorKind::worker, "worker sent an inline blob of " + std::to_string(len) + " bytes (at most 16 GiB)");
    try {
      b.bytes.resize(len);
    } catch (const std::bad_alloc&) {  // a frame announcing more bytes than memory (red team a14)
      throw Error(ErrorKind::worker, "worker announced a blob of " + std::to_string(len) +
                                         " bytes, more than this machine can hold");
    }
    read_exact(b.bytes.data(), len, deadline);
  }
  if (next_fd != received.fds.size())
    throw Error(ErrorKind::worker, "worker sent files that no blob declared");
  return m;
}

}  // namespace kgym::runner
