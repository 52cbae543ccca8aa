#pragma once
// Typed options: the policy profile and the device, parsed once where they enter kgym (the
// command line, an HTTP request) and carried as values from there on. Each has one parser and one
// error text. The reward name is the third typed option; it lives with its registry (reward.hpp).

#include <optional>
#include <string>
#include <string_view>

namespace kgym {
namespace policy {

/// A named rule set of the policy gate (docs/policy_rules.md).
///  - strict: all compute in custom kernels (no torch compute op in the forward path).
///  - hybrid: as strict, but one library GEMM or convolution call is allowed on the forward path.
///  - kernelbench: the semantics of KernelBench's `kernel_static_checker.py` (its strict checks
///    reject, its warning checks warn), for numbers comparable with KernelBench's.
///  - off: only the basic contract (syntax_error, model_new_missing) runs.
enum class Profile { strict, hybrid, kernelbench, off };

/// "strict" | "hybrid" | "kernelbench" | "off" -> Profile; anything else -> nullopt.
std::optional<Profile> profile_from_string(std::string_view name);
/// The profile's name ("strict", ...), as profile_from_string reads it.
std::string_view to_string(Profile profile);

}  // namespace policy

/// The policy profile named `name`. `option` names where the value came from, for the message
/// ("--profile" on the command line, "policy_profile" in a request). Throws Error(usage):
/// "unknown <option> '<name>': use strict, hybrid, kernelbench or off".
policy::Profile parse_profile(std::string_view name, std::string_view option = "--profile");

/// A device of the engine: the CPU, or a CUDA device (the current one, or index N).
struct Device {
  enum class Kind { cpu, cuda };
  Kind kind = Kind::cpu;
  std::optional<int> index;  ///< cuda only: N of "cuda:N"; none for plain "cuda"

  /// "cpu", "cuda" or "cuda:N" (the form EngineOptions::device and the workers read).
  std::string name() const;
  bool is_cpu() const noexcept { return kind == Kind::cpu; }
  bool operator==(const Device&) const = default;
};

/// "cpu" | "cuda" | "cuda:N" (N a decimal index) -> Device. `option` names where the value came
/// from. Throws Error(usage): "bad <option> '<name>': use cpu, cuda or cuda:N".
Device parse_device(std::string_view name, std::string_view option = "--device");

}  // namespace kgym
