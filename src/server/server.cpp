// The HTTP + WebSocket server (server.hpp) on Boost.Beast, blocking I/O, one thread per connection.
#include "kgym/server.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <spdlog/spdlog.h>

#include "api_json.hpp"
#include "batch.hpp"
#include "prometheus.hpp"
#include "kgym/returns.hpp"

namespace kgym {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using nlohmann::json;

/// True when the peer has hung up (or shut down its sending side): POLLRDHUP sees that even with
/// unread data in the socket buffer.
bool peer_gone(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

std::string url_decode(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i] == '+' ? ' ' : s[i];
    }
  }
  return out;
}

/// The value of `key` in a query string "a=1&b=2", or "".
std::string query_param(const std::string& query, const std::string& key) {
  std::size_t pos = 0;
  while (pos <= query.size()) {
    std::size_t amp = query.find('&', pos);
    std::string pair = query.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
    std::size_t eq = pair.find('=');
    if (pair.substr(0, eq) == key) return eq == std::string::npos ? "" : url_decode(pair.substr(eq + 1));
    if (amp == std::string::npos) break;
    pos = amp + 1;
  }
  return {};
}

/// After refusing a request whose body is still arriving: stop sending, then read and drop what
/// the client still sends (bounded), so that it sees the response instead of a reset connection.
void drain(tcp::socket& socket) {
  beast::error_code ec;
  socket.shutdown(tcp::socket::shutdown_send, ec);
  timeval tv{5, 0};
  setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char sink[65536];
  for (std::size_t total = 0; total < 64u * 1024 * 1024;) {
    std::size_t n = socket.read_some(net::buffer(sink), ec);
    if (ec) break;
    total += n;
  }
}

json latency_json(const LatencySummary& s) {
  return {{"count", s.count}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"max", s.max}};
}

}  // namespace

struct Server::Impl {
  Gym& gym;
  Scheduler& scheduler;
  ServerConfig config;
  net::io_context ioc;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::thread accept_thread;
  std::mutex mutex;
  std::condition_variable cv;
  std::set<int> fds;          // open connection sockets, to hang up on stop
  std::size_t connections = 0;
  bool stopping = false;
  bool started = false;
  api::BatchRunner batches;

  Impl(Gym& g, Scheduler& s, ServerConfig c) : gym(g), scheduler(s), config(std::move(c)), batches(g) {}

  json health() {
    auto m = scheduler.metrics();
    auto g = gym.metrics();
    return {{"status", "healthy"},
            {"queue_length", m.queue_length},
            {"busy_workers", m.busy_workers},
            {"workers", m.workers},
            {"open_episodes", g.open_episodes},
            {"eval_latency_ms", latency_json(m.eval_ms)},
            {"queue", queue_status()}};
  }

  json queue_status() { return config.queue_status ? config.queue_status() : json(nullptr); }

  /// GET /metrics answers Prometheus text unless the client asks for JSON (Accept:
  /// application/json); /metrics.json is always JSON.
  bool wants_prometheus(const http::request<http::string_body>& req) {
    const std::string target(req.target());
    return req.method() == http::verb::get && target.substr(0, target.find('?')) == "/metrics" &&
           std::string(req[http::field::accept]).find("application/json") == std::string::npos;
  }

  json metrics() {
    auto m = scheduler.metrics();
    auto g = gym.metrics();
    json devices = json::array();
    for (const auto& d : m.devices) devices.push_back({{"device", d.device}, {"workers", d.workers}, {"busy", d.busy}});
    return {{"queue_length", m.queue_length},
            {"workers", m.workers},
            {"busy_workers", m.busy_workers},
            {"devices", devices},
            {"evaluations", {{"submitted", m.submitted}, {"completed", m.completed}, {"failed", m.failed}, {"cancelled", m.cancelled}}},
            {"eval_latency_ms", latency_json(m.eval_ms)},
            {"queue_wait_ms", latency_json(m.wait_ms)},
            {"step_latency_ms", latency_json(g.step_ms)},
            {"open_episodes", g.open_episodes},
            {"active_steps", g.active_steps},
            {"resets", g.resets},
            {"steps", g.steps},
            {"errors", g.errors},
            {"outcomes", m.outcomes},
            {"queue", queue_status()}};
  }

  /// OpenEnv's readme_content: what a client needs to drive an episode, in Markdown (the full
  /// protocol is docs/server.md; the JSON schemas are GET /schema).
  static constexpr const char* kReadme =
      "# kgym\n\n"
      "An episode is one task (a PyTorch reference `Model`) and up to `max_turns` turns. POST /reset "
      "(optional `task_id`, `split`, `seed`, `options`) opens one; its observation's `prompt` asks for a "
      "faster `ModelNew` with the same outputs.\n\n"
      "## Actions (POST /step with `episode_id` and `action`)\n\n"
      "- `{\"type\": \"submit_kernel\", \"code\": \"...\"}`: one turn; the `ModelNew` source (a fenced code "
      "block is extracted) is judged for policy, build, correctness on secret cases and speed against eager "
      "PyTorch and torch.compile.\n"
      "- `{\"type\": \"inspect_evaluation\", \"turn\": N}`: that turn's feedback again (uses no turn).\n"
      "- `{\"type\": \"finalize\"}`: ends the episode (uses no turn).\n\n"
      "## Observation\n\n"
      "`episode_id`, `task_id`, `turn` (turns used), `max_turns`, `prompt` (the next user message), "
      "`feedback` (the verdict: `outcome`, `correct`, `speedup_eager` and its 95% interval, failing case, "
      "policy hits), `feedback_text`, `history` (earlier turns, compressed) and, once the episode is done, "
      "`returns` (per-turn rewards, discounted returns, `final_reward`: the best correct turn's).\n\n"
      "A turn's `reward` is the episode's reward function (`options.reward`, one of `rewards`) of its "
      "verdict. "
      "Tasks: `tasks`; schemas: GET /schema; the protocol: docs/server.md.\n";

  json metadata() {
    json tasks = json::array();
    for (const auto& t : gym.tasks()) tasks.push_back(t.id);
    return {{"name", "kgym"},
            {"description", "Kernel gym: write faster GPU kernels (ModelNew) for PyTorch reference tasks; "
                            "each submission is judged for policy, build, correctness and speed."},
            {"version", config.version},
            {"readme_content", kReadme},
            {"documentation_url", "docs/server.md"},
            {"actions", {"submit_kernel", "inspect_evaluation", "finalize"}},
            {"rewards", reward_names()},
            {"devices", scheduler.describe()},
            {"tasks", tasks}};
  }

  /// Routes one HTTP request; throws for every error (mapped once by the caller).
  std::pair<int, json> route(http::verb method, const std::string& target, const std::string& body, int fd) {
    std::size_t q = target.find('?');
    const std::string path = target.substr(0, q);
    const std::string query = q == std::string::npos ? "" : target.substr(q + 1);
    auto require = [&](http::verb want) {
      if (method != want) {
        throw api::ApiError(405, "METHOD_NOT_ALLOWED",
                            path + " takes " + std::string(http::to_string(want)) + ", not " + std::string(http::to_string(method)));
      }
    };
    if (path == "/health") return require(http::verb::get), std::pair{200, health()};
    if (path == "/metrics" || path == "/metrics.json") return require(http::verb::get), std::pair{200, metrics()};
    if (path == "/metadata") return require(http::verb::get), std::pair{200, metadata()};
    if (path == "/schema") return require(http::verb::get), std::pair{200, api::schemas()};
    if (path == "/reset") {
      require(http::verb::post);
      ResetRequest r = api::parse_reset(api::parse_body(body));
      return {200, api::observation_reply(gym.reset(r))};
    }
    if (path == "/step") {
      require(http::verb::post);
      json j = api::parse_body(body);
      std::string id = api::episode_id_of(j);
      if (!j.contains("action")) throw RequestError(RequestProblem::malformed, "a step needs `action`");
      Action a = api::parse_action(j["action"]);
      return {200, api::observation_reply(gym.step(id, a, [this, fd] { return stopping_now() || peer_gone(fd); }))};
    }
    if (path == "/state") {
      require(http::verb::get);
      std::string id = query_param(query, "episode_id");
      if (id.empty()) throw RequestError(RequestProblem::malformed, "GET /state needs ?episode_id=... (over HTTP)");
      return {200, api::state_json(gym.state(id))};
    }
    if (path == "/close") {
      require(http::verb::post);
      std::string id = api::episode_id_of(api::parse_body(body));
      gym.close(id);
      return {200, json{{"closed", id}}};
    }
    if (path == "/advantages") {
      require(http::verb::post);
      api::AdvantageRequest r = api::parse_advantages(api::parse_body(body));
      std::vector<double> a = r.method == "dr_grpo" ? dr_grpo_advantages(r.returns) : grpo_advantages(r.returns, r.eps);
      return {200, json{{"method", r.method}, {"advantages", a}}};
    }
    if (path == "/evaluate_many") return require(http::verb::post), batches.evaluate_many(api::parse_body(body));
    if (path == "/step_many") return require(http::verb::post), batches.step_many(api::parse_body(body));
    if (path == "/batch") {
      require(http::verb::get);
      std::string wait = query_param(query, "wait_s");
      return batches.poll(query_param(query, "handle"), wait.empty() ? 120.0 : std::clamp(std::atof(wait.c_str()), 0.0, 3600.0));
    }
    if (path == "/reward") return require(http::verb::post), std::pair{200, batches.reward(api::parse_body(body), body)};
    throw api::ApiError(404, "NOT_FOUND", "no route " + path + "; see docs/server.md");
  }

  bool stopping_now() {
    std::lock_guard lock(mutex);
    return stopping;
  }

  http::response<http::string_body> reply(unsigned version, bool keep_alive, int status, const json& body) {
    http::response<http::string_body> res{static_cast<http::status>(status), version};
    res.set(http::field::server, "kgym/" + config.version);
    res.set(http::field::content_type, "application/json");
    res.keep_alive(keep_alive);
    res.body() = body.dump(-1, ' ', false, json::error_handler_t::replace);
    res.prepare_payload();
    return res;
  }

  /// One WebSocket session: OpenEnv messages {"type": "reset|step|state|close", "data": ...}.
  /// Episodes opened here belong to the session and are closed (queued work cancelled) when it ends.
  void serve_websocket(tcp::socket socket, const http::request<http::string_body>& req) {
    const int fd = socket.native_handle();
    websocket::stream<tcp::socket> ws(std::move(socket));
    ws.read_message_max(config.max_body_bytes);
    ws.accept(req);
    std::string episode;
    for (;;) {
      beast::flat_buffer buffer;
      beast::error_code ec;
      ws.read(buffer, ec);
      if (ec) break;
      bool close = false;
      json out;
      try {
        json msg = api::parse_body(beast::buffers_to_string(buffer.data()));
        std::string type = msg.value("type", "");
        json data = msg.contains("data") && !msg["data"].is_null() ? msg["data"] : json::object();
        if (type == "reset") {
          if (!data.is_object()) throw RequestError(RequestProblem::malformed, "reset `data` must be an object");
          Observation o = gym.reset(api::parse_reset(data));
          if (!episode.empty()) gym.close(episode);
          episode = o.episode_id;
          out = {{"type", "observation"}, {"data", api::observation_reply(o)}};
        } else if (type == "step") {
          if (episode.empty()) throw RequestError(RequestProblem::unknown_episode, "no episode in this session; send a reset first");
          const json& action = data.is_object() && data.contains("action") ? data["action"] : data;
          Action a = api::parse_action(action);
          Observation o = gym.step(episode, a, [this, fd] { return stopping_now() || peer_gone(fd); });
          out = {{"type", "observation"}, {"data", api::observation_reply(o)}};
        } else if (type == "state") {
          if (episode.empty()) throw RequestError(RequestProblem::unknown_episode, "no episode in this session; send a reset first");
          out = {{"type", "state"}, {"data", api::state_json(gym.state(episode))}};
        } else if (type == "close") {
          close = true;
        } else {
          throw api::ApiError(400, "UNKNOWN_TYPE", "unknown message type \"" + type + "\"; use reset, step, state or close");
        }
      } catch (...) {
        gym.count_error();
        out = api::error_reply(std::current_exception()).body;
      }
      if (close) {
        ws.close(websocket::close_code::normal, ec);
        break;
      }
      ws.text(true);
      ws.write(net::buffer(out.dump(-1, ' ', false, json::error_handler_t::replace)), ec);
      if (ec) break;
    }
    if (!episode.empty()) gym.close(episode);
  }

  void serve_connection(tcp::socket socket) {
    const int fd = socket.native_handle();
    beast::flat_buffer buffer;
    try {
      for (;;) {
        http::request_parser<http::string_body> parser;
        parser.body_limit(config.max_body_bytes);
        beast::error_code ec;
        http::read(socket, buffer, parser, ec);
        if (ec == http::error::end_of_stream || ec == net::error::eof) break;
        if (ec) {
          if (ec == http::error::body_limit) {
            gym.count_error();
            json body = {{"type", "error"}, {"data", {{"message", "the request body exceeds " + std::to_string(config.max_body_bytes) + " bytes"}, {"code", "PAYLOAD_TOO_LARGE"}}}};
            http::write(socket, reply(11, false, 413, body), ec);
            drain(socket);
          }
          break;
        }
        http::request<http::string_body> req = parser.release();
        if (websocket::is_upgrade(req)) {
          if (req.target() != "/ws") {
            http::write(socket, reply(req.version(), false, 404, json{{"type", "error"}, {"data", {{"message", "WebSocket endpoint is /ws"}, {"code", "NOT_FOUND"}}}}), ec);
            break;
          }
          serve_websocket(std::move(socket), req);
          return;
        }
        if (wants_prometheus(req)) {
          http::response<http::string_body> res{http::status::ok, req.version()};
          res.set(http::field::server, "kgym/" + config.version);
          res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
          res.keep_alive(req.keep_alive());
          try {
            res.body() = api::prometheus_text(scheduler.metrics(), gym.metrics(), queue_status());
          } catch (const std::exception& e) {
            res.result(http::status::internal_server_error);
            res.body() = std::string("# kgym: metrics failed: ") + e.what() + "\n";
          }
          res.prepare_payload();
          http::write(socket, res, ec);
          if (ec || !req.keep_alive()) break;
          continue;
        }
        int status = 200;
        json body;
        try {
          std::tie(status, body) = route(req.method(), std::string(req.target()), req.body(), fd);
        } catch (...) {
          gym.count_error();
          auto e = api::error_reply(std::current_exception());
          status = e.status;
          body = std::move(e.body);
        }
        http::write(socket, reply(req.version(), req.keep_alive(), status, body), ec);
        if (ec || !req.keep_alive()) break;
      }
      beast::error_code ignored;
      socket.shutdown(tcp::socket::shutdown_send, ignored);
    } catch (const std::exception& e) {
      spdlog::debug("connection ended: {}", e.what());
    }
  }

  void accept_loop() {
    for (;;) {
      tcp::socket socket(ioc);
      beast::error_code ec;
      acceptor->accept(socket, ec);
      if (stopping_now()) return;
      if (ec) continue;
      std::unique_lock lock(mutex);
      if (connections >= config.max_connections) {
        lock.unlock();
        json body = {{"type", "error"}, {"data", {{"message", "too many connections"}, {"code", "CAPACITY_REACHED"}}}};
        http::write(socket, reply(11, false, 503, body), ec);
        continue;
      }
      ++connections;
      const int fd = socket.native_handle();
      fds.insert(fd);
      lock.unlock();
      std::thread([this, fd, s = std::move(socket)]() mutable {
        serve_connection(std::move(s));
        std::lock_guard done(mutex);
        fds.erase(fd);
        --connections;
        cv.notify_all();
      }).detach();
    }
  }
};

Server::Server(Gym& gym, Scheduler& scheduler, ServerConfig config)
    : impl_(std::make_unique<Impl>(gym, scheduler, std::move(config))) {}

Server::~Server() { stop(); }

std::uint16_t Server::start() {
  auto& I = *impl_;
  beast::error_code ec;
  auto address = net::ip::make_address(I.config.host, ec);
  if (ec) throw Error(ErrorKind::usage, "invalid --host address \"" + I.config.host + "\"");
  tcp::endpoint endpoint{address, I.config.port};
  I.acceptor = std::make_unique<tcp::acceptor>(I.ioc);
  I.acceptor->open(endpoint.protocol(), ec);
  if (!ec) I.acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) I.acceptor->bind(endpoint, ec);
  if (!ec) I.acceptor->listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    throw Error(ErrorKind::usage, "cannot listen on " + I.config.host + ":" + std::to_string(I.config.port) + ": " +
                                      ec.message() + " (choose another --port)");
  }
  I.started = true;
  std::uint16_t port = I.acceptor->local_endpoint().port();
  I.accept_thread = std::thread([&I] { I.accept_loop(); });
  return port;
}

void Server::stop() {
  auto& I = *impl_;
  {
    std::lock_guard lock(I.mutex);
    if (I.stopping || !I.started) return;
    I.stopping = true;
  }
  ::shutdown(I.acceptor->native_handle(), SHUT_RDWR);  // wakes the blocking accept
  I.accept_thread.join();
  std::unique_lock lock(I.mutex);
  for (int fd : I.fds) ::shutdown(fd, SHUT_RDWR);  // wakes blocking reads; waiting steps see the hang-up
  lock.unlock();
  I.batches.stop();  // cancels queued batch evaluations, waits for running ones (wakes /reward waiters)
  lock.lock();
  I.cv.wait(lock, [&I] { return I.connections == 0; });
  beast::error_code ec;
  I.acceptor->close(ec);
}

}  // namespace kgym
