// The worker protocol's messages (src/runner/protocol.hpp): the C++ structs and the Python
// dataclasses (python/kgym_worker/protocol.py) agree field for field; requests are written as
// the engine's literals were; replies are read by each field's presence.
#include <cstdio>
#include <memory>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "../../src/runner/protocol.hpp"

namespace proto = kgym::runner::protocol;
using nlohmann::json;

namespace {

/// protocol.py's schema(), from python3 with the source tree's python/ on its path (protocol.py
/// imports only the standard library).
json python_schema() {
  const std::string cmd = std::string("PYTHONPATH='") + KGYM_SOURCE_DIR +
                          "/python' python3 -c 'import json, kgym_worker.protocol as p; print(json.dumps(p.schema()))'";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(cmd.c_str(), "r"), ::pclose);
  if (!pipe) return nullptr;
  std::string out;
  char buf[4096];
  while (const std::size_t n = std::fread(buf, 1, sizeof buf, pipe.get())) out.append(buf, n);
  return json::parse(out, nullptr, false);
}

}  // namespace

// Every message on both sides, with the same fields (name, type, required) and op: a field that
// one side gains and the other lacks fails here, named.
TEST(Protocol, CxxStructsAndPythonDataclassesAgreeFieldForField) {
  const json cxx = proto::schema();
  const json py = python_schema();
  ASSERT_TRUE(py.is_object()) << "python3 could not give protocol.py's schema()";
  std::set<std::string> names;
  for (const auto& [name, _] : cxx.items()) names.insert(name);
  for (const auto& [name, _] : py.items()) names.insert(name);
  for (const auto& name : names) {
    if (!cxx.contains(name)) {
      ADD_FAILURE() << name << ": a dataclass in protocol.py, no struct in protocol.hpp";
      continue;
    }
    if (!py.contains(name)) {
      ADD_FAILURE() << name << ": a struct in protocol.hpp, no dataclass in protocol.py";
      continue;
    }
    EXPECT_EQ(cxx[name].value("op", ""), py[name].value("op", "")) << name << "'s op";
    const json& cf = cxx[name]["fields"];
    const json& pf = py[name]["fields"];
    for (const auto& [field, spec] : cf.items()) {
      if (!pf.contains(field)) {
        ADD_FAILURE() << name << "." << field << ": in protocol.hpp, not in protocol.py";
        continue;
      }
      EXPECT_EQ(spec, pf[field]) << name << "." << field << " (C++ vs Python)";
    }
    for (const auto& [field, _] : pf.items())
      if (!cf.contains(field)) ADD_FAILURE() << name << "." << field << ": in protocol.py, not in protocol.hpp";
  }
  EXPECT_GE(cxx.size(), 50u);
}

// Requests are written as the engine's literals wrote them (the same JSON on the wire).
TEST(Protocol, RequestsWriteTheWireOfTheLiterals) {
  EXPECT_EQ(json(proto::DropTaskRequest{.key = "k"}), json({{"op", "drop_task"}, {"key", "k"}}));
  EXPECT_EQ(json(proto::ReleaseRequest{}), json({{"op", "release"}}));
  // An optional field only when set; a nullable one as null.
  proto::MakeCaseRequest mk{.key = "k", .index = 2, .transform = "nominal"};
  EXPECT_EQ(json(mk), json({{"op", "make_case"}, {"key", "k"}, {"index", 2}, {"transform", "nominal"}}));
  mk.shape = "other";
  EXPECT_EQ(json(mk).at("shape"), "other");
  const proto::TimingSettings opts{.warmup = 3, .min_calls = 5, .max_calls = 50, .budget_ms = 1000,
                                   .target_spread = 0.05, .l2_flush = true};
  const json timed = proto::CandidateTimeRequest{.options = opts, .seeds = {1, 2}, .keep = {0}, .audit_dispatcher = false};
  EXPECT_EQ(timed, json({{"op", "time"},
                         {"options", {{"warmup", 3}, {"min_calls", 5}, {"max_calls", 50}, {"budget_ms", 1000.0},
                                      {"target_spread", 0.05}, {"l2_flush", true}}},
                         {"seeds", {1, 2}},
                         {"keep", {0}},
                         {"spot", nullptr},
                         {"audit_dispatcher", false}}));
  // The wall check's untimed request with the shared file, byte for byte.
  const json untimed = proto::WallRequest{.n = 1, .seed = 7, .call = false, .sync_each = true, .reserve_bytes = 4096.0,
                                          .reserve_n = 20, .map = proto::SharedInputsMap{.path = "/w", .bytes = 2147614720LL}};
  const json literal = {{"op", "wall"},         {"n", 1},          {"call", false},    {"seed", 7},
                        {"sync_each", true},    {"reserve_bytes", 4096.0}, {"reserve_n", 20},
                        {"map", {{"path", "/w"}, {"bytes", 2147614720LL}}}};
  EXPECT_EQ(untimed.dump(), literal.dump());
  // A request reads back as it was written.
  const auto back = proto::read<proto::WallRequest>(untimed);
  EXPECT_EQ(back.map->bytes, 2147614720LL);
  EXPECT_FALSE(back.commit.has_value());
  EXPECT_EQ(json(back), untimed);
}

// A candidate's lenient fields fall back on a missing or ill-typed value; a required field
// missing is the json exception the engine turns into an outcome (as `.at` threw).
TEST(Protocol, RepliesAreReadByPresence) {
  const auto cand = proto::read<proto::CandidateTimeReply>(
      {{"timing", {{"method", "events"}, {"times_ms", {1.0}}}},
       {"kept", {{{"index", "x"}}, 5, {{"index", 2}, {"output", {{"kind", "tensor"}}}}}},
       {"spot", nullptr}});
  ASSERT_EQ(cand.kept.size(), 2u);  // the non-object dropped
  EXPECT_EQ(cand.kept[0].index, -1);
  EXPECT_EQ(cand.kept[1].index, 2);
  EXPECT_TRUE(cand.spot.has_value());
  EXPECT_THROW(proto::read<proto::CandidateTimeReply>(json::object()), json::out_of_range);
  EXPECT_THROW(proto::read<proto::TraceReply>(json::array()), json::type_error);
  // Only strings are taken from "tampered"; another type is no finding.
  EXPECT_EQ(proto::read<proto::WallReply>({{"tampered", {"a", 5, "b"}}}).tampered, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(proto::read<proto::WallReply>({{"tampered", "a"}}).tampered.empty());
  const auto status = proto::read<proto::CandidateStatus>({{"harness_error", 5}});
  EXPECT_EQ(status.harness_error_text(), "5");
  EXPECT_FALSE(proto::read<proto::CandidateStatus>(json::array()).harness_error);
  EXPECT_EQ(proto::number_or(proto::read<proto::WallReply>({{"harness_ms", "x"}}).harness_ms, -1.0), -1.0);
  EXPECT_EQ(proto::number_or(proto::read<proto::WallReply>({{"harness_ms", 2.5}}).harness_ms, -1.0), 2.5);
  // The reference's defaulted fields: absent, the default; of another type, a json exception.
  const auto cmp = proto::read<proto::Comparison>({{"numel", 4}});
  EXPECT_EQ(cmp.numel, 4);
  EXPECT_EQ(cmp.mismatches_outside_fp64, -1);
  EXPECT_FALSE(cmp.output_plain_tensor.has_value());
  EXPECT_THROW(proto::read<proto::Comparison>({{"numel", "x"}}), json::type_error);
  // A flattened record is read by its own serializer when asked.
  const auto load = proto::read<proto::LoadReply>({{"ok", true}, {"failure", {{"stage", "task"}, {"message", "m"}}}});
  EXPECT_EQ(load.task_failure(), std::optional<std::string>("m"));
  EXPECT_TRUE(load.record.get().failure.has_value());
  EXPECT_THROW((void)proto::read<proto::LoadReply>({{"failure", "x"}}).task_failure(), json::type_error);
}

// A candidate's reply read as the engine's reads before the typed protocol read it (red team,
// session 25): no forged or ill-typed field turns into a default that passes or hides evidence.
TEST(Protocol, CandidateRepliesKeepTheOldReadsFailingOutcomes) {
  // "fingerprints" is no lenient list: a wrong-typed element stays, so the count the commitment
  // check compares with N is the count sent (a dropped element would make a short list long
  // enough, or a long one pass).
  const auto wall = proto::read<proto::WallReply>({{"fingerprints", {"a", 5, nullptr}}, {"host_ms", "x"}});
  EXPECT_EQ(wall.fingerprints.size(), 3u);
  EXPECT_EQ(wall.host_ms, 0.0);
  // A reply that is no object: the wall replies' "fingerprints"/"outputs" are json::value's rule
  // (a json exception, the candidate's breach), as the old `.value` threw; the untimed request's
  // reply throws too now (before, only its "tampered" was looked up): stricter, never a pass.
  EXPECT_THROW(proto::read<proto::WallReply>(json::array()), json::type_error);
  EXPECT_THROW(proto::read<proto::WallOutputReply>(json(5)), json::type_error);
  // "kept" with only non-objects: nothing kept (the wanted outputs are then unreturned, each a
  // failed recheck); an index of another type is -1 (erases nothing from the wanted set).
  EXPECT_TRUE(proto::read<proto::CandidateTimeReply>({{"timing", json::object()}, {"kept", {1, "x", nullptr}}}).kept.empty());
  EXPECT_TRUE(proto::read<proto::CandidateTimeReply>({{"timing", json::object()}, {"kept", json::array({json{{"index", 0}}})}}).kept.size() == 1);
  EXPECT_EQ(proto::read<proto::CandidateTimeReply>({{"timing", json::object()}, {"kept", json::array({json{{"index", nullptr}}})}})
                .kept.at(0)
                .index,
            -1);
  // run_case: "output" and "harness_error" count as there whatever their value (null included:
  // `contains` before), so a null output is compared (and fails there) and a null harness error
  // ends the candidate; "need_inputs" only as true.
  const auto ran = proto::read<proto::RunCaseReply>({{"output", nullptr}, {"harness_error", nullptr}, {"need_inputs", 1}});
  EXPECT_TRUE(ran.output.has_value());
  EXPECT_TRUE(ran.harness_error.has_value());
  EXPECT_FALSE(ran.need_inputs);
  EXPECT_TRUE(proto::read<proto::CandidateStatus>({{"harness_error", nullptr}}).harness_error.has_value());
  // The case record's fields are the record serializer's, as before (a json exception on a
  // wrong type, the engine's "sent a malformed reply"; a record's list of another element type
  // too: "tampered" there is no lenient list).
  EXPECT_THROW((void)proto::read<proto::RunCaseReply>({{"threads_leaked", "yes"}}).record.get(), json::exception);
  EXPECT_THROW((void)proto::read<proto::RunCaseReply>({{"tampered", json::array({"a", 5})}}).record.get(), json::exception);
  EXPECT_TRUE(proto::read<proto::RunCaseReply>({{"threads_leaked", true}}).record.get().threads_leaked);
  // "tampered" on every candidate reply: the strings, in order; a list of no strings is no finding
  // (as note_tampered took only strings).
  EXPECT_EQ(proto::read<proto::WarmProfilerReply>({{"tampered", {"x", {{"a", 1}}, "y"}}}).tampered,
            (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(proto::read<proto::WallOutputReply>({{"tampered", json::array({"z"})}, {"outputs", json::array()}}).tampered,
            (std::vector<std::string>{"z"}));
}
