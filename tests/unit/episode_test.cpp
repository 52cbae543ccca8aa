// Episodes: prompt, feedback, turns, rewards, returns and context compression.
#include <gtest/gtest.h>

#include "kgym/episode.hpp"

using namespace kgym;

namespace {

Task relu_task() {
  return {"L1/19_ReLU",
          "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"
          "def get_inputs():\n    return [torch.randn(16, 16)]\ndef get_init_inputs():\n    return []\n",
          "test", 1};
}

Verdict passed(double speedup) {
  Verdict v;
  v.outcome = Outcome::passed;
  v.gate = Gate::timing;
  v.correct = true;
  v.cases_passed = v.cases_total = 5;
  v.ref_runtime_ms = 2.0;
  v.runtime_ms = 2.0 / speedup;
  v.runtime_spread = 0.02;
  v.speedup_eager = speedup;
  v.messages = {"passed"};
  return v;
}

Verdict incorrect() {
  Verdict v;
  v.outcome = Outcome::incorrect;
  v.gate = Gate::correctness;
  v.cases_passed = 2;
  v.cases_total = 5;
  v.messages = {"wrong values on case 2"};
  CaseRecord ok;
  ok.index = 1;
  CaseRecord bad;
  bad.index = 2;
  bad.transform = "negate";
  bad.numel = 256;
  bad.mismatches = 128;
  bad.first_mismatch_index = {0, 1};
  bad.max_abs_error = 1.5;
  bad.mean_abs_error = 0.4;
  bad.max_rel_error = 2.0;
  bad.atol = bad.rtol = 1e-4;
  v.measurements.cases = {ok, bad};
  return v;
}

Verdict build_failed(const std::string& log) {
  Verdict v;
  v.outcome = Outcome::build_failed;
  v.gate = Gate::build;
  v.messages = {"the extension did not compile"};
  v.measurements.load.failure = Failure{"import", "CalledProcessError", "nvcc failed", log, 0, 0};
  return v;
}

EpisodeOptions stepped_options(int max_turns) {
  EpisodeOptions o;
  o.max_turns = max_turns;
  o.reward = parse_reward("stepped");
  o.gamma = 0.4;
  return o;
}

}  // namespace

TEST(Prompt, HasRulesExampleInBackendAndReference) {
  PromptOptions o;
  o.backend = "triton";
  std::string p = build_prompt(relu_task(), o);
  EXPECT_NE(p.find("torch.relu(x)"), std::string::npos);
  EXPECT_NE(p.find("@triton.jit"), std::string::npos);
  EXPECT_EQ(p.find("load_inline(name=\"add\""), std::string::npos);
  EXPECT_NE(p.find("ModelNew"), std::string::npos);
  EXPECT_NE(p.find("fp32"), std::string::npos);
  o.backend = "cuda";
  o.style = "zero_shot";
  std::string z = build_prompt(relu_task(), o);
  EXPECT_EQ(z.find("__global__"), std::string::npos);
  o.backend = "fortran";
  EXPECT_THROW(build_prompt(relu_task(), o), Error);
}

TEST(Prompt, ExtractsTheLastFencedBlock) {
  EXPECT_EQ(extract_code("think...\n```python\nA = 1\n```\nmore\n```python\nB = 2\n```\n"), "B = 2\n");
  EXPECT_EQ(extract_code("class ModelNew: pass\n"), "class ModelNew: pass\n");
}

TEST(Feedback, IncorrectNamesTheFailingCaseAndErrors) {
  Feedback f = make_feedback(incorrect());
  EXPECT_EQ(f.outcome, Outcome::incorrect);
  ASSERT_TRUE(f.failing_case);
  EXPECT_EQ(f.failing_case->index, 2);
  EXPECT_EQ(f.failing_case->transform, "negate");
  EXPECT_EQ(f.failing_case->first_mismatch_index, (std::vector<std::int64_t>{0, 1}));
  std::string text = render_feedback(f);
  EXPECT_NE(text.find("128 of 256"), std::string::npos);
  EXPECT_NE(text.find("[0, 1]"), std::string::npos);
  EXPECT_NE(summarize_feedback(f).find("2/5"), std::string::npos);
}

TEST(Feedback, LogExcerptPrefersErrorLinesAndTextIsCut) {
  std::string log;
  for (int i = 0; i < 400; ++i) log += "note: line " + std::to_string(i) + " of compiler chatter\n";
  log += "kernel.cu(12): error: identifier \"foo\" is undefined\n";
  Feedback f = make_feedback(build_failed(log), 600);
  EXPECT_LE(f.log_excerpt.size(), 600u);
  EXPECT_NE(f.log_excerpt.find("identifier \"foo\" is undefined"), std::string::npos);
  std::string text = render_feedback(f, 300);
  EXPECT_LE(text.size(), 300u);
  EXPECT_NE(text.find("[feedback cut]"), std::string::npos);
}

TEST(Feedback, TimingAndSpeedupOfAPass) {
  Feedback f = make_feedback(passed(2.0));
  ASSERT_TRUE(f.timing);
  EXPECT_DOUBLE_EQ(f.timing->runtime_ms, 1.0);
  EXPECT_NE(render_feedback(f).find("Speedup 2x vs eager"), std::string::npos);
}

TEST(Episode, MultiTurnRewardsReturnsAndBestTurn) {
  Episode e("ep-1", relu_task(), stepped_options(3));
  Observation start = e.start();
  EXPECT_EQ(start.turn, 0);
  EXPECT_NE(start.prompt.find("3 submissions"), std::string::npos);
  Observation o1 = e.record_submission("code 1", incorrect());
  EXPECT_EQ(o1.reward, 0.25);
  EXPECT_FALSE(o1.done);
  EXPECT_NE(o1.prompt.find("Failing case 2"), std::string::npos);
  EXPECT_NE(o1.history.find("code 1"), std::string::npos);
  Observation o2 = e.record_submission("code 2", passed(2.0));
  EXPECT_EQ(o2.reward, 1.0);
  Observation o3 = e.record_submission("code 3", passed(0.9));
  EXPECT_TRUE(o3.done);
  ASSERT_TRUE(o3.returns);
  EXPECT_EQ(o3.returns->rewards, (std::vector<double>{0.25, 1.0, 0.5}));
  EXPECT_DOUBLE_EQ(o3.returns->returns[0], 0.25 + 0.4 * 1.0 + 0.16 * 0.5);
  EXPECT_EQ(o3.returns->best_turn, 2);
  EXPECT_EQ(o3.returns->final_reward, 1.0);
  EXPECT_THROW(e.record_submission("code 4", passed(3.0)), RequestError);
  EpisodeState s = e.state();
  EXPECT_EQ(s.step_count, 3);
  EXPECT_EQ(s.turns.size(), 3u);
  EXPECT_EQ(s.turns[0].outcome, Outcome::incorrect);
}

TEST(Episode, SingleTurnEndsAfterFirstSubmission) {
  Episode e("ep-2", relu_task(), stepped_options(1));
  Observation o = e.record_submission("code", build_failed("error: x"));
  EXPECT_TRUE(o.done);
  EXPECT_EQ(o.returns->best_turn, std::nullopt);
  EXPECT_EQ(o.returns->final_reward, 0.0);
}

TEST(Episode, InspectFinalizeAndBadRequests) {
  EpisodeOptions opts = stepped_options(4);
  opts.max_code_bytes = 64;
  Episode e("ep-3", relu_task(), opts);
  try {
    e.check_submission(std::string(65, 'x'));
    FAIL();
  } catch (const RequestError& err) {
    EXPECT_EQ(err.problem(), RequestProblem::too_large);
  }
  EXPECT_THROW(e.check_submission("  \n"), RequestError);
  EXPECT_THROW(e.inspect(1), RequestError);
  e.record_submission("code", incorrect());
  Observation i = e.inspect(1);
  EXPECT_EQ(i.feedback_turn, 1);
  EXPECT_FALSE(i.reward);
  EXPECT_EQ(i.feedback->outcome, Outcome::incorrect);
  Observation f = e.finalize();
  EXPECT_TRUE(f.done);
  EXPECT_EQ(f.reward, 0.0);  // no correct turn
  try {
    e.finalize();
    FAIL();
  } catch (const RequestError& err) {
    EXPECT_EQ(err.problem(), RequestProblem::episode_done);
  }
}

TEST(Episode, RejectsBadOptions) {
  EpisodeOptions o = stepped_options(0);
  EXPECT_THROW(Episode("x", relu_task(), o), RequestError);
  o = stepped_options(2);
  o.reward = parse_reward("roofline");  // no floor
  EXPECT_THROW(Episode("x", relu_task(), o), RequestError);
  o.roofline_floor_ms = 0.5;
  EXPECT_NO_THROW(Episode("x", relu_task(), o));
  o = stepped_options(2);
  o.return_kind = "mean";
  EXPECT_THROW(Episode("x", relu_task(), o), RequestError);
}

TEST(History, KeepsNewestInFullAndShrinksOlderTurnsToFitBudget) {
  std::vector<Turn> turns;
  for (int i = 1; i <= 6; ++i) {
    Turn t;
    t.index = i;
    t.code = "# kernel " + std::to_string(i) + "\n" + std::string(800, 'k');
    t.verdict = incorrect();
    t.feedback = make_feedback(t.verdict);
    t.feedback_text = render_feedback(t.feedback);
    turns.push_back(t);
  }
  std::string h = compress_history(turns, 600);
  EXPECT_LE(estimate_tokens(h), 600u);
  EXPECT_NE(h.find("# kernel 6"), std::string::npos);    // newest code kept
  EXPECT_NE(h.find("Feedback:"), std::string::npos);      // newest feedback kept
  EXPECT_EQ(h.find("# kernel 1"), std::string::npos);     // oldest code dropped
  EXPECT_NE(h.find("Turn 1: incorrect"), std::string::npos);  // but summarised
  std::string tiny = compress_history(turns, 40);
  EXPECT_LE(estimate_tokens(tiny), 40u);
  EXPECT_NE(tiny.find("earlier turns omitted"), std::string::npos);
  EXPECT_EQ(compress_history({}, 100), "");
}
