#pragma once
// The formats' entry points, one per folder of src/formats/, for the registry (registry.cpp).
#include <string>

#include "kgym/format.hpp"

namespace kgym::formats {

/// kernelbench_module/policy_check.cpp: the Python source gate (policy::check_candidate).
policy::PolicyReport kernelbench_module_policy(const std::string& code, const policy::PolicyContext& context);

}  // namespace kgym::formats
