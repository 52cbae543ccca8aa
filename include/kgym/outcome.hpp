#pragma once
// The one outcome enum of kgym. Every way a verdict can end is one value here; rewards, metrics,
// feedback and reports switch on it, never on strings. The string forms are stable (JSONL, API).

#include <optional>
#include <string_view>

namespace kgym {

/// How a verdict ended. Ordered roughly by the gate that produces it (see ../shared/ARCHITECTURE.md §4).
enum class Outcome {
  passed,              ///< every gate passed: correct on all cases, timing valid.
  no_candidate,        ///< nothing to judge: empty code or the string "None" (CUDA-L1 rows).
  policy_rejected,     ///< gate 1 (policy): a static rule rejected the source (e.g. no `ModelNew`).
  build_failed,        ///< gate 2 (build): syntax error, import error, compiler error.
  runtime_error,       ///< the candidate raised or its process died (signal, OOM, CUDA fault).
  timeout,             ///< a gate ran past its time limit; the candidate process was killed.
  incorrect,           ///< gate 4: wrong values (outside tolerance, NaN/Inf) on some case.
  contract_violation,  ///< gate 4: tensor subclass, wrong dtype/shape/device, input mutated/aliased.
  timing_invalid,      ///< gate 5: output right, but the time cannot be trusted.
  task_error,          ///< the reference itself failed (broken task); the candidate is not at fault.
};

/// Gates in the order they run (../shared/ARCHITECTURE.md §4). `none` when no gate ran (no_candidate).
enum class Gate { none, policy, build, launch, correctness, timing };

/// Stable lower-case name, e.g. "contract_violation".
std::string_view to_string(Outcome outcome) noexcept;
std::string_view to_string(Gate gate) noexcept;
/// Parses the stable name; std::nullopt for an unknown one.
std::optional<Outcome> outcome_from_string(std::string_view name) noexcept;
std::optional<Gate> gate_from_string(std::string_view name) noexcept;

/// All outcomes, in enum order (for summary tables).
inline constexpr Outcome kAllOutcomes[] = {
    Outcome::passed,        Outcome::no_candidate, Outcome::policy_rejected,
    Outcome::build_failed,  Outcome::runtime_error, Outcome::timeout,
    Outcome::incorrect,     Outcome::contract_violation, Outcome::timing_invalid,
    Outcome::task_error};

}  // namespace kgym
