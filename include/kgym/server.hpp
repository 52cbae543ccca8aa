#pragma once
// The HTTP + WebSocket server of the RL environment (OpenEnv 0.3 protocol; docs/server.md).
// Thread model: one acceptor thread; one thread per connection doing blocking I/O (Boost.Beast);
// a step blocks only its own connection while its evaluation waits in the Scheduler's fair queue.
// While a step waits, the connection is polled: a client that hangs up cancels its queued work.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "kgym/gym.hpp"

namespace kgym {

struct ServerConfig {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;                      ///< 0: any free port (start() returns it)
  std::size_t max_body_bytes = 1024 * 1024;    ///< larger HTTP bodies / WS messages: 413
  std::size_t max_connections = 1024;          ///< more at once get 503 CAPACITY_REACHED
  std::string version = KGYM_VERSION;
  /// With `kgym serve --queue`: the queue's status (QueueEvaluator::status()), shown under
  /// "queue" in /health and /metrics.json and as Prometheus series in /metrics.
  std::function<nlohmann::json()> queue_status;
};

class Server {
 public:
  Server(Gym& gym, Scheduler& scheduler, ServerConfig config);
  ~Server();  ///< stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Binds and starts accepting; returns the bound port. Throws Error(usage) when the address
  /// cannot be bound (e.g. the port is in use), naming it.
  std::uint16_t start();
  /// Stops accepting, hangs up every connection and waits for their threads. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kgym
