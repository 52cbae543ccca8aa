// Typed options (options.hpp): one parser and one error text each.
#include <gtest/gtest.h>

#include "kgym/error.hpp"
#include "kgym/options.hpp"

namespace kgym {
namespace {

std::string message_of(auto&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    return e.what();
  }
  return "(no error)";
}

TEST(Options, ProfileParsedWithOneErrorText) {
  for (auto p : {policy::Profile::strict, policy::Profile::hybrid, policy::Profile::kernelbench, policy::Profile::off})
    EXPECT_EQ(parse_profile(policy::to_string(p)), p);
  EXPECT_EQ(message_of([] { parse_profile("lenient"); }),
            "unknown --profile 'lenient': use strict, hybrid, kernelbench or off");
  EXPECT_EQ(message_of([] { parse_profile("Strict", "policy_profile"); }),
            "unknown policy_profile 'Strict': use strict, hybrid, kernelbench or off");
}

TEST(Options, DeviceParsedWithOneErrorText) {
  EXPECT_TRUE(parse_device("cpu").is_cpu());
  EXPECT_EQ(parse_device("cuda").name(), "cuda");
  EXPECT_EQ(parse_device("cuda:3").index, 3);
  EXPECT_EQ(parse_device("cuda:3").name(), "cuda:3");
  for (const char* bad : {"tpu", "cuda:", "cuda:x", "cuda:-1", "CPU", "", "cuda:99999999999"})
    EXPECT_EQ(message_of([&] { parse_device(bad); }), "bad --device '" + std::string(bad) + "': use cpu, cuda or cuda:N")
        << bad;
}

}  // namespace
}  // namespace kgym
