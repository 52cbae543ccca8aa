#include <gtest/gtest.h>

#include "kgym/error.hpp"
#include "kgym/generate.hpp"

namespace kgym {
namespace {

Verdict judged(Outcome o) {
  Verdict v;
  v.outcome = o;
  v.correct = o == Outcome::passed;
  v.cases_total = 5;
  v.cases_passed = v.correct ? 5 : 2;
  v.messages = {std::string(to_string(o)) + ": details"};
  if (v.correct) {
    v.speedup_eager = 1.5;
    v.runtime_ms = 1.0;
  }
  return v;
}

TEST(TurnMessages, FirstTurnIsTheServersTaskPrompt) {
  Task t{"L1/19_ReLU", "import torch\nclass Model(torch.nn.Module):\n    pass\n", "x", 1};
  EpisodeOptions eo;
  eo.max_turns = 3;
  Episode ep("e", t, eo);
  auto m = turn_messages(ep, ep.start(), 6000);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].role, "user");
  EXPECT_EQ(m[0].content, ep.start().prompt);
  EXPECT_NE(m[0].content.find("class Model"), std::string::npos);
}

TEST(TurnMessages, LaterTurnsCarryCompressedHistoryNewestCodeAndVerdict) {
  Task t{"L1/19_ReLU", "import torch\nclass Model(torch.nn.Module):\n    pass\n", "x", 1};
  EpisodeOptions eo;
  eo.max_turns = 4;
  Episode ep("e", t, eo);
  Observation o = ep.record_submission("class ModelNew: first_version\n", judged(Outcome::incorrect));
  auto m = turn_messages(ep, o, 6000);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].content, ep.start().prompt);  // no older turns yet
  EXPECT_EQ(m[1].role, "assistant");
  EXPECT_NE(m[1].content.find("first_version"), std::string::npos);
  EXPECT_EQ(m[2].content, o.prompt);           // the episode's own next user message
  EXPECT_NE(m[2].content.find("incorrect"), std::string::npos);
  o = ep.record_submission("class ModelNew: second_version\n", judged(Outcome::passed));
  m = turn_messages(ep, o, 6000);
  EXPECT_NE(m[0].content.find("first_version"), std::string::npos);  // older turn, compressed
  EXPECT_EQ(m[0].content.find("second_version"), std::string::npos);
  EXPECT_NE(m[1].content.find("second_version"), std::string::npos);
}

TEST(Endpoint, ParsesHttpOnly) {
  Endpoint e = parse_endpoint("http://127.0.0.1:8000/v1/");
  EXPECT_EQ(e.host, "127.0.0.1");
  EXPECT_EQ(e.port, "8000");
  EXPECT_EQ(e.base, "/v1");
  EXPECT_EQ(parse_endpoint("http://localhost").port, "80");
  EXPECT_THROW(parse_endpoint("https://api.example.com/v1"), Error);
  EXPECT_THROW(parse_endpoint("localhost:8000"), Error);
}

}  // namespace
}  // namespace kgym
