#pragma once
// Redis key names of the queue (queue.hpp lists them) and the job's JSON form. Internal.
#include <string>

#include <nlohmann/json.hpp>

#include "kgym/candidate.hpp"
#include "kgym/task.hpp"

namespace kgym::queue {

inline constexpr const char* kGroup = "judges";
inline constexpr int kKeepSeconds = 86400;  ///< markers, verdicts and wake-ups expire after a day

struct Keys {
  std::string prefix;
  std::string stream() const { return prefix + ":jobs"; }
  std::string marker(const std::string& id) const { return prefix + ":job:" + id; }
  std::string verdict(const std::string& id) const { return prefix + ":verdict:" + id; }
  std::string done(const std::string& id) const { return prefix + ":done:" + id; }
  std::string workers() const { return prefix + ":workers"; }
  std::string stats() const { return prefix + ":stats"; }
};

inline nlohmann::json task_json(const Task& t) {
  return {{"id", t.id}, {"source", t.source}, {"origin", t.origin}, {"level", t.level}};
}
inline Task task_from_json(const nlohmann::json& j) {
  Task t;
  t.id = j.at("id").get<std::string>();
  t.source = j.at("source").get<std::string>();
  t.origin = j.value("origin", "");
  t.level = j.value("level", 0);
  return t;
}
inline nlohmann::json candidate_json(const Candidate& c) {
  nlohmann::json j = {{"id", c.id}, {"task_id", c.task_id}, {"code", c.code}, {"extra", c.extra}};
  if (c.ref_code) j["ref_code"] = *c.ref_code;
  return j;
}
inline Candidate candidate_from_json(const nlohmann::json& j) {
  Candidate c;
  c.id = j.at("id").get<std::string>();
  c.task_id = j.at("task_id").get<std::string>();
  c.code = j.at("code").get<std::string>();
  if (j.contains("ref_code") && j["ref_code"].is_string()) c.ref_code = j["ref_code"].get<std::string>();
  if (j.contains("extra")) c.extra = j["extra"];
  return c;
}

}  // namespace kgym::queue
