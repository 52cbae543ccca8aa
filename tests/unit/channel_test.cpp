// The worker channel's frames (src/runner/channel.hpp): inline blobs, and blobs passed as sealed
// memfds, which the receiver accepts only when sealed against writing and of the declared size.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "../../src/runner/channel.hpp"
#include "kgym/error.hpp"

namespace {

using kgym::runner::Blob;
using kgym::runner::Channel;
using kgym::runner::Message;

struct Pair {
  Channel a, b;
  Pair() {
    int sv[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    a = Channel(sv[0]);
    b = Channel(sv[1]);
  }
};

kgym::runner::Deadline soon() { return std::chrono::steady_clock::now() + std::chrono::seconds(5); }

/// A memfd holding `bytes`, sealed with `seals` (0: none).
Blob memfd_blob(const std::string& bytes, int seals, std::uint64_t declared) {
  const int fd = ::memfd_create("test-blob", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  if (seals) {
    EXPECT_EQ(::fcntl(fd, F_ADD_SEALS, seals), 0);
  }
  Blob b;
  b.fd = std::shared_ptr<int>(new int(fd), [](int* f) {
    ::close(*f);
    delete f;
  });
  b.size = declared;
  return b;
}

std::string read_all(int fd, std::size_t n) {
  std::string out(n, '\0');
  EXPECT_EQ(::pread(fd, out.data(), n, 0), static_cast<ssize_t>(n));
  return out;
}

constexpr int kSealed = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

TEST(Channel, InlineAndSharedBlobsRoundTrip) {
  Pair p;
  const std::string big(3 << 20, 'x');
  p.a.send({{"op", "x"}}, {Blob(std::string("abc")), memfd_blob(big, kSealed, big.size()), Blob(std::string())},
           soon());
  Message m = p.b.recv(soon());
  EXPECT_EQ(m.header.value("op", ""), "x");
  ASSERT_EQ(m.blobs.size(), 3u);
  EXPECT_FALSE(m.blobs[0].shared());
  EXPECT_EQ(m.blobs[0].bytes, "abc");
  ASSERT_TRUE(m.blobs[1].shared());
  EXPECT_EQ(m.blobs[1].size, big.size());
  EXPECT_EQ(read_all(*m.blobs[1].fd, big.size()), big);
  EXPECT_TRUE(m.blobs[2].bytes.empty());
  // Relayed as received (the supervisor's path from one worker to the other).
  p.b.send({{"op", "y"}}, m.blobs, soon());
  Message back = p.a.recv(soon());
  ASSERT_TRUE(back.blobs[1].shared());
  EXPECT_EQ(read_all(*back.blobs[1].fd, big.size()), big);
}

TEST(Channel, UnsealedSharedBlobIsRejected) {
  Pair p;
  p.a.send({{"op", "x"}}, {memfd_blob("hello", 0, 5)}, soon());
  EXPECT_THROW(p.b.recv(soon()), kgym::Error);
}

TEST(Channel, WritableSharedBlobIsRejected) {
  Pair p;  // shrink and grow sealed, but not write: the sender could still change the bytes
  p.a.send({{"op", "x"}}, {memfd_blob("hello", F_SEAL_SHRINK | F_SEAL_GROW, 5)}, soon());
  EXPECT_THROW(p.b.recv(soon()), kgym::Error);
}

TEST(Channel, SharedBlobOfWrongDeclaredSizeIsRejected) {
  Pair p;
  p.a.send({{"op", "x"}}, {memfd_blob("hello", kSealed, 4)}, soon());
  EXPECT_THROW(p.b.recv(soon()), kgym::Error);
}

TEST(Channel, NonMemoryFileIsRejected) {
  Pair p;
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  Blob b;
  b.fd = std::shared_ptr<int>(new int(pipefd[0]), [](int* f) {
    ::close(*f);
    delete f;
  });
  b.size = 0;
  p.a.send({{"op", "x"}}, {b}, soon());
  EXPECT_THROW(p.b.recv(soon()), kgym::Error);
  ::close(pipefd[1]);
}

}  // namespace
