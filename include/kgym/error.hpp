#pragma once
// Errors are thrown inside kgym and translated exactly once at each edge (CLI exit code and
// message, HTTP error JSON, worker result message). Each carries where it was thrown.

#include <source_location>
#include <stdexcept>
#include <string>

namespace kgym {

/// Kind of a kgym error; the edge maps it (CLI: exit code 2 for usage/input, 3 for internal).
enum class ErrorKind {
  usage,     ///< bad command line or request (unknown flag value, missing --suite)
  input,     ///< bad input data (unknown task id, unreadable file, malformed JSONL line)
  worker,    ///< a trusted worker process failed or broke the protocol
  internal,  ///< a bug in kgym
};

/// The one exception type kgym throws. `what()` is the user-facing message: it names the
/// problem and what to do about it.
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message,
        std::source_location where = std::source_location::current())
      : std::runtime_error(message), kind_(kind), where_(where) {}
  ErrorKind kind() const noexcept { return kind_; }
  /// "file:line (function)" of the throw, for logs.
  std::string where() const {
    return std::string(where_.file_name()) + ":" + std::to_string(where_.line()) + " (" +
           where_.function_name() + ")";
  }

 private:
  ErrorKind kind_;
  std::source_location where_;
};

}  // namespace kgym
