#include <chrono>
#include <cmath>
#include <regex>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <spdlog/spdlog.h>

#include "kgym/error.hpp"
#include "kgym/generate.hpp"

namespace kgym {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

Endpoint parse_endpoint(const std::string& url) {
  static const std::regex re(R"(^([a-zA-Z]+)://([^/:]+)(?::(\d+))?(/.*)?$)");
  std::smatch m;
  if (!std::regex_match(url, m, re))
    throw Error(ErrorKind::usage, "--model-endpoint '" + url + "' is not a URL like http://127.0.0.1:8000/v1");
  if (m[1] != "http")
    throw Error(ErrorKind::usage, "--model-endpoint '" + url + "': only http:// is supported; for an https API "
                                      "run a local proxy (e.g. LiteLLM) and point kgym at it");
  Endpoint e;
  e.host = m[2];
  if (m[3].matched) e.port = m[3];
  e.base = m[4].matched ? m[4].str() : "";
  while (!e.base.empty() && e.base.back() == '/') e.base.pop_back();
  return e;
}

ChatClient::ChatClient(Endpoint endpoint, std::string api_key, double timeout_s, RetryPolicy retry)
    : endpoint_(std::move(endpoint)), api_key_(std::move(api_key)), timeout_s_(timeout_s), retry_(retry) {}

namespace {

struct HttpReply {
  beast::error_code ec;  ///< transport error (then status is 0)
  unsigned status = 0;
  std::string body;
  std::optional<double> retry_after_s;
};

/// One POST with a deadline over the whole exchange (async ops on a beast::tcp_stream).
HttpReply post(const Endpoint& e, const std::string& target, const std::string& body, const std::string& api_key,
               double timeout_s) {
  HttpReply reply;
  net::io_context ioc;
  net::ip::tcp::resolver resolver(ioc);
  beast::tcp_stream stream(ioc);
  auto results = resolver.resolve(e.host, e.port, reply.ec);
  if (reply.ec) return reply;
  http::request<http::string_body> req{http::verb::post, target, 11};
  req.set(http::field::host, e.host);
  req.set(http::field::content_type, "application/json");
  req.set(http::field::user_agent, "kgym-generate");
  if (!api_key.empty()) req.set(http::field::authorization, "Bearer " + api_key);
  req.body() = body;
  req.prepare_payload();
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64u << 20);
  const auto deadline = std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
  stream.expires_after(deadline);
  stream.async_connect(results, [&](beast::error_code ec, const net::ip::tcp::endpoint&) {
    if (ec) {
      reply.ec = ec;
      return;
    }
    http::async_write(stream, req, [&](beast::error_code ec2, std::size_t) {
      if (ec2) {
        reply.ec = ec2;
        return;
      }
      http::async_read(stream, buffer, parser, [&](beast::error_code ec3, std::size_t) { reply.ec = ec3; });
    });
  });
  ioc.run();
  if (reply.ec) return reply;
  auto& res = parser.get();
  reply.status = res.result_int();
  reply.body = res.body();
  if (auto it = res.find(http::field::retry_after); it != res.end()) {
    try {
      reply.retry_after_s = std::stod(std::string(it->value()));
    } catch (const std::exception&) {
    }
  }
  beast::error_code ignore;
  stream.socket().shutdown(net::ip::tcp::socket::shutdown_both, ignore);
  return reply;
}

bool retryable(unsigned status) { return status == 408 || status == 429 || status >= 500; }

}  // namespace

ChatResult ChatClient::complete(const std::string& model, const std::vector<ChatMessage>& messages,
                                double temperature, int max_tokens, const nlohmann::json& extra) const {
  nlohmann::json body = {{"model", model}, {"temperature", temperature}, {"max_tokens", max_tokens}, {"n", 1}};
  body["messages"] = nlohmann::json::array();
  for (const auto& m : messages) body["messages"].push_back({{"role", m.role}, {"content", m.content}});
  body.merge_patch(extra);
  const std::string payload = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::string target = endpoint_.base + "/chat/completions";
  std::string last_problem;
  for (int attempt = 0; attempt < retry_.max_attempts; ++attempt) {
    HttpReply r = post(endpoint_, target, payload, api_key_, timeout_s_);
    if (!r.ec && r.status == 200) {
      nlohmann::json j = nlohmann::json::parse(r.body, nullptr, false);
      if (j.is_object() && j.contains("choices") && j["choices"].is_array() && !j["choices"].empty()) {
        const auto& c = j["choices"][0];
        ChatResult out;
        if (c.contains("message") && c["message"].is_object() && c["message"].contains("content") &&
            c["message"]["content"].is_string())
          out.content = c["message"]["content"].get<std::string>();
        out.finish_reason = c.value("finish_reason", "");
        if (j.contains("usage") && j["usage"].is_object()) {
          out.prompt_tokens = j["usage"].value("prompt_tokens", 0L);
          out.completion_tokens = j["usage"].value("completion_tokens", 0L);
        }
        out.attempts = attempt + 1;
        return out;
      }
      last_problem = "a 200 reply without choices: " + r.body.substr(0, 300);  // retried: proxies do this
    } else if (!r.ec && !retryable(r.status)) {
      throw Error(ErrorKind::input, "the model endpoint answered HTTP " + std::to_string(r.status) + " for " + target +
                                        ": " + r.body.substr(0, 300) + " (check --model, --model-endpoint, KGYM_API_KEY)");
    } else {
      last_problem = r.ec ? r.ec.message() : "HTTP " + std::to_string(r.status) + ": " + r.body.substr(0, 200);
    }
    if (attempt + 1 == retry_.max_attempts) break;
    double wait = std::min(retry_.max_s, retry_.base_s * std::pow(2.0, attempt));
    if (r.retry_after_s) wait = std::min(retry_.max_s, std::max(0.0, *r.retry_after_s));
    spdlog::warn("model endpoint: {} (attempt {}/{}); retrying in {:.1f} s", last_problem, attempt + 1,
                 retry_.max_attempts, wait);
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
  }
  throw Error(ErrorKind::worker, "the model endpoint failed " + std::to_string(retry_.max_attempts) +
                                     " times (last: " + last_problem + "); the run can be resumed with the same command");
}

}  // namespace kgym
