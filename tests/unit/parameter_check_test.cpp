#include <gtest/gtest.h>

#include "kgym/parameter_check.hpp"

namespace kgym {
namespace {

using nlohmann::json;

const json kReference = json::array({json::array({"fc1.weight", {20, 10}, 1.5}), json::array({"fc1.bias", {20}, 0.25}),
                                     json::array({"fc2.weight", {5, 20}, -2.0}), json::array({"fc2.bias", {5}, 0.5})});

TEST(ParameterCheck, SameParametersSayNothing) { EXPECT_FALSE(parameter_difference(kReference, kReference)); }

TEST(ParameterCheck, AChangedShapeIsNamed) {
  json cand = kReference;
  cand[2][1] = {5, 30};
  const auto d = parameter_difference(kReference, cand);
  ASSERT_TRUE(d);
  EXPECT_NE(d->find("fc2.weight has shape [5, 30] where the reference's fc2.weight has shape [5, 20]"), std::string::npos) << *d;
}

TEST(ParameterCheck, ASkippedLayerIsNamed) {
  // A model with a middle layer: the candidate leaves the middle one out.
  json ref = json::array({json::array({"a.weight", {8, 4}, 1.0}), json::array({"b.weight", {8, 8}, 2.0}),
                          json::array({"c.weight", {2, 8}, 3.0})});
  json cand = json::array({json::array({"a.weight", {8, 4}, 1.0}), json::array({"c.weight", {2, 8}, 3.0})});
  const auto d = parameter_difference(ref, cand);
  ASSERT_TRUE(d);
  EXPECT_NE(d->find("skips the reference's parameter `b.weight` [8, 8]"), std::string::npos) << *d;
  // The last layer left out: fewer parameters, the first missing one named.
  json shorter = json::array({json::array({"a.weight", {8, 4}, 1.0}), json::array({"b.weight", {8, 8}, 2.0})});
  const auto e = parameter_difference(ref, shorter);
  ASSERT_TRUE(e);
  EXPECT_NE(e->find("the reference's `c.weight` [2, 8] has no counterpart"), std::string::npos) << *e;
}

TEST(ParameterCheck, OtherValuesUnderTheSameSeedAreNamed) {
  json cand = kReference;
  cand[1][2] = 0.75;
  const auto d = parameter_difference(kReference, cand);
  ASSERT_TRUE(d);
  EXPECT_NE(d->find("`fc1.bias` [20] holds other values"), std::string::npos) << *d;
}

TEST(ParameterCheck, NoReferenceParametersOrMalformedListsSayNothing) {
  EXPECT_FALSE(parameter_difference(json::array(), kReference));
  EXPECT_TRUE(parameter_difference(kReference, json("not a list")));  // read as a candidate without parameters
  EXPECT_FALSE(parameter_difference(json::object(), json::array()));
}

}  // namespace
}  // namespace kgym
