#pragma once
// KernelBench's parameter rule for whole models (level 3): the reference `Model` and the
// candidate's `ModelNew` are constructed under the same init seed, so a candidate that makes the
// same parameters in the same order holds the same values. A candidate whose output is wrong
// and whose parameters differ (a shape changed, a layer skipped, other values) is told which one.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kgym {

/// The first difference between two parameter lists, as the workers report them
/// (python/kgym_worker/parameters.py: [[name, shape, checksum], ...] in registration order), in
/// words naming the parameter ("the candidate skips the reference's parameter `layers.2.weight`
/// [10, 20] (a layer left out?)"); std::nullopt when they agree (shapes and checksums within a
/// relative 1e-6) or the reference has none. Malformed entries are ignored.
std::optional<std::string> parameter_difference(const nlohmann::json& reference, const nlohmann::json& candidate);

}  // namespace kgym
