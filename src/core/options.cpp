// Typed options (options.hpp): one parser and one error text per option.
#include "kgym/options.hpp"

#include "kgym/error.hpp"

namespace kgym {
namespace policy {

std::optional<Profile> profile_from_string(std::string_view name) {
  if (name == "strict") return Profile::strict;
  if (name == "hybrid") return Profile::hybrid;
  if (name == "kernelbench") return Profile::kernelbench;
  if (name == "off") return Profile::off;
  return std::nullopt;
}

std::string_view to_string(Profile profile) {
  switch (profile) {
    case Profile::strict: return "strict";
    case Profile::hybrid: return "hybrid";
    case Profile::kernelbench: return "kernelbench";
    case Profile::off: return "off";
  }
  return "strict";
}

}  // namespace policy

policy::Profile parse_profile(std::string_view name, std::string_view option) {
  if (auto p = policy::profile_from_string(name)) return *p;
  throw Error(ErrorKind::usage, "unknown " + std::string(option) + " '" + std::string(name) +
                                    "': use strict, hybrid, kernelbench or off");
}

std::string Device::name() const {
  if (kind == Kind::cpu) return "cpu";
  return index ? "cuda:" + std::to_string(*index) : "cuda";
}

Device parse_device(std::string_view name, std::string_view option) {
  if (name == "cpu") return {};
  if (name == "cuda") return {Device::Kind::cuda, std::nullopt};
  if (name.starts_with("cuda:") && name.size() > 5 && name.size() < 10 &&
      name.find_first_not_of("0123456789", 5) == std::string_view::npos) {
    return {Device::Kind::cuda, std::stoi(std::string(name.substr(5)))};
  }
  throw Error(ErrorKind::usage,
              "bad " + std::string(option) + " '" + std::string(name) + "': use cpu, cuda or cuda:N");
}

}  // namespace kgym
