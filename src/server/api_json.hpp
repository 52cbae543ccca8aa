#pragma once
// The JSON edge of the server (internal to src/server): requests are parsed into plain structs
// here, responses written from structs here, and every exception mapped to the one error shape
// {"type": "error", "data": {"message", "code"}} with an HTTP status. Nothing else sees JSON.

#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "kgym/gym.hpp"

namespace kgym::api {

/// An error of the protocol layer itself (bad JSON, unknown route or message type).
class ApiError : public Error {
 public:
  ApiError(int status, std::string code, const std::string& message)
      : Error(ErrorKind::usage, message), status_(status), code_(std::move(code)) {}
  int status() const noexcept { return status_; }
  const std::string& code() const noexcept { return code_; }

 private:
  int status_;
  std::string code_;
};

/// The error shape and HTTP status of any exception (the one mapping; docs/server.md "Errors").
struct ErrorReply {
  int status = 500;
  nlohmann::json body;
};
ErrorReply error_reply(std::exception_ptr error);

/// Parses a request body; ApiError(400, INVALID_JSON) when it is not a JSON object.
nlohmann::json parse_body(const std::string& body);

/// Reset parameters from a reset body (top level or under "options"). RequestError(malformed)
/// for unknown keys or wrong types.
ResetRequest parse_reset(const nlohmann::json& body);
/// An action object ({"type": "submit_kernel", "code": ...} etc.). RequestError(malformed).
Action parse_action(const nlohmann::json& action);
/// The episode id of a body ("episode_id" string); RequestError(malformed) when missing.
std::string episode_id_of(const nlohmann::json& body);

/// A group's returns for POST /advantages.
struct AdvantageRequest {
  std::vector<double> returns;
  std::string method = "grpo";  ///< "grpo" | "dr_grpo"
  double eps = 1e-4;
};
/// {"returns": [numbers], "method"?: "grpo"|"dr_grpo", "eps"?: number}; RequestError(malformed).
AdvantageRequest parse_advantages(const nlohmann::json& body);

/// {"observation": {...}, "reward": r|null, "done": b} (OpenEnv StepResponse / ResetResponse).
nlohmann::json observation_reply(const Observation& o);
nlohmann::json state_json(const EpisodeState& s);
nlohmann::json feedback_json(const Feedback& f);

/// The JSON schemas of action, observation and state (GET /schema).
nlohmann::json schemas();

}  // namespace kgym::api
