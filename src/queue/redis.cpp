// The hiredis connection wrapper (redis.hpp) and the queue URL parser (queue.hpp).
#include "redis.hpp"

#include <sys/time.h>

#include <chrono>
#include <cmath>

#include <hiredis/hiredis.h>

namespace kgym {

QueueUrl parse_queue_url(const std::string& url) {
  const std::string scheme = "redis://";
  auto bad = [&](const std::string& why) {
    return Error(ErrorKind::usage, "--queue \"" + url + "\": " + why + "; expected redis://HOST:PORT (e.g. redis://127.0.0.1:6379)");
  };
  if (url.rfind(scheme, 0) != 0) throw bad("not a redis:// URL");
  QueueUrl u;
  u.text = url;
  std::string rest = url.substr(scheme.size());
  if (rest.find('@') != std::string::npos) throw bad("user names and passwords in the URL are not supported");
  std::string db;
  if (auto slash = rest.find('/'); slash != std::string::npos) {
    db = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
  }
  std::string port;
  if (auto colon = rest.rfind(':'); colon != std::string::npos) {
    port = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) throw bad("no host");
  u.host = rest;
  auto number = [&](const std::string& s, const char* what, long lo, long hi) {
    if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos) throw bad(std::string("bad ") + what);
    long v = std::stol(s);
    if (v < lo || v > hi) throw bad(std::string(what) + " out of range");
    return static_cast<int>(v);
  };
  if (!port.empty() || url.back() == ':') u.port = number(port, "port", 1, 65535);
  if (!db.empty()) u.db = number(db, "database number", 0, 100000);
  return u;
}

namespace queue {
namespace {

timeval to_timeval(double s) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(s);
  tv.tv_usec = static_cast<suseconds_t>((s - std::floor(s)) * 1e6);
  return tv;
}

Reply copy(const redisReply* r) {
  Reply out;
  switch (r->type) {
    case REDIS_REPLY_STRING: out.type = Reply::Type::string; out.str.assign(r->str, r->len); break;
    case REDIS_REPLY_STATUS: out.type = Reply::Type::status; out.str.assign(r->str, r->len); break;
    case REDIS_REPLY_ERROR: out.type = Reply::Type::error; out.str.assign(r->str, r->len); break;
    case REDIS_REPLY_INTEGER: out.type = Reply::Type::integer; out.integer = r->integer; break;
    case REDIS_REPLY_ARRAY:
      out.type = Reply::Type::array;
      for (std::size_t i = 0; i < r->elements; ++i) out.elements.push_back(copy(r->element[i]));
      break;
    default: out.type = Reply::Type::nil;
  }
  return out;
}

}  // namespace

long long now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Connection::Connection(const QueueUrl& url, double timeout_s)
    : where_(url.host + ":" + std::to_string(url.port)), timeout_s_(timeout_s) {
  ctx_ = redisConnectWithTimeout(url.host.c_str(), url.port, to_timeval(timeout_s));
  if (ctx_ == nullptr || ctx_->err) {
    std::string why = ctx_ ? ctx_->errstr : "out of memory";
    if (ctx_) redisFree(ctx_);
    ctx_ = nullptr;
    throw Unreachable("cannot reach Redis at " + where_ + ": " + why);
  }
  redisSetTimeout(ctx_, to_timeval(timeout_s));
  if (url.db != 0) command({"SELECT", std::to_string(url.db)});
}

Connection::~Connection() {
  if (ctx_) redisFree(ctx_);
}

Reply Connection::command(const std::vector<std::string>& argv, double read_timeout_s) {
  if (broken_) throw Unreachable("the connection to Redis at " + where_ + " is broken");
  std::vector<const char*> args;
  std::vector<std::size_t> lens;
  for (const auto& a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  if (read_timeout_s > 0) redisSetTimeout(ctx_, to_timeval(read_timeout_s));
  auto* r = static_cast<redisReply*>(redisCommandArgv(ctx_, static_cast<int>(args.size()), args.data(), lens.data()));
  if (read_timeout_s > 0 && r != nullptr) redisSetTimeout(ctx_, to_timeval(timeout_s_));
  if (r == nullptr) {
    broken_ = true;
    throw Unreachable("lost the connection to Redis at " + where_ + ": " + (ctx_->errstr[0] ? ctx_->errstr : "no reply"));
  }
  Reply out = copy(r);
  freeReplyObject(r);
  if (out.type == Reply::Type::error) {
    // LOADING (AOF replay after a restart) and similar are transient: treat as unreachable.
    if (out.str.rfind("LOADING", 0) == 0 || out.str.rfind("BUSY ", 0) == 0 || out.str.rfind("MASTERDOWN", 0) == 0) {
      throw Unreachable("Redis at " + where_ + " is not ready: " + out.str);
    }
    throw Error(ErrorKind::worker, "Redis at " + where_ + " answered " + argv.front() + " with an error: " + out.str);
  }
  return out;
}

}  // namespace queue
}  // namespace kgym
