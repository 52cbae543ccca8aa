#pragma once
// A small RAII wrapper over one hiredis connection (blocking). Internal to src/queue/.
#include <string>
#include <vector>

#include "kgym/error.hpp"
#include "kgym/queue.hpp"

struct redisContext;

namespace kgym::queue {

/// Redis cannot be reached or the connection broke: the caller reconnects (with back-off).
class Unreachable : public Error {
 public:
  explicit Unreachable(const std::string& message) : Error(ErrorKind::worker, message) {}
};

/// One reply, copied out of hiredis's reply tree.
struct Reply {
  enum class Type { string, array, integer, nil, status, error };
  Type type = Type::nil;
  std::string str;              ///< string, status and error replies
  long long integer = 0;
  std::vector<Reply> elements;  ///< arrays
  bool nil() const { return type == Type::nil; }
};

/// One connection. Not thread-safe: one per thread.
class Connection {
 public:
  /// Connects (and SELECTs url.db). Throws Unreachable naming the address on failure.
  Connection(const QueueUrl& url, double timeout_s);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Runs one command. Throws Unreachable when the connection fails (it is then unusable) and
  /// Error(worker) with Redis's message for an error reply. `read_timeout_s` > 0 sets the socket
  /// timeout for this command (for blocking commands), else the connect timeout applies.
  Reply command(const std::vector<std::string>& argv, double read_timeout_s = 0);
  bool broken() const noexcept { return broken_; }

 private:
  redisContext* ctx_ = nullptr;
  std::string where_;
  double timeout_s_;
  bool broken_ = false;
};

/// Milliseconds since the Unix epoch (the clock shared by hosts, for queue wait and heartbeats).
long long now_ms();

}  // namespace kgym::queue
