// Gate 1 of the kernelbench_module format: a Python module defining ModelNew, checked by the
// policy gate's Python and embedded-C++ rules (policy.hpp).
#include "../formats.hpp"

namespace kgym::formats {

policy::PolicyReport kernelbench_module_policy(const std::string& code, const policy::PolicyContext& context) {
  return policy::check_candidate(code, context);
}

}  // namespace kgym::formats
