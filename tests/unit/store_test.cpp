#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kgym/error.hpp"
#include "kgym/run.hpp"
#include "kgym/store.hpp"

namespace kgym {
namespace {
namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("kgym-store-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

Verdict make(std::string task, std::string cand, Outcome o, std::optional<double> sp) {
  Verdict v;
  v.task_id = std::move(task);
  v.candidate_id = std::move(cand);
  v.outcome = o;
  v.correct = o == Outcome::passed;
  v.speedup_eager = sp;
  v.messages = {"m"};
  return v;
}

TEST(ResultStore, RoundTripsVerdictsAndManifest) {
  fs::path d = temp_dir("rt");
  {
    ResultStore st(d / "r.sqlite", "run-a");
    st.add(make("L1/1_x", "L1/1_x@s0t0", Outcome::passed, 1.5));
    st.add(make("L1/2_y", "L1/2_y@s1t2", Outcome::incorrect, std::nullopt));
    st.add(make("L1/1_x", "L1/1_x@s0t0", Outcome::passed, 2.5));  // replaces the first
    st.write_manifest({{"tasks", {"L1/1_x", "L1/2_y"}}, {"eval", {{"seconds", 3.5}}}});
  }
  ResultStore st(d / "r.sqlite", "run-a");
  auto vs = st.verdicts();
  ASSERT_EQ(vs.size(), 2u);
  EXPECT_EQ(vs[0].task_id, "L1/2_y");  // the replaced row is newer
  EXPECT_EQ(vs[1].outcome, Outcome::passed);
  EXPECT_DOUBLE_EQ(*vs[1].speedup_eager, 2.5);
  EXPECT_EQ(st.manifest()["eval"]["seconds"], 3.5);
  EXPECT_EQ(st.runs(), std::vector<std::string>{"run-a"});
  ResultStore other(d / "r.sqlite", "run-b");
  EXPECT_TRUE(other.verdicts().empty());  // runs are kept apart in a shared database
  // load_verdicts on a single-run store
  EXPECT_EQ(run::load_verdicts(d / "r.sqlite").size(), 2u);
  fs::remove_all(d);
}

TEST(ResultStore, NotADatabaseIsAnInputError) {
  fs::path d = temp_dir("bad");
  std::ofstream(d / "x.sqlite") << "this is not sqlite, just text that is long enough to be a header.....";
  EXPECT_THROW(ResultStore(d / "x.sqlite", "r"), Error);
  fs::remove_all(d);
}

TEST(RunDir, CandidateIdsAndManifestMerge) {
  EXPECT_EQ(run::make_candidate_id("L1/19_ReLU", 3, 1), "L1/19_ReLU@s3t1");
  auto at = run::parse_candidate_id("L1/19_ReLU@s3t1");
  EXPECT_TRUE(at.explicit_id);
  EXPECT_EQ(at.sample, 3);
  EXPECT_EQ(at.turn, 1);
  EXPECT_FALSE(run::parse_candidate_id("h100_level1.jsonl:9").explicit_id);

  fs::path d = temp_dir("manifest");
  EXPECT_FALSE(run::is_run_dir(d));
  run::update_manifest(d, {{"generate", {{"samples", 2}}}, {"kgym", "0"}});
  run::update_manifest(d, {{"eval", {{"seconds", 1}}}, {"kgym", "1"}});
  auto m = run::read_manifest(d);
  EXPECT_EQ(m["generate"]["samples"], 2);
  EXPECT_EQ(m["eval"]["seconds"], 1);
  EXPECT_EQ(m["kgym"], "1");
  EXPECT_TRUE(run::is_run_dir(d));
  fs::remove_all(d);
}

TEST(RunDir, LoadVerdictsSkipsTornLineAndKeepsLatest) {
  fs::path d = temp_dir("load");
  {
    std::ofstream out(d / "verdicts.jsonl");
    out << nlohmann::json(make("t", "c1", Outcome::incorrect, std::nullopt)).dump() << "\n";
    out << nlohmann::json(make("t", "c2", Outcome::passed, 2.0)).dump() << "\n";
    out << nlohmann::json(make("t", "c1", Outcome::passed, 3.0)).dump() << "\n";
    out << "{\"task_id\": \"t\", \"cand";  // torn
  }
  auto vs = run::load_verdicts(d);
  ASSERT_EQ(vs.size(), 2u);
  EXPECT_EQ(vs[0].candidate_id, "c1");
  EXPECT_EQ(vs[0].outcome, Outcome::passed);
  EXPECT_THROW(run::load_verdicts(d / "missing"), Error);
  fs::remove_all(d);
}

}  // namespace
}  // namespace kgym
