#include "channel.hpp"

#include <poll.h>
#include <sys/socket.h>
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
    other.fd_ = -1;
  }
  return *this;
}

void Channel::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void Channel::write_all(const void* data, std::size_t n, Deadline deadline) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t k = ::send(fd_, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {  // the peer is not reading: wait, bounded
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) throw ChannelTimeout();
        pollfd pfd{fd_, POLLOUT, 0};
        ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
        continue;
      }
      throw ChannelClosed();
    }
    p += k;
    n -= static_cast<std::size_t>(k);
  }
}

void Channel::read_exact(void* data, std::size_t n, Deadline deadline) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) throw ChannelTimeout();
    pollfd pfd{fd_, POLLIN, 0};
    int r = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (r < 0 && errno != EINTR) throw ChannelClosed();
    if (r <= 0) continue;
    ssize_t k = ::recv(fd_, p, n, 0);
    if (k == 0) throw ChannelClosed();
    if (k < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw ChannelClosed();
    }
    p += k;
    n -= static_cast<std::size_t>(k);
  }
}

void Channel::send(const nlohmann::json& header, const std::vector<std::string>& blobs, Deadline deadline) {
  if (fd_ < 0) throw ChannelClosed();
  const std::string text = header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  uint32_t head[2] = {static_cast<uint32_t>(text.size()), static_cast<uint32_t>(blobs.size())};
  write_all(head, sizeof head, deadline);
  write_all(text.data(), text.size(), deadline);
  for (const auto& b : blobs) {
    uint64_t len = b.size();
    write_all(&len, sizeof len, deadline);
    write_all(b.data(), b.size(), deadline);
  }
}

void Channel::send_fd(int fd) {
  char byte = 'F';
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* cm = CMSG_FIRSTHDR(&msg);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(cm), &fd, sizeof(int));
  while (::sendmsg(fd_, &msg, MSG_NOSIGNAL) < 0) {
    if (errno != EINTR) throw ChannelClosed();
  }
}

Message Channel::recv(Deadline deadline) {
  if (fd_ < 0) throw ChannelClosed();
  uint32_t head[2];
  read_exact(head, sizeof head, deadline);
  if (head[0] > (64u << 20)) throw Error(ErrorKind::worker, "worker sent an oversized frame header");
  std::string text(head[0], '\0');
  read_exact(text.data(), text.size(), deadline);
  Message m;
  try {
    m.header = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::worker, std::string("worker sent malformed JSON: ") + e.what());
  }
  m.blobs.resize(head[1]);
  for (auto& b : m.blobs) {
    uint64_t len = 0;
    read_exact(&len, sizeof len, deadline);
    if (len > (64ull << 30)) throw Error(ErrorKind::worker, "worker sent an oversized blob");
    b.resize(len);
    read_exact(b.data(), len, deadline);
  }
  return m;
}

}  // namespace kgym::runner
