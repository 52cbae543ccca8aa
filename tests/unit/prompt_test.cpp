#include <gtest/gtest.h>

#include "kgym/error.hpp"
#include "kgym/generate.hpp"
#include "kgym/prompt.hpp"

namespace kgym::prompt {
namespace {

TEST(Prompt, InitialMessagesCarryTheReference) {
  Task t{"L1/19_ReLU", "class Model:\n    pass\n", "x", 1};
  auto m = initial_messages(t, {"cuda", 3});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].role, "system");
  EXPECT_EQ(m[1].role, "user");
  EXPECT_NE(m[1].content.find("```python\nclass Model:"), std::string::npos);
  EXPECT_NE(m[1].content.find("load_inline"), std::string::npos);
  EXPECT_NE(m[1].content.find("3 attempts"), std::string::npos);
  EXPECT_THROW(initial_messages(t, {"fortran", 1}), Error);
}

TEST(Prompt, ExtractCodePrefersTheLastModelNewBlock) {
  EXPECT_EQ(extract_code("text\n```python\nclass ModelNew: a\n```\nmore\n```bash\nls\n```\n"), "class ModelNew: a\n");
  EXPECT_EQ(extract_code("```py\nx = 1\n```\n```\ny = 2\n```"), "y = 2\n");
  EXPECT_EQ(extract_code("class ModelNew(nn.Module): pass"), "class ModelNew(nn.Module): pass");
  EXPECT_EQ(extract_code("I cannot do that."), "");
}

TEST(Prompt, FeedbackNamesOutcomeAndSpeedup) {
  Verdict v;
  v.outcome = Outcome::passed;
  v.cases_passed = v.cases_total = 5;
  v.speedup_eager = 1.5;
  v.runtime_ms = 2.0;
  v.messages = {"passed: 5/5 cases"};
  std::string f = render_feedback(v);
  EXPECT_NE(f.find("passed (5/5"), std::string::npos);
  EXPECT_NE(f.find("1.500x"), std::string::npos);
  v.outcome = Outcome::policy_rejected;
  v.speedup_eager.reset();
  v.policy_findings = {{{"rule_id", "try_except"}, {"severity", "reject"}}};
  f = render_feedback(v, 4000);
  EXPECT_NE(f.find("try_except"), std::string::npos);
  EXPECT_NE(f.find("Fix the problem"), std::string::npos);
  v.messages = {std::string(5000, 'x')};
  EXPECT_LE(render_feedback(v, 300).size(), 300u);
}

TEST(Prompt, CompressKeepsNewestTurnsAndSummarisesOlder) {
  std::vector<Message> h = {{"system", "S"}, {"user", "U"}};
  for (int t = 1; t <= 4; ++t) {
    h.push_back({"assistant", "reasoning " + std::to_string(t) + "\n```python\nclass ModelNew: v" + std::to_string(t) + "\n```"});
    h.push_back({"user", "Result of your last kernel: incorrect " + std::to_string(t) + "\nmore"});
  }
  auto c = compress(h, 2);
  // S, U, summary, ack, a3, f3, a4, f4
  ASSERT_EQ(c.size(), 8u);
  EXPECT_NE(c[2].content.find("attempt 2: Result of your last kernel: incorrect 2"), std::string::npos);
  EXPECT_EQ(c[2].content.find("more"), std::string::npos);
  EXPECT_EQ(c[4].content, "```python\nclass ModelNew: v3\n```");  // reasoning dropped
  EXPECT_EQ(c[7].content, h.back().content);
  EXPECT_EQ(compress({{"system", "S"}, {"user", "U"}}, 2).size(), 2u);
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
}  // namespace kgym::prompt
