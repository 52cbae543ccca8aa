// The scheduler, the environment (Gym) and the HTTP + WebSocket server, against a fake evaluator
// that returns recorded verdicts (deterministic, no Python).
#include <sys/socket.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kgym/evaluator.hpp"
#include "kgym/gym.hpp"
#include "kgym/scheduler.hpp"
#include "kgym/server.hpp"

using namespace kgym;
using nlohmann::json;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

/// Returns the verdict recorded for the code (by its first line), or a passed verdict whose
/// speedup is parsed from "speedup=<x>" in the code. Can hold evaluations behind a gate.
class RecordedEvaluator final : public Evaluator {
 public:
  std::map<std::string, Verdict> recorded;

  Verdict evaluate(const Task& task, const Candidate& candidate, const EvalOptions&) override {
    {
      std::unique_lock lock(mutex_);
      order_.push_back(candidate.id);
      ++started_;
      cv_.notify_all();
      cv_.wait(lock, [this] { return open_; });
    }
    if (candidate.code.find("raise-worker-error") != std::string::npos) {
      throw Error(ErrorKind::worker, "recorded worker failure");
    }
    std::string first = candidate.code.substr(0, candidate.code.find('\n'));
    auto it = recorded.find(first);
    Verdict v;
    if (it != recorded.end()) {
      v = it->second;
    } else {
      double speedup = 1.0;
      auto at = candidate.code.find("speedup=");
      if (at != std::string::npos) speedup = std::stod(candidate.code.substr(at + 8));
      v.outcome = Outcome::passed;
      v.gate = Gate::timing;
      v.correct = true;
      v.cases_passed = v.cases_total = 3;
      v.ref_runtime_ms = 1.0;
      v.runtime_ms = 1.0 / speedup;
      v.speedup_eager = speedup;
    }
    v.task_id = task.id;
    v.candidate_id = candidate.id;
    v.messages.insert(v.messages.begin(), "candidate " + candidate.id);
    return v;
  }
  std::string describe() const override { return "recorded"; }

  void close_gate() {
    std::lock_guard lock(mutex_);
    open_ = false;
  }
  void open_gate() {
    std::lock_guard lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }
  /// Waits (bounded) until `n` evaluations have started; false on timeout.
  bool wait_started(int n) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, std::chrono::seconds(30), [&] { return started_ >= n; });
  }
  std::vector<std::string> order() {
    std::lock_guard lock(mutex_);
    return order_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = true;
  int started_ = 0;
  std::vector<std::string> order_;
};

Candidate cand(const std::string& id, const std::string& code) {
  Candidate c;
  c.id = id;
  c.task_id = "t";
  c.code = code;
  return c;
}

Task make_task(const std::string& id, int level) {
  return {id, "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n",
          "test", level};
}

std::vector<Task> suite() { return {make_task("L1/19_ReLU", 1), make_task("L1/23_Softmax", 1), make_task("L2/1_Conv", 2)}; }

Verdict incorrect_verdict() {
  Verdict v;
  v.outcome = Outcome::incorrect;
  v.gate = Gate::correctness;
  v.cases_passed = 1;
  v.cases_total = 3;
  CaseRecord c;
  c.index = 1;
  c.mismatches = 3;
  c.numel = 10;
  c.first_mismatch_index = {4};
  v.measurements.cases = {c};
  return v;
}

void set_timeouts(int fd) {
  timeval tv{30, 0};  // no test request may hang forever
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

struct Reply {
  int status = 0;
  json body;
};

Reply call(std::uint16_t port, http::verb verb, const std::string& target, const std::string& body = "") {
  net::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect({net::ip::make_address("127.0.0.1"), port});
  set_timeouts(socket.native_handle());
  http::request<http::string_body> req{verb, target, 11};
  req.set(http::field::host, "127.0.0.1");
  req.set(http::field::content_type, "application/json");
  req.body() = body;
  req.prepare_payload();
  http::write(socket, req);
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(socket, buffer, res);
  return {static_cast<int>(res.result_int()), json::parse(res.body())};
}

Reply post(std::uint16_t port, const std::string& target, const json& body) {
  return call(port, http::verb::post, target, body.dump());
}

struct WsClient {
  net::io_context ioc;
  websocket::stream<tcp::socket> ws{ioc};
  explicit WsClient(std::uint16_t port) {
    ws.next_layer().connect({net::ip::make_address("127.0.0.1"), port});
    set_timeouts(ws.next_layer().native_handle());
    ws.handshake("127.0.0.1", "/ws");
  }
  json send(const json& msg) {
    ws.write(net::buffer(msg.dump()));
    beast::flat_buffer buffer;
    ws.read(buffer);
    return json::parse(beast::buffers_to_string(buffer.data()));
  }
};

/// A server over the recorded evaluator on `workers` workers of one device.
struct Fixture {
  std::shared_ptr<RecordedEvaluator> evaluator = std::make_shared<RecordedEvaluator>();
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<Gym> gym;
  std::unique_ptr<Server> server;
  std::uint16_t port = 0;

  explicit Fixture(int workers = 2, std::size_t max_code_bytes = 4096) {
    evaluator->recorded["# incorrect"] = incorrect_verdict();
    scheduler = std::make_unique<Scheduler>(std::vector<Scheduler::Device>{{"cpu", evaluator}}, workers);
    GymConfig config;
    config.episode.max_turns = 3;
    config.episode.reward = parse_reward("stepped");
    config.episode.max_code_bytes = max_code_bytes;
    gym = std::make_unique<Gym>(suite(), *scheduler, config);
    server = std::make_unique<Server>(*gym, *scheduler, ServerConfig{});
    port = server->start();
  }
  ~Fixture() {
    evaluator->open_gate();
    server->stop();
  }
};

std::string code_of(const json& reply) { return reply["data"]["code"].get<std::string>(); }

}  // namespace

TEST(Scheduler, RoundRobinAcrossOwners) {
  auto ev = std::make_shared<RecordedEvaluator>();
  Scheduler s({{"cpu", ev}}, 1);
  ev->close_gate();
  Task t = make_task("t", 1);
  std::vector<std::shared_ptr<EvaluationTicket>> tickets;
  tickets.push_back(s.submit("A", t, cand("A1", "x"), {}));
  ASSERT_TRUE(ev->wait_started(1));  // A1 holds the only worker
  for (int i = 2; i <= 5; ++i) tickets.push_back(s.submit("A", t, cand("A" + std::to_string(i), "x"), {}));
  tickets.push_back(s.submit("B", t, cand("B1", "x"), {}));
  EXPECT_EQ(s.metrics().queue_length, 5u);
  EXPECT_EQ(s.metrics().busy_workers, 1);
  ev->open_gate();
  for (auto& tk : tickets) EXPECT_EQ(tk->get().outcome, Outcome::passed);
  auto order = ev->order();
  ASSERT_EQ(order.size(), 6u);
  EXPECT_EQ(order[1], "A2");
  EXPECT_EQ(order[2], "B1");  // B is not starved behind A's backlog
  auto m = s.metrics();
  EXPECT_EQ(m.completed, 6u);
  EXPECT_EQ(m.eval_ms.count, 6u);
  EXPECT_EQ(m.queue_length, 0u);
}

TEST(Scheduler, CancelsQueuedWorkOnly) {
  auto ev = std::make_shared<RecordedEvaluator>();
  Scheduler s({{"cpu", ev}}, 1);
  ev->close_gate();
  Task t = make_task("t", 1);
  auto running = s.submit("A", t, cand("A1", "x"), {});
  ASSERT_TRUE(ev->wait_started(1));
  auto queued = s.submit("A", t, cand("A2", "x"), {});
  auto b1 = s.submit("B", t, cand("B1", "x"), {});
  auto b2 = s.submit("B", t, cand("B2", "x"), {});
  EXPECT_FALSE(s.cancel(running));
  EXPECT_TRUE(s.cancel(queued));
  EXPECT_EQ(s.cancel_owner("B"), 2u);
  try {
    queued->get();
    FAIL() << "a cancelled ticket must throw";
  } catch (const RequestError& e) {
    EXPECT_EQ(e.problem(), RequestProblem::cancelled);
  }
  EXPECT_THROW(b2->get(), RequestError);
  ev->open_gate();
  EXPECT_EQ(running->get().candidate_id, "A1");
  EXPECT_EQ(s.metrics().cancelled, 3u);
  EXPECT_EQ(ev->order(), std::vector<std::string>{"A1"});
}

TEST(Scheduler, EvaluatorErrorsReachOnlyTheirTicket) {
  auto ev = std::make_shared<RecordedEvaluator>();
  Scheduler s({{"cpu", ev}, {"cpu2", ev}}, 2);
  Task t = make_task("t", 1);
  auto bad = s.submit("A", t, cand("bad", "raise-worker-error"), {});
  auto good = s.submit("B", t, cand("good", "ok"), {});
  EXPECT_THROW(bad->get(), Error);
  EXPECT_EQ(good->get().outcome, Outcome::passed);
  auto m = s.metrics();
  EXPECT_EQ(m.workers, 4);
  EXPECT_EQ(m.devices.size(), 2u);
  EXPECT_EQ(m.failed, 1u);
}

TEST(Gym, SplitsSeedsAndUnknownTasks) {
  auto ev = std::make_shared<RecordedEvaluator>();
  Scheduler s({{"cpu", ev}}, 1);
  Gym gym(suite(), s, GymConfig{});
  ResetRequest r;
  r.split = "L2";
  EXPECT_EQ(gym.reset(r).task_id, "L2/1_Conv");
  r.split = "L1";
  r.seed = 1;
  EXPECT_EQ(gym.reset(r).task_id, "L1/23_Softmax");
  r.seed = 3;
  EXPECT_EQ(gym.reset(r).task_id, "L1/23_Softmax");  // seed % 2
  r = {};
  r.task_id = "L9/nope";
  try {
    gym.reset(r);
    FAIL();
  } catch (const RequestError& e) {
    EXPECT_EQ(e.problem(), RequestProblem::unknown_task);
  }
  // The short forms eval's --tasks takes name one task (fresh-user run, session 16); one that
  // names several is refused, with what to do.
  r = {};
  r.task_id = "L1/19";
  EXPECT_EQ(gym.reset(r).task_id, "L1/19_ReLU");
  r.task_id = "23_Softmax";
  EXPECT_EQ(gym.reset(r).task_id, "L1/23_Softmax");
  r.task_id = "L1";
  try {
    gym.reset(r);
    FAIL();
  } catch (const RequestError& e) {
    EXPECT_EQ(e.problem(), RequestProblem::unknown_task);
    EXPECT_NE(std::string(e.what()).find("split"), std::string::npos) << e.what();
  }
  r = {};
  r.episode_id = "mine";
  gym.reset(r);
  EXPECT_THROW(gym.reset(r), RequestError);  // duplicate id
  EXPECT_EQ(gym.metrics().open_episodes, 6u);
}

TEST(Server, HttpMultiTurnEpisode) {
  Fixture f;
  Reply health = call(f.port, http::verb::get, "/health");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body["status"], "healthy");
  EXPECT_TRUE(health.body.contains("queue_length"));

  Reply reset = post(f.port, "/reset", {{"task_id", "L1/19_ReLU"}, {"options", {{"max_turns", 2}}}});
  ASSERT_EQ(reset.status, 200) << reset.body.dump();
  const json& obs = reset.body["observation"];
  EXPECT_NE(obs["prompt"].get<std::string>().find("torch.relu"), std::string::npos);
  EXPECT_EQ(reset.body["done"], false);
  std::string id = obs["episode_id"];

  Reply s1 = post(f.port, "/step", {{"episode_id", id}, {"action", {{"type", "submit_kernel"}, {"code", "# incorrect\nclass ModelNew: pass"}}}});
  ASSERT_EQ(s1.status, 200) << s1.body.dump();
  EXPECT_EQ(s1.body["reward"], 0.25);
  EXPECT_EQ(s1.body["observation"]["feedback"]["outcome"], "incorrect");
  EXPECT_EQ(s1.body["observation"]["feedback"]["failing_case"]["first_mismatch_index"], json::array({4}));

  Reply inspect = post(f.port, "/step", {{"episode_id", id}, {"action", {{"type", "inspect_evaluation"}, {"turn", 1}}}});
  EXPECT_EQ(inspect.body["observation"]["feedback_turn"], 1);
  EXPECT_TRUE(inspect.body["reward"].is_null());

  Reply s2 = post(f.port, "/step", {{"episode_id", id}, {"action", {{"type", "submit_kernel"}, {"code", "```python\n# fast speedup=2.0\n```"}}}});
  ASSERT_EQ(s2.status, 200) << s2.body.dump();
  EXPECT_EQ(s2.body["reward"], 1.0);
  EXPECT_EQ(s2.body["done"], true);
  const json& returns = s2.body["observation"]["returns"];
  EXPECT_EQ(returns["best_turn"], 2);
  EXPECT_DOUBLE_EQ(returns["returns"][0].get<double>(), 0.25 + 0.4 * 1.0);

  Reply state = call(f.port, http::verb::get, "/state?episode_id=" + id);
  EXPECT_EQ(state.status, 200);
  EXPECT_EQ(state.body["step_count"], 3);
  EXPECT_EQ(state.body["turns"].size(), 2u);

  Reply after = post(f.port, "/step", {{"episode_id", id}, {"action", {{"type", "submit_kernel"}, {"code", "x"}}}});
  EXPECT_EQ(after.status, 409);
  EXPECT_EQ(code_of(after.body), "EPISODE_DONE");
}

TEST(Server, BadRequestsGetTheErrorShape) {
  Fixture f(2, 100);
  auto expect = [](const Reply& r, int status, const std::string& code) {
    EXPECT_EQ(r.status, status) << r.body.dump();
    EXPECT_EQ(r.body["type"], "error");
    EXPECT_EQ(code_of(r.body), code);
    EXPECT_FALSE(r.body["data"]["message"].get<std::string>().empty());
  };
  expect(post(f.port, "/reset", {{"task_id", "L7/none"}}), 404, "UNKNOWN_TASK");
  expect(post(f.port, "/reset", {{"colour", "blue"}}), 422, "VALIDATION_ERROR");
  expect(post(f.port, "/reset", {{"options", {{"reward", "speedy"}}}}), 422, "VALIDATION_ERROR");
  expect(call(f.port, http::verb::post, "/reset", "{not json"), 400, "INVALID_JSON");
  expect(call(f.port, http::verb::get, "/nowhere"), 404, "NOT_FOUND");
  expect(call(f.port, http::verb::get, "/reset"), 405, "METHOD_NOT_ALLOWED");
  expect(post(f.port, "/step", {{"episode_id", "ep-missing"}, {"action", {{"type", "finalize"}}}}), 404, "UNKNOWN_EPISODE");
  std::string id = post(f.port, "/reset", json::object()).body["observation"]["episode_id"];
  expect(post(f.port, "/step", {{"episode_id", id}, {"action", {{"type", "dance"}}}}), 422, "VALIDATION_ERROR");
  expect(post(f.port, "/step", {{"episode_id", id}, {"action", {{"type", "submit_kernel"}}}}), 422, "VALIDATION_ERROR");
  expect(post(f.port, "/step", {{"episode_id", id}, {"action", {{"type", "submit_kernel"}, {"code", std::string(101, 'x')}}}}), 413, "PAYLOAD_TOO_LARGE");
  expect(call(f.port, http::verb::post, "/step", std::string(2 * 1024 * 1024, ' ')), 413, "PAYLOAD_TOO_LARGE");
  // None of this disturbed the episode.
  Reply ok = post(f.port, "/step", {{"episode_id", id}, {"action", {{"type", "submit_kernel"}, {"code", "speedup=1.5"}}}});
  EXPECT_EQ(ok.status, 200) << ok.body.dump();
  EXPECT_EQ(ok.body["observation"]["turn"], 1);
  Reply m = call(f.port, http::verb::get, "/metrics.json");
  EXPECT_GE(m.body["errors"].get<int>(), 11);
  Reply schema = call(f.port, http::verb::get, "/schema");
  EXPECT_TRUE(schema.body.contains("action") && schema.body.contains("observation") && schema.body.contains("state"));
  Reply meta = call(f.port, http::verb::get, "/metadata");
  EXPECT_EQ(meta.body["tasks"].size(), 3u);
  // OpenEnv's environment README: a text that names the actions a client sends.
  ASSERT_TRUE(meta.body["readme_content"].is_string()) << meta.body["readme_content"].dump();
  const std::string readme = meta.body["readme_content"].get<std::string>();
  for (const char* action : {"submit_kernel", "inspect_evaluation", "finalize"})
    EXPECT_NE(readme.find(action), std::string::npos) << action;
}

TEST(Server, SixtyFourConcurrentSessionsSeeOnlyTheirOwnResults) {
  Fixture f(4);
  constexpr int kSessions = 64;
  std::atomic<int> ok{0};
  std::vector<std::string> problems(kSessions);
  std::vector<std::thread> threads;
  for (int i = 0; i < kSessions; ++i) {
    threads.emplace_back([&, i] {
      try {
        Reply r = post(f.port, "/reset", {{"seed", i}, {"options", {{"max_turns", 2}}}});
        std::string id = r.body["observation"]["episode_id"];
        for (int turn = 1; turn <= 2; ++turn) {
          double speedup = 1.0 + i / 100.0 + turn / 1000.0;
          Reply s = post(f.port, "/step", {{"episode_id", id}, {"action", {{"type", "submit_kernel"}, {"code", "speedup=" + std::to_string(speedup)}}}});
          const json& fb = s.body["observation"]["feedback"];
          std::string own = "candidate " + id + "/turn" + std::to_string(turn);
          if (s.status != 200 || std::abs(fb["speedup_eager"].get<double>() - speedup) > 1e-9 ||
              fb["messages"][0] != own || s.body["observation"]["episode_id"] != id) {
            problems[i] = s.body.dump();
            return;
          }
        }
        ++ok;
      } catch (const std::exception& e) {
        problems[i] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kSessions; ++i) EXPECT_EQ(problems[i], "") << "session " << i;
  EXPECT_EQ(ok.load(), kSessions);
  Reply m = call(f.port, http::verb::get, "/metrics.json");
  EXPECT_EQ(m.body["evaluations"]["completed"], 2 * kSessions);
  EXPECT_EQ(m.body["eval_latency_ms"]["count"], 2 * kSessions);
}

TEST(Server, WebSocketEpisodeAndErrorsKeepTheSession) {
  Fixture f;
  WsClient c(f.port);
  json e = c.send({{"type", "step"}, {"data", {{"type", "finalize"}}}});
  EXPECT_EQ(e["type"], "error");
  EXPECT_EQ(e["data"]["code"], "UNKNOWN_EPISODE");
  json r = c.send({{"type", "reset"}, {"data", {{"task_id", "L1/23_Softmax"}, {"options", {{"max_turns", 2}, {"return", "max"}, {"gamma", 0.8}}}}}});
  ASSERT_EQ(r["type"], "observation") << r.dump();
  EXPECT_EQ(r["data"]["observation"]["task_id"], "L1/23_Softmax");
  json bad = c.send({{"type", "jump"}});
  EXPECT_EQ(bad["data"]["code"], "UNKNOWN_TYPE");
  json s1 = c.send({{"type", "step"}, {"data", {{"type", "submit_kernel"}, {"code", "speedup=3"}}}});
  EXPECT_EQ(s1["data"]["reward"], 1.0);
  json s2 = c.send({{"type", "step"}, {"data", {{"type", "submit_kernel"}, {"code", "# incorrect\n"}}}});
  EXPECT_EQ(s2["data"]["done"], true);
  EXPECT_DOUBLE_EQ(s2["data"]["observation"]["returns"]["returns"][0].get<double>(), 1.0);  // max(1.0, 0.8*0.25)
  json st = c.send({{"type", "state"}});
  EXPECT_EQ(st["type"], "state");
  EXPECT_EQ(st["data"]["turns_used"], 2);
  c.ws.write(net::buffer(json{{"type", "close"}}.dump()));
  beast::flat_buffer buffer;
  beast::error_code ec;
  c.ws.read(buffer, ec);
  EXPECT_EQ(ec, websocket::error::closed);
}

TEST(Server, DisconnectingClientCancelsItsQueuedWork) {
  Fixture f(1);
  f.evaluator->close_gate();
  // Session A occupies the only worker.
  std::string a = post(f.port, "/reset", json::object()).body["observation"]["episode_id"];
  Reply a_reply;
  std::thread a_step([&] {
    a_reply = post(f.port, "/step", {{"episode_id", a}, {"action", {{"type", "submit_kernel"}, {"code", "speedup=2"}}}});
  });
  ASSERT_TRUE(f.evaluator->wait_started(1));
  // Session B (WebSocket) queues a step, then hangs up without waiting.
  {
    WsClient b(f.port);
    b.send({{"type", "reset"}, {"data", json::object()}});
    b.ws.write(net::buffer(json{{"type", "step"}, {"data", {{"type", "submit_kernel"}, {"code", "speedup=9"}}}}.dump()));
    for (int i = 0; i < 600 && call(f.port, http::verb::get, "/health").body["queue_length"] != 1; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_EQ(call(f.port, http::verb::get, "/health").body["queue_length"], 1);
    b.ws.next_layer().close();
  }
  json m;
  for (int i = 0; i < 600; ++i) {
    m = call(f.port, http::verb::get, "/metrics.json").body;
    if (m["evaluations"]["cancelled"] == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(m["evaluations"]["cancelled"], 1);
  EXPECT_EQ(m["queue_length"], 0);
  f.evaluator->open_gate();
  a_step.join();
  EXPECT_EQ(a_reply.status, 200);
  EXPECT_EQ(a_reply.body["reward"], 1.0);
  EXPECT_EQ(f.evaluator->order().size(), 1u);  // B's evaluation never ran
}
