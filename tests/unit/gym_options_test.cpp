// The typed options of a reset reach the evaluator of the episode's turns: the reward (with the
// roofline floor it needs) and the policy profile, parsed once at the edge.
#include <gtest/gtest.h>

#include <mutex>

#include "kgym/gym.hpp"
#include "kgym/scheduler.hpp"

namespace kgym {
namespace {

/// Records the options of each evaluation; answers a passed verdict, 2x over eager (1 ms).
class OptionsRecorder final : public Evaluator {
 public:
  Verdict evaluate(const Task& task, const Candidate& candidate, const EvalOptions& options) override {
    {
      std::lock_guard lock(mutex);
      seen.push_back(options);
    }
    Verdict v;
    v.task_id = task.id;
    v.candidate_id = candidate.id;
    v.outcome = Outcome::passed;
    v.gate = Gate::timing;
    v.correct = true;
    v.cases_passed = v.cases_total = 3;
    v.ref_runtime_ms = 1.0;
    v.runtime_ms = 0.5;
    v.speedup_eager = 2.0;
    v.reward_name = options.reward.name();
    v.reward = options.reward(v, options.reward_context);  // as the engine computes it
    return v;
  }
  std::string describe() const override { return "options recorder"; }
  std::mutex mutex;
  std::vector<EvalOptions> seen;
};

TEST(GymOptions, ResetOptionsReachTheEvaluator) {
  auto recorder = std::make_shared<OptionsRecorder>();
  Scheduler scheduler({{"cpu", recorder}}, 1);
  GymConfig config;
  config.episode.max_turns = 1;
  Task task{"L1/19_ReLU", "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n",
            "test", 1};
  Gym gym({task}, scheduler, config);
  const std::string code = "class ModelNew:\n    pass\n";

  ResetRequest r;
  r.task_id = "L1/19_ReLU";
  r.reward = parse_reward("roofline");
  r.roofline_floor_ms = 0.25;
  r.policy_profile = policy::Profile::hybrid;
  const std::string id = gym.reset(r).episode_id;
  const Observation o = gym.step(id, {Action::Type::submit_kernel, code, 0});
  ASSERT_EQ(recorder->seen.size(), 1u);
  const EvalOptions& seen = recorder->seen.back();
  EXPECT_EQ(seen.reward.name(), "roofline");
  EXPECT_EQ(seen.reward_context.roofline_floor_ms, 0.25);
  EXPECT_EQ(seen.policy_profile, policy::Profile::hybrid);
  // The turn's reward is the registry's roofline on the verdict: (1 - 0.5) / (1 - 0.25).
  ASSERT_TRUE(o.reward.has_value());
  EXPECT_NEAR(*o.reward, (1.0 - 0.5) / (1.0 - 0.25), 1e-12);

  ResetRequest s;
  s.task_id = "L1/19_ReLU";
  s.reward = parse_reward("stepped");
  const std::string id2 = gym.reset(s).episode_id;
  const Observation o2 = gym.step(id2, {Action::Type::submit_kernel, code, 0});
  ASSERT_EQ(recorder->seen.size(), 2u);
  EXPECT_EQ(recorder->seen.back().reward.name(), "stepped");
  EXPECT_EQ(recorder->seen.back().policy_profile, policy::Profile::strict);  // the server's default
  EXPECT_EQ(*o2.reward, 1.0);  // correct and 2x faster
}

}  // namespace
}  // namespace kgym
