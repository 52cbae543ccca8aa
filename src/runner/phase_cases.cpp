// The cases phase (evaluation.hpp): the reference loads the task; the candidate runs the secret
// correctness cases, the trivial-answer audit's and the other shape's.
#include <algorithm>

#include "evaluation.hpp"
#include "kgym/error.hpp"

namespace kgym::runner {
namespace {

/// One evaluation's correctness cases against the reference's task `key`.
struct Cases {
  Evaluation& ev;
  const std::string& key;
  int stability_case;

  bool run_one(int i, const std::string& transform, bool other_shape, bool audit);
  template <protocol::Message R>
  bool run_case(Message& out, int i, const R& req, const std::vector<Blob>& blobs);
  bool audit_trivial();
};

// One correctness case: returns false when the evaluation cannot go on (crash, timeout,
// reference failure, a case reply without an output); a skipped other-shape case returns true
// without a record.
bool Cases::run_one(int i, const std::string& transform, bool other_shape, bool audit) {
  EngineState& engine = ev.engine;
  Measurements& m = ev.m;
  const EvalOptions& eo = ev.eo;
  Worker& c = *ev.cw;
  CaseRecord cr;
  cr.index = i;
  cr.transform = transform;
  protocol::MakeCaseRequest mk{.key = key, .index = i, .transform = transform};
  if (other_shape) mk.shape = "other";
  // Where a case's time goes (diagnostic; "cases/..." and "other_shape/..." are parts of those
  // phases, which hold the totals): the reference making the inputs, the candidate's run (its
  // first call, with any JIT build, apart), the reference's comparison.
  PhaseClock part(m, other_shape ? "other_shape/" : "cases/");
  const auto made_reply = engine.ask_reference(mk, {}, eo.timeouts.reference_s, m);
  part.lap("make");
  if (!made_reply) return false;
  const auto made = protocol::read<protocol::MakeCaseReply>(made_reply->header);
  if (made.skipped) {
    m.audit.other_shape = "skipped: " + *made.skipped;
    return true;
  }
  if (other_shape) {
    m.audit.other_shape = "ran: " + made.sizes.dump();
    cr.shape_variant = "other";
  }
  cr.seed = made.seed;
  // The candidate worker regenerates the inputs from the case seed and checks them against
  // the reference's fingerprint; when they differ (get_inputs not reproducible from torch's
  // seed) it answers need_inputs and gets the reference's inputs as bytes instead.
  Message out;
  bool regenerated = true;
  const bool wait = !other_shape && i == stability_case;
  if (!run_case(out, i,
                protocol::RunCaseRequest{
                    .index = i, .regenerate = made.regenerate, .tolerances = ev.tolerances, .stability_wait = wait},
                {}))
    return false;
  part.lap(i == 0 ? "run_first" : "run");
  auto ran = protocol::read<protocol::RunCaseReply>(out.header);  // lenient but for the record's fields
  if (ran.need_inputs) {
    auto sent = engine.ask_reference(protocol::CaseInputsRequest{.key = key, .index = i}, {}, eo.timeouts.reference_s, m);
    if (!sent) return false;
    regenerated = false;
    if (!run_case(out, i,
                  protocol::RunCaseRequest{.index = i,
                                           .inputs = protocol::read<protocol::CaseInputsReply>(sent->header).inputs,
                                           .tolerances = ev.tolerances,
                                           .stability_wait = wait},
                  sent->blobs))
      return false;
    part.lap("inputs_fallback");
    ran = protocol::read<protocol::RunCaseReply>(out.header);
  }
  if (ran.harness_error) {
    ev.died(c, "kgym's candidate harness failed: " + protocol::CandidateStatus{ran.harness_error}.harness_error_text());
    return false;
  }
  try {
    ran.record.get_to(cr);  // candidate-side fields (contract observations, failure)
  } catch (const nlohmann::json::exception& e) {
    ev.died(c, std::string("sent a malformed reply: ") + e.what());
    return false;
  }
  cr.index = i;
  cr.transform = transform;
  cr.shape_variant = other_shape ? "other" : "";
  cr.trivial_passing.clear();
  cr.fp64_checked = false;  // reference-side fields are never taken from the candidate
  cr.reference_finite = true;  // only the reference worker may say otherwise
  cr.compared = false;         // ... and only apply_comparison sets this
  cr.inputs_regenerated = regenerated;  // what the supervisor sent, not what the candidate says
  if (!cr.failure && cr.output_plain_tensor && !ran.output) {
    // Nothing to compare (a forged or truncated reply): never a pass by default. The channel no
    // longer pairs replies with requests (a forged frame is followed by the harness's own reply),
    // so the cases end here and the worker is stopped: a later request would read a reply of an
    // earlier case and judge that (an earlier case's output against the other sizes' reference
    // read as a shape mismatch, contract_violation, with 5 cases).
    cr.failure = Failure{"case", "ProtocolError", "the candidate returned no output to compare", "", 0, 0};
    m.cases.push_back(std::move(cr));
    c.kill();
    return false;
  }
  if (!cr.failure && cr.output_plain_tensor && ran.output) {
    auto cmp = engine.ask_reference(protocol::CompareRequest{.key = key,
                                                             .index = i,
                                                             .output = *ran.output,
                                                             .tolerances = ev.tolerances,
                                                             .audit = audit,
                                                             .done = true},
                                    out.blobs, eo.timeouts.reference_s, m);
    part.lap("compare");
    if (!cmp) return false;
    apply_comparison(protocol::read<protocol::Comparison>(cmp->header), cr);
    // GPU: the output went to the reference device to device (devicecopy.py) and is copied
    // now; the candidate's process drops it and returns cached memory before the reference
    // makes the next case (at full size, 6.4 GB per output).
    if (engine.worker_device != "cpu" && !run_case(out, i, protocol::ReleaseRequest{}, {})) return false;
  }
  m.cases.push_back(std::move(cr));
  return true;
}

/// One request of case `i` to the candidate's worker, its reply into `out`; false (with the
/// crash or timeout recorded) when it failed.
template <protocol::Message R>
bool Cases::run_case(Message& out, int i, const R& req, const std::vector<Blob>& blobs) {
  Measurements& m = ev.m;
  Worker& c = *ev.cw;
  try {
    out = c.request(req, blobs, ev.eo.timeouts.case_s);
    return true;
  } catch (const ChannelClosed&) {
    m.crash = process_failure(c.kill(), "during case " + std::to_string(i));
  } catch (const ChannelTimeout&) {
    m.timed_out_stage = "case";
  } catch (const Error& e) {
    ev.died(c, std::string("broke the protocol: ") + e.what());
  }
  return false;
}

// Trivial-answer audit (D12): answers that pass every regular case mean the cases are weak;
// strengthen them with other value distributions and record it. False when the evaluation
// cannot go on.
bool Cases::audit_trivial() {
  Measurements& m = ev.m;
  bool going = true;
  std::vector<std::string> passing = m.cases.front().trivial_passing;
  for (const auto& cr : m.cases) {
    std::vector<std::string> keep;
    for (const auto& t : passing)
      if (std::find(cr.trivial_passing.begin(), cr.trivial_passing.end(), t) != cr.trivial_passing.end())
        keep.push_back(t);
    passing = keep;
  }
  m.audit.trivial_passing = passing;
  if (!passing.empty()) {
    const std::size_t first_extra = m.cases.size();
    for (const char* tr : {"scale100", "cube"}) {
      m.audit.strengthened_with.push_back(tr);
      if (!(going = run_one(static_cast<int>(m.cases.size()), tr, false, true))) break;
    }
    std::vector<std::string> still = passing;
    for (std::size_t k = first_extra; k < m.cases.size(); ++k) {
      std::vector<std::string> keep;
      for (const auto& t : still)
        if (std::find(m.cases[k].trivial_passing.begin(), m.cases[k].trivial_passing.end(), t) !=
            m.cases[k].trivial_passing.end())
          keep.push_back(t);
      still = keep;
    }
    if (m.cases.size() > first_extra) m.audit.still_passing = still;
  }
  return going;
}

}  // namespace

bool load_reference_task(Evaluation& ev, const std::string& key, PhaseClock& phase) {
  Measurements& m = ev.m;
  const EvalOptions& eo = ev.eo;
  auto loaded = ev.engine.ask_reference(protocol::LoadTaskRequest{.key = key,
                                                                   .source = ev.task.source,
                                                                   .task_id = ev.task.id,
                                                                   .scale = eo.scale,
                                                                   .init_seed = m.init_seed},
                                        {}, eo.timeouts.reference_s, m);
  phase.lap("load_task");
  if (loaded) {
    const auto r = protocol::read<protocol::LoadTaskReply>(loaded->header);
    ev.scaled = r.scaled;
    ev.reference_parameters = r.parameters;
    if (r.roofline) m.roofline = r.roofline;
    return true;
  }
  return false;
}

bool run_cases(Evaluation& ev, const std::string& key, PhaseClock& phase) {
  const EvalOptions& eo = ev.eo;
  Measurements& m = ev.m;
  // The 20 ms output-stability wait (D8) runs in one secret case of the regular ones: the output
  // compared is always the snapshot taken as the call returned, so a late write is never
  // rewarded, and every case still compares that snapshot with the output after a device-wide
  // sync; the wait only widens that window where the candidate cannot know it (H200: the
  // waits were 100 of about 600 ms of a verdict's device time).
  Cases cases{ev, key, static_cast<int>(random_seed() % static_cast<std::uint64_t>(std::max(1, eo.n_cases)))};
  bool going = true;
  for (int i = 0; i < eo.n_cases && going; ++i)
    going = cases.run_one(i, eo.transforms.empty() ? "nominal" : eo.transforms[i % eo.transforms.size()],
                          false, true);
  if (going && !m.cases.empty()) going = cases.audit_trivial();
  phase.lap("cases");
  // Other sizes (D12, H23): one case with the task's size constants changed, where it allows.
  if (going && eo.other_shape) {
    going = cases.run_one(static_cast<int>(m.cases.size()), "nominal", true, false);
    phase.lap("other_shape");
  }
  return going;
}

}  // namespace kgym::runner
