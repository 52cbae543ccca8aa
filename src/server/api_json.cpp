// The JSON edge of the server: parsing, serialisation, schemas and the error mapping.
#include "api_json.hpp"

#include <set>

namespace kgym::api {
namespace {

using nlohmann::json;

[[noreturn]] void malformed(const std::string& message) { throw RequestError(RequestProblem::malformed, message); }

template <class T>
std::optional<T> opt(const json& j, const char* key, const char* type_name) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  const json& v = j[key];
  bool ok = false;
  if constexpr (std::is_same_v<T, std::string>) ok = v.is_string();
  else if constexpr (std::is_same_v<T, bool>) ok = v.is_boolean();
  else if constexpr (std::is_same_v<T, int>) ok = v.is_number_integer();
  else if constexpr (std::is_same_v<T, std::uint64_t>) ok = v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
  else if constexpr (std::is_same_v<T, double>) ok = v.is_number();
  if (!ok) malformed(std::string("field `") + key + "` must be " + type_name + ", got " + v.dump().substr(0, 80));
  return v.get<T>();
}

json opt_json(const std::optional<double>& x) { return x ? json(*x) : json(nullptr); }

const std::set<std::string> kResetKeys = {"task_id", "split", "seed", "episode_id", "options"};
const std::set<std::string> kOptionKeys = {"max_turns", "single_turn", "reward", "return", "gamma",
                                           "roofline_floor_ms", "backend", "policy_profile",
                                           "precision", "prompt_style"};

json returns_json(const EpisodeReturns& r) {
  return {{"rewards", r.rewards},
          {"returns", r.returns},
          {"return", r.return_kind},
          {"gamma", r.gamma},
          {"best_turn", r.best_turn ? json(*r.best_turn) : json(nullptr)},
          {"final_reward", r.final_reward}};
}

}  // namespace

json parse_body(const std::string& body) {
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) return json::object();
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) throw ApiError(400, "INVALID_JSON", "the request body is not valid JSON");
  if (!j.is_object()) throw ApiError(400, "INVALID_JSON", "the request body must be a JSON object");
  return j;
}

ResetRequest parse_reset(const json& body) {
  ResetRequest r;
  json options = json::object();
  for (const auto& [key, value] : body.items()) {
    if (kResetKeys.count(key)) continue;
    if (kOptionKeys.count(key)) {
      options[key] = value;
      continue;
    }
    malformed("unknown reset field `" + key + "`; known: task_id, split, seed, episode_id, options");
  }
  if (body.contains("options") && !body["options"].is_null()) {
    if (!body["options"].is_object()) malformed("field `options` must be an object");
    for (const auto& [key, value] : body["options"].items()) {
      if (!kOptionKeys.count(key)) {
        malformed("unknown option `" + key + "`; known: max_turns, single_turn, reward, return, gamma, "
                  "roofline_floor_ms, backend, policy_profile, precision, prompt_style");
      }
      options[key] = value;
    }
  }
  r.task_id = opt<std::string>(body, "task_id", "a string");
  r.split = opt<std::string>(body, "split", "a string");
  r.seed = opt<std::uint64_t>(body, "seed", "a non-negative integer");
  r.episode_id = opt<std::string>(body, "episode_id", "a string");
  r.max_turns = opt<int>(options, "max_turns", "an integer");
  r.single_turn = opt<bool>(options, "single_turn", "a boolean");
  // The typed options, parsed once here (one error text each: options.hpp, reward.hpp).
  try {
    if (auto name = opt<std::string>(options, "reward", "a string")) r.reward = parse_reward(*name, "options.reward");
    if (auto name = opt<std::string>(options, "policy_profile", "a string"))
      r.policy_profile = parse_profile(*name, "policy_profile");
  } catch (const Error& e) {
    malformed(e.what());
  }
  r.return_kind = opt<std::string>(options, "return", "\"sum\" or \"max\"");
  r.gamma = opt<double>(options, "gamma", "a number");
  r.roofline_floor_ms = opt<double>(options, "roofline_floor_ms", "a number");
  r.backend = opt<std::string>(options, "backend", "a string");
  r.precision = opt<std::string>(options, "precision", "a string");
  r.prompt_style = opt<std::string>(options, "prompt_style", "a string");
  return r;
}

Action parse_action(const json& j) {
  if (!j.is_object()) malformed("the action must be an object like {\"type\": \"submit_kernel\", \"code\": \"...\"}");
  auto type = opt<std::string>(j, "type", "a string");
  if (!type) malformed("the action needs `type`: submit_kernel, inspect_evaluation or finalize");
  Action a;
  std::set<std::string> allowed = {"type", "metadata"};
  if (*type == "submit_kernel") {
    a.type = Action::Type::submit_kernel;
    auto code = opt<std::string>(j, "code", "a string");
    if (!code) malformed("submit_kernel needs `code` (a string with the ModelNew source)");
    a.code = std::move(*code);
    allowed.insert("code");
  } else if (*type == "inspect_evaluation") {
    a.type = Action::Type::inspect_evaluation;
    auto turn = opt<int>(j, "turn", "an integer");
    if (!turn) malformed("inspect_evaluation needs `turn` (1-based)");
    a.turn = *turn;
    allowed.insert("turn");
  } else if (*type == "finalize") {
    a.type = Action::Type::finalize;
  } else {
    malformed("unknown action type `" + *type + "`; use submit_kernel, inspect_evaluation or finalize");
  }
  for (const auto& [key, value] : j.items()) {
    if (!allowed.count(key)) malformed("unknown field `" + key + "` in a " + *type + " action");
  }
  return a;
}

std::string episode_id_of(const json& body) {
  auto id = opt<std::string>(body, "episode_id", "a string");
  if (!id) malformed("this request needs `episode_id` (from the reset observation)");
  return *id;
}

AdvantageRequest parse_advantages(const json& body) {
  AdvantageRequest r;
  if (!body.contains("returns") || !body["returns"].is_array() || body["returns"].empty()) {
    malformed("POST /advantages needs `returns`: a non-empty array of numbers (one group on one task)");
  }
  for (const auto& x : body["returns"]) {
    if (!x.is_number()) malformed("`returns` must hold numbers only, got " + x.dump().substr(0, 40));
    r.returns.push_back(x.get<double>());
  }
  if (auto m = opt<std::string>(body, "method", "a string")) r.method = *m;
  if (r.method != "grpo" && r.method != "dr_grpo") malformed("`method` must be \"grpo\" or \"dr_grpo\", got \"" + r.method + "\"");
  if (auto e = opt<double>(body, "eps", "a number")) r.eps = *e;
  for (const auto& [key, value] : body.items()) {
    if (key != "returns" && key != "method" && key != "eps") malformed("unknown field `" + key + "` in /advantages");
  }
  return r;
}

json feedback_json(const Feedback& f) {
  json hits = json::array();
  for (const auto& h : f.policy_hits) {
    hits.push_back({{"rule", h.rule}, {"severity", h.severity}, {"message", h.message}, {"line", h.line}});
  }
  json failing = nullptr;
  if (f.failing_case) {
    const auto& c = *f.failing_case;
    failing = {{"index", c.index}, {"transform", c.transform}, {"message", c.message},
               {"mismatches", c.mismatches}, {"numel", c.numel}, {"first_mismatch_index", c.first_mismatch_index},
               {"max_abs_error", c.max_abs_error}, {"mean_abs_error", c.mean_abs_error},
               {"max_rel_error", c.max_rel_error}, {"atol", c.atol}, {"rtol", c.rtol}};
  }
  json timing = nullptr;
  if (f.timing) {
    const auto& t = *f.timing;
    timing = {{"runtime_ms", t.runtime_ms}, {"spread", t.spread}, {"calls", t.calls},
              {"ref_runtime_ms", opt_json(t.ref_runtime_ms)}, {"compile_runtime_ms", opt_json(t.compile_runtime_ms)}};
  }
  return {{"outcome", std::string(to_string(f.outcome))},
          {"gate", std::string(to_string(f.gate))},
          {"correct", f.correct},
          {"cases_passed", f.cases_passed},
          {"cases_total", f.cases_total},
          {"messages", f.messages},
          {"policy_hits", hits},
          {"log_excerpt", f.log_excerpt},
          {"failing_case", failing},
          {"timing", timing},
          {"speedup_eager", opt_json(f.speedup_eager)},
          {"speedup_compile", opt_json(f.speedup_compile)},
          {"speedup_eager_ci", f.speedup_eager_ci ? json::array({f.speedup_eager_ci->lo, f.speedup_eager_ci->hi}) : json(nullptr)},
          {"speedup_compile_ci",
           f.speedup_compile_ci ? json::array({f.speedup_compile_ci->lo, f.speedup_compile_ci->hi}) : json(nullptr)}};
}

json observation_reply(const Observation& o) {
  json obs = {{"episode_id", o.episode_id},
              {"task_id", o.task_id},
              {"turn", o.turn},
              {"max_turns", o.max_turns},
              {"prompt", o.prompt},
              {"feedback_turn", o.feedback_turn ? json(*o.feedback_turn) : json(nullptr)},
              {"feedback", o.feedback ? feedback_json(*o.feedback) : json(nullptr)},
              {"feedback_text", o.feedback_text},
              {"history", o.history},
              {"returns", o.returns ? returns_json(*o.returns) : json(nullptr)}};
  return {{"observation", obs}, {"reward", opt_json(o.reward)}, {"done", o.done}};
}

json state_json(const EpisodeState& s) {
  json turns = json::array();
  for (const auto& t : s.turns) {
    turns.push_back({{"turn", t.index}, {"outcome", std::string(to_string(t.outcome))}, {"reward", t.reward},
                     {"speedup_eager", opt_json(t.speedup_eager)}, {"summary", t.summary}});
  }
  return {{"episode_id", s.episode_id}, {"step_count", s.step_count}, {"task_id", s.task_id},
          {"turns_used", s.turns_used}, {"max_turns", s.max_turns}, {"done", s.done},
          {"reward_name", s.reward_name}, {"turns", turns},
          {"returns", s.returns ? returns_json(*s.returns) : json(nullptr)}};
}

ErrorReply error_reply(std::exception_ptr error) {
  auto reply = [](int status, const std::string& code, const std::string& message) {
    return ErrorReply{status, {{"type", "error"}, {"data", {{"message", message}, {"code", code}}}}};
  };
  try {
    std::rethrow_exception(error);
  } catch (const ApiError& e) {
    return reply(e.status(), e.code(), e.what());
  } catch (const RequestError& e) {
    switch (e.problem()) {
      case RequestProblem::malformed: return reply(422, "VALIDATION_ERROR", e.what());
      case RequestProblem::unknown_task: return reply(404, "UNKNOWN_TASK", e.what());
      case RequestProblem::unknown_episode: return reply(404, "UNKNOWN_EPISODE", e.what());
      case RequestProblem::episode_done: return reply(409, "EPISODE_DONE", e.what());
      case RequestProblem::episode_busy: return reply(409, "EPISODE_BUSY", e.what());
      case RequestProblem::too_large: return reply(413, "PAYLOAD_TOO_LARGE", e.what());
      case RequestProblem::capacity: return reply(503, "CAPACITY_REACHED", e.what());
      case RequestProblem::cancelled: return reply(408, "CANCELLED", e.what());
    }
    return reply(422, "VALIDATION_ERROR", e.what());
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input) return reply(422, "VALIDATION_ERROR", e.what());
    return reply(500, "EXECUTION_ERROR", e.what());
  } catch (const nlohmann::json::exception& e) {
    return reply(422, "VALIDATION_ERROR", std::string("bad JSON value: ") + e.what());
  } catch (const std::exception& e) {
    return reply(500, "INTERNAL_ERROR", std::string("internal error: ") + e.what());
  } catch (...) {
    return reply(500, "INTERNAL_ERROR", "internal error");
  }
}

json schemas() {
  json nullable_number = {{"type", json::array({"number", "null"})}};
  json feedback = {
      {"type", json::array({"object", "null"})},
      {"description", "Machine-readable feedback of one turn (docs/server.md, Feedback)"},
      {"properties",
       {{"outcome", {{"type", "string"}, {"enum", {"passed", "no_candidate", "policy_rejected", "build_failed",
                                                   "runtime_error", "timeout", "incorrect", "contract_violation",
                                                   "timing_invalid", "task_error"}}}},
        {"gate", {{"type", "string"}, {"enum", {"none", "policy", "build", "launch", "correctness", "timing"}}}},
        {"correct", {{"type", "boolean"}}},
        {"cases_passed", {{"type", "integer"}}},
        {"cases_total", {{"type", "integer"}}},
        {"messages", {{"type", "array"}, {"items", {{"type", "string"}}}}},
        {"policy_hits", {{"type", "array"}, {"items", {{"type", "object"}, {"properties", {{"rule", {{"type", "string"}}}, {"severity", {{"type", "string"}}}, {"message", {{"type", "string"}}}, {"line", {{"type", "integer"}}}}}}}}},
        {"log_excerpt", {{"type", "string"}}},
        {"failing_case", {{"type", json::array({"object", "null"})},
                          {"properties", {{"index", {{"type", "integer"}}}, {"transform", {{"type", "string"}}}, {"message", {{"type", "string"}}},
                                          {"mismatches", {{"type", "integer"}}}, {"numel", {{"type", "integer"}}},
                                          {"first_mismatch_index", {{"type", "array"}, {"items", {{"type", "integer"}}}}},
                                          {"max_abs_error", {{"type", "number"}}}, {"mean_abs_error", {{"type", "number"}}},
                                          {"max_rel_error", {{"type", "number"}}}, {"atol", {{"type", "number"}}}, {"rtol", {{"type", "number"}}}}}}},
        {"timing", {{"type", json::array({"object", "null"})},
                    {"properties", {{"runtime_ms", {{"type", "number"}}}, {"spread", {{"type", "number"}}}, {"calls", {{"type", "integer"}}},
                                    {"ref_runtime_ms", nullable_number}, {"compile_runtime_ms", nullable_number}}}}},
        {"speedup_eager", nullable_number},
        {"speedup_compile", nullable_number},
        {"speedup_eager_ci", {{"type", json::array({"array", "null"})}, {"items", {{"type", "number"}}},
                              {"description", "95% interval [lo, hi] of speedup_eager (docs/timing.md)"}}},
        {"speedup_compile_ci", {{"type", json::array({"array", "null"})}, {"items", {{"type", "number"}}}}}}}};
  json returns = {{"type", json::array({"object", "null"})},
                  {"description", "Set once the episode is done"},
                  {"properties", {{"rewards", {{"type", "array"}, {"items", {{"type", "number"}}}}},
                                  {"returns", {{"type", "array"}, {"items", {{"type", "number"}}}}},
                                  {"return", {{"type", "string"}, {"enum", {"sum", "max"}}}},
                                  {"gamma", {{"type", "number"}}},
                                  {"best_turn", {{"type", json::array({"integer", "null"})}}},
                                  {"final_reward", {{"type", "number"}}}}}};
  json action = {
      {"title", "KgymAction"},
      {"oneOf",
       {{{"type", "object"}, {"additionalProperties", false}, {"required", {"type", "code"}},
         {"properties", {{"type", {{"const", "submit_kernel"}}}, {"code", {{"type", "string"}, {"description", "ModelNew source; a fenced code block is extracted"}}}, {"metadata", {{"type", "object"}}}}}},
        {{"type", "object"}, {"additionalProperties", false}, {"required", {"type", "turn"}},
         {"properties", {{"type", {{"const", "inspect_evaluation"}}}, {"turn", {{"type", "integer"}, {"minimum", 1}}}, {"metadata", {{"type", "object"}}}}}},
        {{"type", "object"}, {"additionalProperties", false}, {"required", {"type"}},
         {"properties", {{"type", {{"const", "finalize"}}}, {"metadata", {{"type", "object"}}}}}}}}};
  json observation = {
      {"title", "KgymObservation"},
      {"type", "object"},
      {"properties", {{"episode_id", {{"type", "string"}}},
                      {"task_id", {{"type", "string"}}},
                      {"turn", {{"type", "integer"}, {"description", "turns used so far"}}},
                      {"max_turns", {{"type", "integer"}}},
                      {"prompt", {{"type", "string"}, {"description", "reset: the task prompt; after a turn: the next user message"}}},
                      {"feedback_turn", {{"type", json::array({"integer", "null"})}}},
                      {"feedback", feedback},
                      {"feedback_text", {{"type", "string"}}},
                      {"history", {{"type", "string"}, {"description", "compressed earlier turns"}}},
                      {"returns", returns}}}};
  json state = {
      {"title", "KgymState"},
      {"type", "object"},
      {"properties", {{"episode_id", {{"type", "string"}}},
                      {"step_count", {{"type", "integer"}, {"minimum", 0}}},
                      {"task_id", {{"type", "string"}}},
                      {"turns_used", {{"type", "integer"}}},
                      {"max_turns", {{"type", "integer"}}},
                      {"done", {{"type", "boolean"}}},
                      {"reward_name", {{"type", "string"}}},
                      {"turns", {{"type", "array"}, {"items", {{"type", "object"}, {"properties", {{"turn", {{"type", "integer"}}}, {"outcome", {{"type", "string"}}}, {"reward", {{"type", "number"}}}, {"speedup_eager", nullable_number}, {"summary", {{"type", "string"}}}}}}}}},
                      {"returns", returns}}}};
  return {{"action", action}, {"observation", observation}, {"state", state}};
}

}  // namespace kgym::api
