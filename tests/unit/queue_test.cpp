// The queue's URL parser and job options, and the episode journal with a Gym resumed on it.
#include <unistd.h>

#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "kgym/evaluator.hpp"
#include "kgym/gym.hpp"
#include "kgym/journal.hpp"
#include "kgym/queue.hpp"
#include "kgym/scheduler.hpp"
#include "kgym/options.hpp"
#include "kgym/reward.hpp"
#include "scripted_evaluator.hpp"

namespace kgym {
namespace {

TEST(QueueUrl, ParsesRedisUrlsAndRejectsTheRest) {
  QueueUrl u = parse_queue_url("redis://10.0.0.7:6380/2");
  EXPECT_EQ(u.host, "10.0.0.7");
  EXPECT_EQ(u.port, 6380);
  EXPECT_EQ(u.db, 2);
  EXPECT_EQ(parse_queue_url("redis://queue-host").port, 6379);
  for (const char* bad : {"http://h:1", "redis://", "redis://:6379", "redis://h:0", "redis://h:70000", "redis://h:x",
                          "redis://h:6379/db", "redis://user:pw@h:6379", "h:6379"}) {
    try {
      parse_queue_url(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage) << bad;
      EXPECT_NE(std::string(e.what()).find("redis://HOST:PORT"), std::string::npos) << e.what();
    }
  }
}

TEST(QueueJob, EvalOptionsSurviveTheRoundTrip) {
  EvalOptions o;
  o.n_cases = 3;
  o.transforms = {"nominal", "abs"};
  o.tolerance = Tolerance{1e-3, 2e-3};
  o.scale = 0.25;
  o.time_candidate = false;
  o.compile_baseline = true;
  o.other_shape = false;
  o.timing.max_calls = 7;
  o.timing.spot_samples = 11;
  o.timeouts.case_s = 9;
  o.reward = parse_reward("log_speed:noise_gate=off");
  o.policy_profile = policy::Profile::off;
  o.judge.min_timed_calls = 2;
  o.judge.timer_doubt_factor_cpu = 4.5;
  EvalOptions back = eval_options_from_json(eval_options_json(o));
  EXPECT_EQ(eval_options_json(back), eval_options_json(o));
  EXPECT_EQ(back.n_cases, 3);
  EXPECT_EQ(back.reward, parse_reward("log_speed:noise_gate=off"));
  EXPECT_EQ(back.policy_profile, policy::Profile::off);
  ASSERT_TRUE(back.tolerance);
  EXPECT_DOUBLE_EQ(back.tolerance->rtol, 2e-3);
  EXPECT_EQ(back.timing.max_calls, 7);
  EXPECT_EQ(back.judge.timer_doubt_factor_cpu, 4.5);
  EXPECT_EQ(back.transforms, (std::vector<std::string>{"nominal", "abs"}));
  EXPECT_FALSE(eval_options_from_json(eval_options_json(EvalOptions{})).tolerance);
  EXPECT_THROW(eval_options_from_json(nlohmann::json{{"n_cases", "three"}}), Error);
}

std::vector<Task> tasks() {
  return {{"L1/19_ReLU", "import torch\nclass Model(torch.nn.Module):\n    pass\n", "test", 1}};
}

std::string script(const std::string& outcome) { return "# kgym-script: outcome=" + outcome + "\nclass ModelNew:\n    pass\n"; }

TEST(EpisodeJournal, AGymOnTheJournalResumesOpenEpisodesWithTheirTurns) {
  const auto file = std::filesystem::temp_directory_path() / ("kgym-journal-" + std::to_string(::getpid()) + ".sqlite");
  std::filesystem::remove(file);
  std::string open_id, done_id;
  {
    Scheduler s({{"cpu", std::shared_ptr<Evaluator>(make_scripted_evaluator())}}, 1);
    GymConfig config;
    config.episode.max_turns = 3;
    config.episode.gamma = 0.5;
    config.journal = std::make_shared<EpisodeJournal>(file);
    Gym gym(tasks(), s, config);
    ResetRequest r;
    r.task_id = "L1/19_ReLU";
    open_id = gym.reset(r).episode_id;
    Action a;
    a.code = script("incorrect");
    gym.step(open_id, a);
    a.code = script("passed");
    gym.step(open_id, a);
    r.max_turns = 1;
    done_id = gym.reset(r).episode_id;
    gym.step(done_id, a);  // its only turn: done, closed in the journal
  }
  Scheduler s({{"cpu", std::shared_ptr<Evaluator>(make_scripted_evaluator())}}, 1);
  GymConfig config;
  config.journal = std::make_shared<EpisodeJournal>(file);
  Gym gym(tasks(), s, config);
  EpisodeState st = gym.state(open_id);
  ASSERT_EQ(st.turns_used, 2);
  EXPECT_EQ(st.max_turns, 3);  // the episode's own options, not this server's default
  EXPECT_EQ(st.turns[0].outcome, Outcome::incorrect);
  EXPECT_EQ(st.turns[1].outcome, Outcome::passed);
  Action a;
  a.code = script("passed");
  Observation o = gym.step(open_id, a);
  EXPECT_EQ(o.turn, 3);
  EXPECT_TRUE(o.done);
  ASSERT_TRUE(o.returns);
  EXPECT_EQ(o.returns->rewards.size(), 3u);
  EXPECT_DOUBLE_EQ(o.returns->gamma, 0.5);
  try {
    gym.state(done_id);
    ADD_FAILURE() << "a finished episode was resumed";
  } catch (const RequestError& e) {
    EXPECT_EQ(e.problem(), RequestProblem::unknown_episode);
    EXPECT_NE(std::string(e.what()).find("was closed: done"), std::string::npos) << e.what();
  }
  EXPECT_EQ(config.journal->close_reason(open_id).value_or(""), "done: all 3 turns used");
  // Each turn's verdict is in the result store's verdicts table too.
  EXPECT_EQ(ResultStore(file, "serve").verdicts().size(), 4u);
  std::filesystem::remove(file);
}

TEST(Gym, IdleEpisodesAreClosedWithTheReason) {
  Scheduler s({{"cpu", std::shared_ptr<Evaluator>(make_scripted_evaluator())}}, 1);
  GymConfig config;
  config.idle_timeout_s = 0.2;
  Gym gym(tasks(), s, config);
  ResetRequest r;
  r.task_id = "L1/19_ReLU";
  std::string idle = gym.reset(r).episode_id;
  EXPECT_EQ(gym.close_idle(), 0u);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::string fresh = gym.reset(r).episode_id;
  EXPECT_EQ(gym.close_idle(), 1u);
  EXPECT_NO_THROW(gym.state(fresh));
  try {
    gym.state(idle);
    ADD_FAILURE() << "the idle episode is still open";
  } catch (const RequestError& e) {
    EXPECT_NE(std::string(e.what()).find("idle for more than"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kgym
