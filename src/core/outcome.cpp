#include "kgym/outcome.hpp"

#include <array>
#include <utility>

namespace kgym {
namespace {
constexpr std::array<std::pair<Outcome, std::string_view>, 10> kOutcomeNames{{
    {Outcome::passed, "passed"},
    {Outcome::no_candidate, "no_candidate"},
    {Outcome::policy_rejected, "policy_rejected"},
    {Outcome::build_failed, "build_failed"},
    {Outcome::runtime_error, "runtime_error"},
    {Outcome::timeout, "timeout"},
    {Outcome::incorrect, "incorrect"},
    {Outcome::contract_violation, "contract_violation"},
    {Outcome::timing_invalid, "timing_invalid"},
    {Outcome::task_error, "task_error"},
}};
constexpr std::array<std::pair<Gate, std::string_view>, 6> kGateNames{{
    {Gate::none, "none"},
    {Gate::policy, "policy"},
    {Gate::build, "build"},
    {Gate::launch, "launch"},
    {Gate::correctness, "correctness"},
    {Gate::timing, "timing"},
}};
}  // namespace

std::string_view to_string(Outcome outcome) noexcept {
  for (const auto& [value, name] : kOutcomeNames)
    if (value == outcome) return name;
  return "unknown";
}

std::string_view to_string(Gate gate) noexcept {
  for (const auto& [value, name] : kGateNames)
    if (value == gate) return name;
  return "unknown";
}

std::optional<Outcome> outcome_from_string(std::string_view name) noexcept {
  for (const auto& [value, text] : kOutcomeNames)
    if (text == name) return value;
  return std::nullopt;
}

std::optional<Gate> gate_from_string(std::string_view name) noexcept {
  for (const auto& [value, text] : kGateNames)
    if (text == name) return value;
  return std::nullopt;
}

}  // namespace kgym
