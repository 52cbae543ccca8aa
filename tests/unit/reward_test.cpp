#include <gtest/gtest.h>

#include <cmath>

#include "kgym/error.hpp"
#include "kgym/reward.hpp"

namespace kgym {
namespace {

Verdict passed(double speedup, double spread = 0.01) {
  Verdict v;
  v.outcome = Outcome::passed;
  v.correct = true;
  v.cases_passed = v.cases_total = 5;
  v.speedup_eager = speedup;
  v.runtime_spread = spread;
  return v;
}

TEST(Reward, Kevin) {
  EXPECT_DOUBLE_EQ(kevin_reward(passed(2.0)), 2.3);
  Verdict wrong;
  wrong.outcome = Outcome::incorrect;
  EXPECT_DOUBLE_EQ(kevin_reward(wrong), 0.0);
  Verdict invalid = passed(50);
  invalid.outcome = Outcome::timing_invalid;  // correct but untrusted time: no speed credit
  EXPECT_DOUBLE_EQ(kevin_reward(invalid), 0.3);
  // Correct values, rejected after the cases (the CPU op trace, the launch gate's library share, a
  // tamper): no credit at all. A fresh user saw such a hack earn 0.3 (session 17).
  for (Outcome o : {Outcome::policy_rejected, Outcome::contract_violation}) {
    Verdict rejected = passed(3.0);
    rejected.outcome = o;
    EXPECT_DOUBLE_EQ(kevin_reward(rejected), 0.0) << to_string(o);
    EXPECT_DOUBLE_EQ(log_speed_reward(rejected), 0.0) << to_string(o);
  }
}

TEST(Reward, LogSpeed) {
  EXPECT_NEAR(log_speed_reward(passed(0.75)), 1.0, 1e-12);
  EXPECT_NEAR(log_speed_reward(passed(4.0)), 2.0, 1e-12);
  EXPECT_NEAR(log_speed_reward(passed(100.0)), 2.0, 1e-12);  // clamped
  EXPECT_NEAR(log_speed_reward(passed(0.1)), 1.0, 1e-12);
  const double mid = std::log(2.0 / 0.75) / std::log(4.0 / 0.75);
  EXPECT_NEAR(log_speed_reward(passed(2.0)), 1.0 + mid, 1e-12);
  EXPECT_NEAR(log_speed_reward(passed(2.0, 0.5)), 1.0 + mid / 2, 1e-12);  // unstable timing
  Verdict partial;
  partial.outcome = Outcome::incorrect;
  partial.cases_passed = 2;
  partial.cases_total = 5;
  EXPECT_NEAR(log_speed_reward(partial), 0.4, 1e-12);
  Verdict crash;
  crash.outcome = Outcome::contract_violation;
  crash.cases_passed = 4;
  crash.cases_total = 5;
  EXPECT_DOUBLE_EQ(log_speed_reward(crash), 0.0);
}

TEST(Reward, ByName) {
  EXPECT_DOUBLE_EQ(compute_reward("kevin", passed(1.0)), 1.3);
  EXPECT_THROW(compute_reward("nope", passed(1.0)), Error);
  // One registry: the names eval, serve and episodes accept (and /metadata lists) are the same
  // four, and each computes through parse_reward.
  EXPECT_EQ(reward_names(), (std::vector<std::string>{"kevin", "log_speed", "stepped", "roofline"}));
  EXPECT_DOUBLE_EQ(compute_reward("stepped", passed(2.0)), 1.0);
  EXPECT_DOUBLE_EQ(compute_reward("log_speed", passed(4.0)), 2.0);
  EXPECT_NEAR(compute_reward("roofline", passed(2.0), {.roofline_floor_ms = 0.25, .noise_gate = std::nullopt}), 0.0, 1e-12);  // no runtimes in passed(): 0
}

TEST(Reward, ParsedOnceWithOneErrorText) {
  const RewardName r = parse_reward("stepped");
  EXPECT_EQ(r.name(), "stepped");
  EXPECT_FALSE(r.needs_roofline_floor());
  EXPECT_TRUE(parse_reward("roofline").needs_roofline_floor());
  EXPECT_EQ(RewardName().name(), "kevin");  // the default
  try {
    parse_reward("speedy", "options.reward");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_EQ(std::string(e.what()),
              "unknown reward 'speedy' (options.reward); known: kevin, log_speed, stepped, roofline");
  }
  EXPECT_THROW(parse_reward("roofline")(passed(1.0)), Error);  // no floor in the context
}

}  // namespace
}  // namespace kgym

namespace kgym {
namespace {

Verdict passed_with_interval(double speedup, double lo, double hi) {
  Verdict v;
  v.outcome = Outcome::passed;
  v.correct = true;
  v.cases_passed = v.cases_total = 5;
  v.speedup_eager = speedup;
  v.speedup_eager_ci = Interval{lo, hi};
  v.runtime_spread = 0.01;
  return v;
}

TEST(NoiseGate, AnIntervalHoldingOneIsCreditedAsOne) {
  const Verdict noise = passed_with_interval(1.3, 0.9, 1.6), clear = passed_with_interval(1.3, 1.1, 1.5);
  EXPECT_DOUBLE_EQ(*gated_speedup(noise, true), 1.0);
  EXPECT_DOUBLE_EQ(*gated_speedup(noise, false), 1.3);
  EXPECT_DOUBLE_EQ(*gated_speedup(clear, true), 1.3);
  EXPECT_FALSE(gated_speedup(Verdict{}, true));
  // A slowdown inside the noise keeps its value: the gate never raises a speedup, so a slower
  // candidate gains nothing by widening its own interval.
  EXPECT_DOUBLE_EQ(*gated_speedup(passed_with_interval(0.8, 0.7, 1.05), true), 0.8);
  // Without an interval (an older verdict) the speedup stands.
  Verdict bare = passed_with_interval(1.3, 0, 0);
  bare.speedup_eager_ci.reset();
  EXPECT_DOUBLE_EQ(*gated_speedup(bare, true), 1.3);
}

TEST(NoiseGate, OnByDefaultForLogSpeedOffForKevin) {
  const Verdict noise = passed_with_interval(2.0, 0.9, 2.5);
  const double at_one = 1.0 + std::log(1.0 / 0.75) / std::log(4.0 / 0.75);
  const double at_two = 1.0 + std::log(2.0 / 0.75) / std::log(4.0 / 0.75);
  EXPECT_NEAR(log_speed_reward(noise), at_one, 1e-12);
  EXPECT_NEAR(compute_reward("log_speed", noise), at_one, 1e-12);
  EXPECT_NEAR(compute_reward("log_speed:noise_gate=off", noise), at_two, 1e-12);
  EXPECT_DOUBLE_EQ(compute_reward("kevin", noise), 2.3);
  EXPECT_DOUBLE_EQ(compute_reward("kevin:noise_gate=on", noise), 1.3);
  EXPECT_THROW(compute_reward("log_speed:gate=maybe", noise), Error);
}

}  // namespace
}  // namespace kgym
