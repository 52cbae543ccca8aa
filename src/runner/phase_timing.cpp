// The timing phase (evaluation.hpp, time_phase): the timing rounds with the rechecks and the spot
// check, then the wall check (phase_wall_check.cpp) and the trace (phase_trace.cpp).
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "evaluation.hpp"
#include "kgym/verdict.hpp"
#include "wall_check.hpp"

namespace kgym::runner {
namespace {

/// How a timing round ended: the next round follows; the rounds stop and what they measured is
/// recorded (a crash, a timeout, a failed call); or the evaluation ended (the reference failed),
/// with nothing recorded.
enum class RoundEnd { next, stop, ended };

/// One timing round: its seeds, its secret recheck positions and spot check, and what the
/// candidate's part of it returned.
struct Round {
  using clock = TimingRun::clock;
  TimingRun& t;
  const TimingOptions& per;  ///< one round's share of the timing options
  int rounds, round;
  bool baselines_first = false;
  TimingOptions this_round;
  std::vector<std::uint64_t> seeds;
  std::vector<int> keep;
  std::optional<protocol::SpotRequest> spot;  ///< the round's spot check: its seed and samples per output
  // (declared before the candidate's part: the baselines' part reads them)
  protocol::Json cand_spot = nullptr;  ///< the candidate's samples (its reply's "spot"), passed on
  std::vector<protocol::KeptOutput> kept;  ///< the outputs its reply kept for the recheck

  std::size_t offset = 0;
  int round_calls = 0;
  std::vector<int> rechecked;

  Round(TimingRun& run, const TimingOptions& per_round, int n_rounds, int index);
  RoundEnd run();
  void read_spot(const std::optional<protocol::SpotResult>& sp);
  /// The spot check's request with the candidate's samples of this round.
  protocol::SpotRequest spot_with_candidate() const;
  bool time_baselines(int calls, bool with_spot);
  bool time_eager_in_twin(int calls);
  bool reference_spot_check();
  std::optional<Message> time_candidate();
  bool recheck_kept(const Message& reply);
  void note_rechecked();
};

Round::Round(TimingRun& run, const TimingOptions& per_round, int n_rounds, int index)
    : t(run), per(per_round), rounds(n_rounds), round(index) {
  const TimingOptions& to = t.eo.timing;
  std::optional<TimingRecord>& cand = t.cand;
  // Fresh inputs for every call (one seed each) and a secret recheck subset (recheck_positions,
  // wall_check.hpp; the worker adds the round's last call): the candidate code cannot know
  // which outputs are checked (D2, D3).
  // Which side goes first alternates by round (candidate first in even rounds, the baselines
  // in odd ones; docs/timing.md "Order"): with the candidate always first, whatever drifts
  // within a round (the machine's clock and load, the GPU's power state, caches the first
  // side warms) fell on one side; paired rounds of opposite order cancel a linear drift.
  // A baselines-first round times every side for the previous round's number of candidate
  // calls (the same windows for every side), the candidate included.
  baselines_first = round % 2 == 1 && cand && !cand->round_calls.empty() && cand->round_calls.back() > 0;
  this_round = per;
  if (baselines_first) this_round.min_calls = this_round.max_calls = std::min(per.max_calls, cand->round_calls.back());
  seeds.resize(static_cast<std::size_t>(this_round.warmup + this_round.max_calls));
  for (auto& x : seeds) x = t.fresh_seed();
  keep = recheck_positions(this_round.min_calls, this_round.max_calls, to.rechecks_per_round, t.rng);
  // The spot check's positions come from a seed of this round, as secret as `keep`.
  if (to.spot_samples > 0) spot = protocol::SpotRequest{.seed = t.fresh_seed(), .k = to.spot_samples};
  offset = cand ? cand->times_ms.size() : 0;
}

RoundEnd Round::run() {
  if (baselines_first && !time_baselines(this_round.max_calls, false)) return RoundEnd::ended;
  const std::optional<Message> reply = time_candidate();
  if (!reply) return RoundEnd::stop;
  if (!recheck_kept(*reply)) return RoundEnd::ended;
  note_rechecked();
  // On a GPU the kept outputs went to the reference device to device (devicecopy.py): the
  // candidate's process holds them until told that they were copied; they must not sit beside
  // the baselines' timing (at full size, 6.4 GB each).
  if (t.engine.worker_device != "cpu" &&
      !t.candidate_request(protocol::ReleaseRequest{}, "while releasing its rechecked outputs"))
    return RoundEnd::stop;
  if (!baselines_first) {
    if (!time_baselines(round_calls, true)) return RoundEnd::ended;
  } else if (spot && round_calls > 0 && !reference_spot_check()) {
    return RoundEnd::ended;
  }
  return RoundEnd::next;
}

// The spot check by the reference's spot_check request: eager's outputs on the round's seeds
// (those its time request of a baselines-first round sampled, the others computed now, untimed)
// against the candidate's samples. A baselines-first round's, and every round's where eager was
// timed in the twin. False when the evaluation ended.
bool Round::reference_spot_check() {
  std::optional<Message> r;
  {
    QuietDevice quiet(t.engine.quiet_mutex, [this] { return t.all_but_reference(); });
    r = t.engine.ask_reference(protocol::SpotCheckRequest{.key = t.key,
                                                          .seeds = seeds,
                                                          .warmup = this_round.warmup,
                                                          .spot = spot_with_candidate(),
                                                          .tolerances = t.tolerances},
                               {}, t.eo.timeouts.reference_s, t.m);
  }
  if (!r) return false;
  read_spot(protocol::read<protocol::SpotCheckReply>(r->header).timing.spot);
  return true;
}

// Eager's timed calls of this round in the baseline twin (start_baseline_twin): the candidate's
// very request (its seeds, recheck positions and spot samples; the twin's copies and samples
// are dropped), while the candidate's processes are stopped; the candidate's samples are checked
// by the reference (reference_spot_check). False when the twin failed (a crash, a timeout, an
// unreadable reply, no timed call: never the candidate's doing): it is dropped (t.twin null) and
// eager is timed in the reference from then on.
bool Round::time_eager_in_twin(int calls) {
  const auto t0 = clock::now();
  TimingOptions same = per;
  if (calls > 0) same.min_calls = same.max_calls = calls;
  TimingRecord b;
  try {
    Message r = [&] {
      QuietDevice quiet(t.engine.quiet_mutex, [this] { return t.all_but_twin(); });
      return t.twin->request(protocol::CandidateTimeRequest{.options = timing_settings(same),
                                                            .seeds = seeds,
                                                            .keep = keep,
                                                            .spot = spot,
                                                            .audit_dispatcher = false},
                             {}, t.eo.timeouts.timing_s);
    }();
    b = protocol::read<protocol::CandidateTimeReply>(r.header).timing;
    b.rechecks.clear();  // (the twin's kept outputs are not rechecked: trusted code)
    b.spot_checked_calls = 0;
    if (b.failure || b.times_ms.empty()) throw std::runtime_error(b.failure ? b.failure->message : "no timed calls");
  } catch (const std::exception& e) {
    t.drop_twin(std::string("while timing eager: ") + e.what());  // (never the candidate's doing)
    return false;
  }
  b.timed_in = "twin";
  b.wall_ms = TimingRun::ms_since(t0);
  t.m.phase_ms["eager_timing"] += b.wall_ms;
  merge_round(t.eager, std::move(b));
  return true;
}

protocol::SpotRequest Round::spot_with_candidate() const {
  protocol::SpotRequest s = *spot;
  s.candidate = cand_spot;
  s.calls = round_calls;
  s.trusted = rechecked;
  return s;
}

// The spot check's result (the reference's reply's "timing"), onto the candidate's record.
void Round::read_spot(const std::optional<protocol::SpotResult>& sp) {
  std::optional<TimingRecord>& cand = t.cand;
  if (!sp) return;
  if (sp->error) {
    cand->spot_unreadable = true;
    if (cand->spot_detail.empty()) cand->spot_detail = sp->error->is_string() ? sp->error->get<std::string>() : "unreadable";
  }
  cand->spot_checked_calls += sp->checked;
  for (const auto& f : sp->failed) {
    const int index = static_cast<int>(offset) + f.index;
    cand->spot_failed_calls.push_back(index);
    if (cand->spot_detail.empty()) cand->spot_detail = fmt::format("timed call {}: {}", index, f.detail);
  }
}

// The baselines' timed calls of this round (eager, then torch.compile), `calls` each on the
// round's seeds; with `with_spot`, eager's reply also carries the spot check of the
// candidate's calls (it needs the candidate's samples, so only after the candidate ran).
bool Round::time_baselines(int calls, bool with_spot) {
  const TimingOptions& to = t.eo.timing;
  for (const char* kind : {"eager", "compile"}) {
    if (std::string(kind) == "compile" && !t.eo.compile_baseline) continue;
    if (std::string(kind) == "eager" && t.twin) {
      if (time_eager_in_twin(calls)) {
        if (with_spot && spot && round_calls > 0 && !reference_spot_check()) return false;
        continue;
      }  // (else the twin is gone: eager in the reference, below)
    }
    const auto t0 = clock::now();
    std::optional<Message> r;
    {
      QuietDevice quiet(t.engine.quiet_mutex, [this] { return t.all_but_reference(); });
      t.note_gpu_holders();
      // The baseline's own wall-clock loop (reference.time, GPU) in the last round only: it
      // decides whether the supervisor measures the baseline's floor (baseline_floor_can_bind)
      // and is that floor otherwise; run every round, it was half of a GPU-bound eager's
      // timing phase (H200, session 15).
      // The same number of timed calls as the candidate's round, on its seeds (issue 33: the
      // same windows for every side). With an adaptive stop of its own, eager stopped after 5
      // quiet calls where the candidate, whose rechecked calls copy their inputs first, ran 50,
      // so the two medians came from other stretches of a drifting machine.
      TimingOptions same = per;
      if (calls > 0) same.min_calls = same.max_calls = calls;
      // Every side does the candidate's per-call harness work: the calls at the round's recheck
      // positions copy their inputs before and their outputs after (`keep`; CPU only: on a GPU
      // the L2 flush before each call leaves no cache state for a copy to change, and the held
      // copies would double the reference's device memory at full size, never tried), and every
      // timed output is sampled for the spot check (compile's samples, and eager's where no
      // candidate samples come yet, only for the same work).
      protocol::ReferenceTimeRequest req{.key = t.key,
                                         .kind = kind,
                                         .options = timing_settings(same),
                                         .seeds = seeds,
                                         .keep = t.engine.worker_device == "cpu" ? keep : std::vector<int>{},
                                         .wall_target_ms = to.wall_check_ms,
                                         .own_floor = round == rounds - 1};
      // Eager's calls run on the candidate's seeds: its outputs are the reference for the spot
      // check of every timed call of this round (docs/timing.md, "Spot check").
      if (std::string(kind) == "eager" && with_spot && spot && round_calls > 0) {
        // (the rechecked calls: their outputs were held to the cases' full check, so the spot
        // check holds the other calls to the agreement with eager those showed)
        req.spot = spot_with_candidate();
        req.tolerances = t.tolerances;
      } else if (spot) {
        // (a baselines-first round: eager samples its outputs as the candidate will, and the
        // reference's spot_check compares them afterwards; compile samples and drops them)
        req.spot = spot;
      }
      r = t.engine.ask_reference(req, {}, t.eo.timeouts.reference_s, t.m);
    }
    if (!r) return false;
    const auto timed = protocol::read<protocol::ReferenceTimeReply>(r->header);
    if (auto f = quiet_device_finding(timed.timing.record.fields, "a baseline's timing round",
                                      &t.m.phase_ms["quiet_wait"]))
      add_unique(t.gpu_holders, {*f});
    if (std::string(kind) == "eager" && with_spot && spot && round_calls > 0) read_spot(timed.timing.spot);
    TimingRecord b = timed.timing.record.get();
    b.timed_in = "reference";
    b.wall_ms = TimingRun::ms_since(t0);
    t.m.phase_ms[std::string(kind) + "_timing"] += b.wall_ms;
    merge_round(std::string(kind) == "eager" ? t.eager : t.compiled, std::move(b));
  }
  return true;
}

/// The candidate's timed calls of this round, merged into its record; its reply, or nullopt when
/// the rounds stop (a crash, a timeout, a malformed reply, a failed call).
std::optional<Message> Round::time_candidate() {
  const auto began = clock::now();
  std::optional<Message> reply;
  {
    QuietDevice quiet(t.engine.quiet_mutex, [this] { return t.bystanders(); });
    // (CPU: the last round also has the candidate's process compare every aten operator's
    // kernels with the snapshot taken before its code ran, integrity.Fingerprints.add_dispatcher;
    // on a GPU the profiler's start does it, outside the device lock)
    reply = t.candidate_request(
        protocol::CandidateTimeRequest{.options = timing_settings(this_round),
                                       .seeds = seeds,
                                       .keep = keep,
                                       .spot = spot,
                                       .audit_dispatcher = round == rounds - 1 && t.engine.worker_device == "cpu"},
        "while timed");
  }
  t.m.phase_ms["candidate_timing"] += TimingRun::ms_since(began);
  if (!reply) return std::nullopt;
  TimingRecord rec;
  try {
    const auto timed = protocol::read<protocol::CandidateTimeReply>(reply->header);
    rec = timed.timing;
    if (timed.spot) cand_spot = *timed.spot;
    kept = timed.kept;
  } catch (const std::exception& e) {
    t.m.crash = process_failure(t.c.kill(), std::string("sent a malformed timing reply: ") + e.what());
    return std::nullopt;
  }
  rec.wall_ms = TimingRun::ms_since(began);
  // The spot check's results come from the reference only; the candidate's own samples go to it.
  rec.spot_checked_calls = 0;
  rec.spot_failed_calls.clear();
  rec.spot_detail.clear();
  rec.spot_unreadable = false;
  offset = t.cand ? t.cand->times_ms.size() : 0;
  round_calls = static_cast<int>(rec.times_ms.size());
  const bool failed = rec.failure.has_value();
  merge_round(t.cand, std::move(rec));
  if (failed) return std::nullopt;
  return reply;
}

/// The rechecks of the outputs the candidate kept. False when the reference failed (the
/// evaluation ended).
bool Round::recheck_kept(const Message& reply) {
  std::optional<TimingRecord>& cand = t.cand;
  // Every output asked for (the secret subset among the calls that ran, and the last call)
  // must come back: a reply that leaves one out (a forged reply, red team 2026-12-01) fails
  // the recheck of that call as a contract violation.
  std::set<int> wanted;
  for (int k : keep)
    if (k < round_calls) wanted.insert(k);
  if (round_calls > 0) wanted.insert(round_calls - 1);
  for (const auto& k : kept) wanted.erase(k.index);
  for (int missing : wanted)
    TimingRun::unreturned(cand->rechecks, static_cast<int>(offset) + missing,
                          seeds[static_cast<std::size_t>(this_round.warmup + missing)], "timed",
                          "the candidate's process did not return this timed output for the recheck");
  if (!kept.empty()) {
    std::vector<protocol::RecheckItem> items;
    for (const auto& k : kept) {
      if (k.index < 0 || k.index >= this_round.max_calls) continue;
      items.push_back({.index = k.index,
                       .seed = seeds[static_cast<std::size_t>(this_round.warmup + k.index)],
                       .output = k.output});
    }
    if (!t.recheck(cand->rechecks, items, reply.blobs, "timed", static_cast<int>(offset), "rechecks")) return false;
  }
  return true;
}

// The round's rechecked calls whose outputs held as the judge decides (recheck_holds): the
// spot check holds the other calls to the agreement with eager these showed.
void Round::note_rechecked() {
  for (const CaseRecord& r : t.cand->rechecks) {
    const int i = r.index - static_cast<int>(offset);
    if (r.transform == "timed" && i >= 0 && i < round_calls && r.compared && recheck_holds(r, t.eo.judge))
      rechecked.push_back(i);
  }
}

}  // namespace

void time_phase(TimingRun& t) {
  const TimingOptions& to = t.eo.timing;
  const int rounds = std::max(1, to.rounds);
  TimingOptions per = to;
  per.min_calls = std::max(1, (to.min_calls + rounds - 1) / rounds);
  per.max_calls = std::max(per.min_calls, (to.max_calls + rounds - 1) / rounds);
  per.budget_ms = to.budget_ms / rounds;
  for (int round = 0; round < rounds; ++round) {
    const RoundEnd end = Round(t, per, rounds, round).run();
    if (end == RoundEnd::ended) return;
    if (end == RoundEnd::stop) break;
  }
  std::optional<TimingRecord>& cand = t.cand;
  Measurements& m = t.m;
  if (cand) cand->rounds = rounds;
  if (t.eager) t.eager->rounds = rounds;
  if (t.compiled) t.compiled->rounds = rounds;
  m.eager_timing = t.eager;
  m.compile_timing = t.compiled;
  if (cand) cand->foreign_gpu_processes = t.gpu_holders;
  m.candidate_timing = cand;
  if (!cand || cand->failure || m.crash || m.timed_out_stage || cand->times_ms.empty()) return;
  if (!wall_check(t)) return;
  trace_launches(t);
}

}  // namespace kgym::runner
