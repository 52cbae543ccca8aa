#pragma once
// `kgym generate`: asks an OpenAI-compatible chat-completions endpoint (vLLM, llama.cpp server,
// a hosted API behind an http:// proxy) for candidates and writes a run directory (run.hpp).
// Prompts, feedback and context compression are the episode server's own (kgym/episode.hpp:
// build_prompt, Episode::record_submission, compress_history), so a model is asked here with the
// same words as through `kgym serve`. Multi-turn: each turn's candidate is judged with the Engine.

#include <atomic>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgym/engine.hpp"
#include "kgym/episode.hpp"
#include "kgym/task.hpp"

namespace kgym {

/// One chat message (OpenAI chat-completions roles: "system", "user", "assistant").
struct ChatMessage {
  std::string role, content;
};

/// The messages of a turn: turn 0 is the task prompt; later turns see the task prompt with the
/// older turns compressed (compress_history, within `history_tokens`), the newest submission as
/// the assistant's answer and the episode's next user message (its verdict and the instruction
/// to revise). `episode` holds the judged turns so far.
std::vector<ChatMessage> turn_messages(const Episode& episode, const Observation& last, std::size_t history_tokens);

/// An http://host[:port][/base] endpoint; requests go to <base>/chat/completions.
struct Endpoint {
  std::string host, port = "80", base;  ///< base: path prefix without trailing slash, e.g. "/v1"
};

/// Parses "http://127.0.0.1:8000/v1". Error(usage) for other schemes (https: put a local proxy
/// in front) or a malformed URL.
Endpoint parse_endpoint(const std::string& url);

/// One completion.
struct ChatResult {
  std::string content, finish_reason;
  long prompt_tokens = 0, completion_tokens = 0;
  int attempts = 1;  ///< HTTP requests made (retries + 1)
};

/// Retry with exponential back-off: attempt i (0-based) waits min(max_s, base_s * 2^i), or the
/// server's Retry-After when it sends one. Retried: connection errors, timeouts, HTTP 408, 429, 5xx.
struct RetryPolicy {
  int max_attempts = 6;
  double base_s = 1.0;
  double max_s = 60.0;
};

/// A chat-completions client (Boost.Beast over plain HTTP, one connection per request).
class ChatClient {
 public:
  ChatClient(Endpoint endpoint, std::string api_key, double timeout_s, RetryPolicy retry);
  /// Asks for one completion. `extra` is merged into the request body (e.g. {"seed": 1}).
  /// Throws Error(input) for a non-retryable HTTP error (400, 401, 404, ...) with the body's
  /// first 300 characters, Error(worker) when the retries are used up.
  ChatResult complete(const std::string& model, const std::vector<ChatMessage>& messages, double temperature,
                      int max_tokens, const nlohmann::json& extra = nlohmann::json::object()) const;

 private:
  Endpoint endpoint_;
  std::string api_key_;
  double timeout_s_;
  RetryPolicy retry_;
};

/// Settings of one generate run.
struct GenerateOptions {
  std::string model;
  int samples = 1;              ///< independent samples per task
  int turns = 1;                ///< turns per sample; > 1 needs an engine (feedback)
  double temperature = 0.0;
  int max_tokens = 4096;        ///< per completion
  int concurrency = 4;          ///< requests in flight at once
  std::optional<long> token_budget;  ///< stop asking once prompt + completion tokens reach this
  EpisodeOptions episode;       ///< prompt options (backend, policy profile), history_tokens, feedback_chars
  EvalOptions eval;             ///< judging of multi-turn candidates
};

/// What one generate call did.
struct GenerateStats {
  long requests = 0, retries = 0, prompt_tokens = 0, completion_tokens = 0;
  int turns_asked = 0, turns_reused = 0, samples_complete = 0, samples_incomplete = 0;
  bool budget_exhausted = false;
  double seconds = 0;
};

/// Runs the study's generation into `run_dir`: generations.jsonl (one record per task, sample,
/// turn: completion, code, usage, feedback), candidates.jsonl (kgym rows, candidate id
/// "<task>@s<sample>t<turn>"), verdicts.jsonl when turns > 1 (the judged turns), manifest.json.
/// Resumes: turns already in generations.jsonl are not asked again (their judged code and
/// verdicts rebuild the episode and so the context). `engine` may be null only when turns == 1.
GenerateStats generate_run(const std::filesystem::path& run_dir, const std::vector<Task>& tasks,
                           const ChatClient& client, const GenerateOptions& options, Engine* engine);

}  // namespace kgym
