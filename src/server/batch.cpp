// Batch routes: a group of evaluations in one request, answered in order (batch.hpp).
#include "batch.hpp"

#include "api_json.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "kgym/hash.hpp"

namespace kgym::api {
namespace {

using nlohmann::json;

[[noreturn]] void malformed(const std::string& message) { throw RequestError(RequestProblem::malformed, message); }

/// One item's answer when it failed: the error shape plus its HTTP status.
json item_error(std::exception_ptr e) {
  ErrorReply r = error_reply(e);
  json out = r.body;
  out["status"] = r.status;
  return out;
}

double wait_of(const json& body) {
  if (!body.contains("wait_s")) return 120.0;
  if (!body["wait_s"].is_number() || body["wait_s"].get<double>() < 0 || body["wait_s"].get<double>() > 3600) {
    malformed("`wait_s` must be a number of seconds in [0, 3600]");
  }
  return body["wait_s"].get<double>();
}

void only_keys(const json& body, std::initializer_list<const char*> allowed, const char* route) {
  for (const auto& [key, value] : body.items()) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || key == a;
    if (!ok) malformed(std::string("unknown field `") + key + "` in " + route);
  }
}

/// One candidate judged as a one-turn episode of its own: reset, one step, close (also when the
/// step throws). The observation reply of that step.
json one_turn(Gym& gym, const ResetRequest& request, const Action& a, const std::function<bool()>& cancelled) {
  Observation o = gym.reset(request);
  try {
    json out = observation_reply(gym.step(o.episode_id, a, cancelled));
    gym.close(o.episode_id);
    return out;
  } catch (...) {
    gym.close(o.episode_id);
    throw;
  }
}

}  // namespace

struct BatchRunner::Batch {
  std::string handle;
  std::string key;
  std::vector<json> results;
  std::size_t done = 0;
  std::atomic<bool> cancel{false};
  std::mutex mutex;
  std::condition_variable cv;
};

std::shared_ptr<BatchRunner::Batch> BatchRunner::launch(std::vector<Job> jobs, const std::string& key) {
  auto b = std::make_shared<Batch>();
  b->key = key;
  b->results.assign(jobs.size(), json());
  {
    std::lock_guard lock(mutex_);
    if (stopping_) throw RequestError(RequestProblem::cancelled, "the server is stopping");
    b->handle = "batch-" + std::to_string(++next_);
    batches_[b->handle] = b;
    if (!key.empty()) by_key_[key] = b->handle;
    running_threads_ += jobs.size();
  }
  if (jobs.empty()) finished(b);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    std::thread([this, b, i, job = std::move(jobs[i])] {
      json out;
      try {
        out = job([b] { return b->cancel.load(); });
      } catch (...) {
        out = item_error(std::current_exception());
      }
      bool last;
      {
        std::lock_guard lock(b->mutex);
        b->results[i] = std::move(out);
        last = ++b->done == b->results.size();
      }
      b->cv.notify_all();
      if (last) finished(b);
      std::lock_guard lock(mutex_);
      --running_threads_;
      idle_.notify_all();
    }).detach();
  }
  return b;
}

void BatchRunner::finished(const std::shared_ptr<Batch>& b) {
  std::lock_guard lock(mutex_);
  finished_order_.push_back(b->handle);
  while (finished_order_.size() > keep_) {
    auto it = batches_.find(finished_order_.front());
    if (it != batches_.end()) {
      if (!it->second->key.empty()) by_key_.erase(it->second->key);
      batches_.erase(it);
    }
    finished_order_.erase(finished_order_.begin());
  }
}

std::pair<int, json> BatchRunner::answer(const std::shared_ptr<Batch>& b, double wait_s) {
  std::unique_lock lock(b->mutex);
  b->cv.wait_for(lock, std::chrono::duration<double>(wait_s), [&] { return b->done == b->results.size(); });
  if (b->done < b->results.size()) {
    return {202, json{{"status", "running"}, {"handle", b->handle}, {"done", b->done}, {"total", b->results.size()}}};
  }
  return {200, json{{"status", "done"}, {"handle", b->handle}, {"results", b->results}}};
}

std::pair<int, json> BatchRunner::evaluate_many(const json& body) {
  only_keys(body, {"task_id", "split", "seed", "codes", "options", "wait_s"}, "/evaluate_many");
  if (!body.contains("codes") || !body["codes"].is_array() || body["codes"].empty()) {
    malformed("POST /evaluate_many needs `codes`: a non-empty array of candidate sources (one task's group)");
  }
  json reset = json::object();
  for (const char* k : {"task_id", "split", "seed", "options"}) {
    if (body.contains(k)) reset[k] = body[k];
  }
  if (!reset.contains("options")) reset["options"] = json::object();
  if (!reset["options"].is_object()) malformed("`options` must be an object of episode options, as in POST /reset");
  reset["options"]["single_turn"] = true;
  ResetRequest request = parse_reset(reset);
  // Validate the whole request before starting anything: a bad task fails the request, not N items.
  Observation probe = gym_.reset(request);
  gym_.close(probe.episode_id);
  request.task_id = probe.task_id;
  std::vector<Job> jobs;
  for (const auto& c : body["codes"]) {
    if (!c.is_string()) malformed("`codes` must hold strings (candidate sources) only");
    Action a;
    a.code = c.get<std::string>();
    jobs.push_back([this, request, a](const std::function<bool()>& cancelled) {
      ResetRequest r = request;
      r.episode_id.reset();
      return one_turn(gym_, r, a, cancelled);
    });
  }
  return answer(launch(std::move(jobs)), wait_of(body));
}

std::pair<int, json> BatchRunner::step_many(const json& body) {
  only_keys(body, {"steps", "wait_s"}, "/step_many");
  if (!body.contains("steps") || !body["steps"].is_array() || body["steps"].empty()) {
    malformed("POST /step_many needs `steps`: a non-empty array of {\"episode_id\", \"action\"}");
  }
  std::vector<Job> jobs;
  for (const auto& s : body["steps"]) {
    if (!s.is_object()) malformed("each of `steps` must be an object {\"episode_id\", \"action\"}");
    std::string id = episode_id_of(s);
    if (!s.contains("action")) malformed("each of `steps` needs `action`");
    Action a = parse_action(s["action"]);
    jobs.push_back([this, id, a](const std::function<bool()>& cancelled) {
      return observation_reply(gym_.step(id, a, cancelled));
    });
  }
  return answer(launch(std::move(jobs)), wait_of(body));
}

std::pair<int, json> BatchRunner::poll(const std::string& handle, double wait_s) {
  std::shared_ptr<Batch> b;
  {
    std::lock_guard lock(mutex_);
    auto it = batches_.find(handle);
    if (it == batches_.end()) {
      malformed("unknown batch handle \"" + handle + "\" (never given, or dropped after " + std::to_string(keep_) +
                " newer batches finished); submit the batch again");
    }
    b = it->second;
  }
  return answer(b, wait_s);
}

json BatchRunner::reward(const json& body, const std::string& raw_body) {
  only_keys(body, {"query", "prompts", "labels"}, "/reward");
  for (const char* k : {"query", "prompts", "labels"}) {
    if (!body.contains(k) || !body[k].is_array()) malformed(std::string("POST /reward needs `") + k + "`: an array (OpenRLHF's remote reward request)");
  }
  const json& query = body["query"];
  const json& prompts = body["prompts"];
  const json& labels = body["labels"];
  if (prompts.size() != query.size() || labels.size() != query.size()) {
    malformed("`query`, `prompts` and `labels` must have one entry per sample (got " + std::to_string(query.size()) + ", " +
              std::to_string(prompts.size()) + ", " + std::to_string(labels.size()) + ")");
  }
  // The label of a sample names its task: a task id, or a JSON object text {"task_id", ...options}.
  std::vector<Job> jobs;
  for (std::size_t i = 0; i < query.size(); ++i) {
    if (!query[i].is_string() || !prompts[i].is_string() || !labels[i].is_string()) {
      malformed("`query`, `prompts` and `labels` must hold strings (sample " + std::to_string(i) + ")");
    }
    std::string q = query[i].get<std::string>(), p = prompts[i].get<std::string>(), label = labels[i].get<std::string>();
    json reset = {{"task_id", label}};
    if (!label.empty() && label.front() == '{') {
      json parsed = json::parse(label, nullptr, false);
      if (!parsed.is_object() || !parsed.contains("task_id")) {
        malformed("label " + std::to_string(i) + " is not a task id nor a JSON object with `task_id`");
      }
      reset = {{"task_id", parsed["task_id"]}, {"options", json::object()}};
      for (const auto& [k, v] : parsed.items()) {
        if (k != "task_id") reset["options"][k] = v;
      }
    }
    if (!reset.contains("options")) reset["options"] = json::object();
    reset["options"]["single_turn"] = true;
    ResetRequest request = parse_reset(reset);
    Action a;
    a.code = q.rfind(p, 0) == 0 ? q.substr(p.size()) : q;
    jobs.push_back([this, request, a](const std::function<bool()>& cancelled) {
      return one_turn(gym_, request, a, cancelled);
    });
  }
  // A retry of the same body (OpenRLHF after its client timeout) joins the batch already started.
  const std::string key = sha256_hex(raw_body);
  std::shared_ptr<Batch> b;
  {
    std::lock_guard lock(mutex_);
    auto it = by_key_.find(key);
    if (it != by_key_.end() && batches_.count(it->second)) b = batches_[it->second];
  }
  if (!b) b = launch(std::move(jobs), key);
  std::unique_lock lock(b->mutex);
  b->cv.wait(lock, [&] { return b->done == b->results.size(); });
  json rewards = json::array(), outcomes = json::array(), speedups = json::array(), errors = json::array();
  for (const auto& r : b->results) {
    if (r.contains("observation")) {
      const json& f = r["observation"]["feedback"];
      rewards.push_back(r["reward"].is_number() ? r["reward"].get<double>() : 0.0);
      outcomes.push_back(f.is_object() ? f["outcome"] : json("unknown"));
      speedups.push_back(f.is_object() ? f["speedup_eager"] : json(nullptr));
      errors.push_back(nullptr);
    } else {
      rewards.push_back(0.0);
      outcomes.push_back("error");
      speedups.push_back(nullptr);
      errors.push_back(r["data"]["code"].get<std::string>() + ": " + r["data"]["message"].get<std::string>());
    }
  }
  json passed = json::array();
  for (const auto& o : outcomes) passed.push_back(o == "passed" ? 1.0 : 0.0);
  // extra_logs: one number per sample under each key (OpenRLHF logs them per sample).
  return {{"rewards", rewards},
          {"scores", rewards},
          {"extra_logs", {{"kgym_passed", passed}}},
          {"outcomes", outcomes},
          {"speedup_eager", speedups},
          {"errors", errors}};
}

void BatchRunner::stop() {
  std::unique_lock lock(mutex_);
  stopping_ = true;
  for (auto& [h, b] : batches_) b->cancel = true;
  idle_.wait(lock, [this] { return running_threads_ == 0; });
}

}  // namespace kgym::api
