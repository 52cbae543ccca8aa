#include "kgym/outcome.hpp"

#include <gtest/gtest.h>

namespace kgym {
namespace {

TEST(Outcome, NamesRoundTrip) {
  for (Outcome o : kAllOutcomes) {
    auto name = to_string(o);
    ASSERT_NE(name, "unknown");
    ASSERT_EQ(outcome_from_string(name), o);
  }
  EXPECT_FALSE(outcome_from_string("pass").has_value());
  EXPECT_EQ(to_string(Outcome::contract_violation), "contract_violation");
}

TEST(Gate, NamesRoundTrip) {
  for (Gate g : {Gate::none, Gate::policy, Gate::build, Gate::launch, Gate::correctness, Gate::timing})
    EXPECT_EQ(gate_from_string(to_string(g)), g);
  EXPECT_FALSE(gate_from_string("compile").has_value());
}

}  // namespace
}  // namespace kgym
