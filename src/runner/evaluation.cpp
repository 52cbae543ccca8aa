// What the phases of an evaluation share (evaluation.hpp): the quiet device, the records'
// merging, and the timing phase's requests.
#include "evaluation.hpp"
#include "timing_cpu.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <initializer_list>
#include <string_view>

#include <spdlog/spdlog.h>

#include "kgym/error.hpp"

namespace kgym::runner {
namespace {

/// The value of environment variable `name` when it is one of `allowed` ("" when unset); else
/// Error(usage) naming the variable and the values it takes (a fresh user's KGYM_SANDBOX=maybe
/// ran silently with the default).
std::string env_choice(const char* name, std::initializer_list<std::string_view> allowed) {
  const char* v = std::getenv(name);
  if (!v || !*v) return "";
  std::string list;
  for (auto a : allowed) {
    if (a == v) return v;
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  throw Error(ErrorKind::usage, std::string(name) + "='" + v + "' is not one of " + list + "; unset it or give one of those");
}

}  // namespace

QuietDevice::QuietDevice(std::shared_mutex& quiet, const std::function<std::vector<pid_t>()>& scan)
    : lock_(quiet), paused_(scan) {
  for (const auto& k : paused_.killed())
    spdlog::warn("kgym: process {} did not stop within {} ms of SIGSTOP before a timing and was killed", k,
                 PausedTree::kStopLimitMs);
}

std::uint64_t random_seed() {
  std::random_device rd;  // OS entropy
  return ((static_cast<std::uint64_t>(rd()) << 32) ^ rd()) & ((1ULL << 63) - 1);
}

protocol::TimingSettings timing_settings(const TimingOptions& t) {
  return {.warmup = t.warmup,
          .min_calls = t.min_calls,
          .max_calls = t.max_calls,
          .budget_ms = t.budget_ms,
          .target_spread = t.target_spread,
          .l2_flush = t.l2_flush};
}

/// Copies the reference side's comparison statistics into a case record (never the candidate's).
void apply_comparison(const protocol::Comparison& h, CaseRecord& cr) {
  cr.compared = true;
  cr.output_plain_tensor = h.output_plain_tensor.value_or(cr.output_plain_tensor);
  if (h.output_type) cr.output_type = *h.output_type;
  cr.structure_matches = h.structure_matches;
  cr.dtype_matches = h.dtype_matches;
  cr.shape_matches = h.shape_matches;
  cr.device_matches = h.device_matches;
  cr.detail = h.detail;
  cr.numel = h.numel;
  cr.max_abs_error = h.max_abs_error;
  cr.mean_abs_error = h.mean_abs_error;
  cr.max_rel_error = h.max_rel_error;
  cr.tolerance_ratio = h.tolerance_ratio;
  cr.atol = h.atol;
  cr.rtol = h.rtol;
  cr.nonfinite_mismatches = h.nonfinite_mismatches;
  cr.mismatches = h.mismatches;
  cr.mismatches_outside_fp64 = h.mismatches_outside_fp64;
  cr.fp64_atol_ratio = h.fp64_atol_ratio;
  cr.first_mismatch_index = h.first_mismatch_index;
  cr.reference_finite = h.reference_finite;
  cr.fp64_checked = h.fp64_checked;
  cr.fp64_error = h.fp64_error;
  cr.fp64_reference_error = h.fp64_reference_error;
  cr.fp64_scale = h.fp64_scale;
  cr.dtype_eps = h.dtype_eps;
  cr.trivial_passing = h.trivial_passing;
}

/// Appends one round's timing to the merged record of its kind.
/// The rounds' call counts and the wall check's pairs are the supervisor's (a reply's own are
/// dropped): the round counts are the clusters of the speedup's interval.
void merge_round(std::optional<TimingRecord>& into, TimingRecord r) {
  r.wall_check_paired_ms.clear();
  r.wall_check_harness_ms.clear();
  r.round_calls = {static_cast<int>(r.times_ms.size())};
  if (!into) {
    into = std::move(r);
    return;
  }
  TimingRecord& t = *into;
  t.round_calls.push_back(static_cast<int>(r.times_ms.size()));
  t.times_ms.insert(t.times_ms.end(), r.times_ms.begin(), r.times_ms.end());
  t.wall_ms += r.wall_ms;
  t.l2_flushed = t.l2_flushed && r.l2_flushed;
  t.fresh_inputs = t.fresh_inputs && r.fresh_inputs;
  t.l2_persist_reset = t.l2_persist_reset && r.l2_persist_reset;
  t.l2_persist_violations += r.l2_persist_violations;
  t.threads_leaked += r.threads_leaked;
  if (t.thread_detail.empty()) t.thread_detail = r.thread_detail;
  for (auto& x : r.tampered)
    if (std::find(t.tampered.begin(), t.tampered.end(), x) == t.tampered.end()) t.tampered.push_back(x);
  if (!t.failure && r.failure) t.failure = r.failure;
  if (t.timed_in != r.timed_in) t.timed_in = "twin+reference";  // (a twin lost mid-run)
  // A baseline's wall-clock floor (measured by the reference worker per round): the least
  // per-call value of the rounds (a floor must not be raised by one noisy round).
  if (r.wall_check_calls > 0 && r.wall_check_ms > 0 &&
      (t.wall_check_calls <= 0 || r.wall_check_ms / r.wall_check_calls < t.wall_check_ms / t.wall_check_calls)) {
    t.wall_check_calls = r.wall_check_calls;
    t.wall_check_ms = r.wall_check_ms;
    t.wall_check_host_ms = r.wall_check_host_ms;
  }
}

/// Appends each of `lines` to `into` unless it is there already (findings collected over several
/// looks at the candidate's processes).
void add_unique(std::vector<std::string>& into, const std::vector<std::string>& lines) {
  for (const auto& line : lines)
    if (std::find(into.begin(), into.end(), line) == into.end()) into.push_back(line);
}

Failure process_failure(const runner::ExitStatus& st, std::string message) {
  Failure f;
  f.stage = "process";
  f.type = st.signal ? "signal" : "exit";
  f.signal = st.signal;
  f.exit_code = st.exit_code;
  f.message = std::move(message);
  return f;
}

/// KGYM_KEEP_WORK: keep the work folder's files (1, true, yes) or not (unset, 0, false, no).
bool keep_work() {
  const std::string v = env_choice("KGYM_KEEP_WORK", {"0", "1", "true", "false", "yes", "no"});
  return v == "1" || v == "true" || v == "yes";
}

/// KGYM_CPU_THREADS: torch's thread count in CPU workers, a whole number from 1 to 1024 (default 1).
int cpu_threads() {
  const char* v = std::getenv("KGYM_CPU_THREADS");
  if (!v || !*v) return 1;
  int n = 0;
  const std::string s(v);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size() || n < 1 || n > 1024)
    throw Error(ErrorKind::usage, "KGYM_CPU_THREADS='" + s + "' is not a whole number from 1 to 1024; unset it (1 thread) or give one");
  return n;
}

/// Checks every KGYM_* setting the workers read, before any starts: a bad value is a usage
/// error naming it, not a worker's traceback (KGYM_CPU_THREADS=abc) or a silent default.
void check_worker_environment() {
  (void)keep_work();
  (void)cpu_threads();
  (void)env_choice("KGYM_SANDBOX", {"landlock", "off"});
  (void)env_choice("KGYM_DEVICE_TRANSFER", {"ipc", "host"});
  (void)env_choice("KGYM_CPU_CGROUP", {"0", "1"});
  (void)env_choice("KGYM_BASELINE_TWIN", {"0", "1"});
}

void TimingRun::note_gpu_holders() {
  add_unique(gpu_holders, foreign_gpu_holders(c.pid(), engine.zygote->pid(), engine.zygote->workers(),
                                              engine.reference ? engine.reference->pid() : -1,
                                              engine.worker_device == "cpu"));
}

void TimingRun::note_tampered(const std::vector<std::string>& tampered) {
  add_unique(m.candidate_timing->tampered, tampered);
}

std::vector<pid_t> TimingRun::bystanders() const {
  return bystander_processes(engine.zygote->pid(), {c.pid(), engine.reference ? engine.reference->pid() : -1});
}

std::vector<pid_t> TimingRun::all_but_reference() const {
  return pausable_processes(c.pid(), engine.zygote->pid(), engine.reference ? engine.reference->pid() : -1);
}

std::vector<pid_t> TimingRun::all_but_twin() const {
  std::vector<pid_t> out = pausable_processes(c.pid(), engine.zygote->pid(), twin ? twin->pid() : -1);
  if (engine.reference) std::erase(out, engine.reference->pid());
  return out;
}

void TimingRun::drop_twin(const std::string& why) {
  spdlog::warn("the baseline twin failed {}; eager is timed in the reference worker", why);
  twin = nullptr;
}

void TimingRun::reference_settled() {
  if (engine.timing_cpu && engine.reference) wait_until_sleeping(engine.reference->pid(), 50.0);
}

std::optional<Message> TimingRun::candidate_request(const nlohmann::json& header, const char* what) {
  reference_settled();
  try {
    Message reply = c.request(header, {}, eo.timeouts.timing_s);
    // The harness in the candidate's process raised (e.g. the device ran out of memory): a
    // failure of this run, said as it is, not a reply with missing parts (which reads as a
    // broken contract: full-size ReLU's wall request, H200 session 9).
    if (const auto status = protocol::read<protocol::CandidateStatus>(reply.header); status.harness_error) {
      m.crash = process_failure(c.kill(), std::string(what) + ": kgym's candidate harness failed: " +
                                              status.harness_error_text());
      return std::nullopt;
    }
    return reply;
  } catch (const ChannelClosed&) {
    m.crash = process_failure(c.kill(), what);
  } catch (const ChannelTimeout&) {
    m.timed_out_stage = "timing";
  } catch (const Error& e) {
    const auto st = c.kill();
    m.crash = process_failure(st, std::string("broke the protocol: ") + e.what());
  }
  return std::nullopt;
}

void TimingRun::unreturned(std::vector<CaseRecord>& into, int index, std::uint64_t seed, const char* transform,
                           std::string why) {
  CaseRecord r;
  r.index = index;
  r.seed = seed;
  r.transform = transform;
  r.compared = true;
  r.structure_matches = false;
  r.detail = std::move(why);
  into.push_back(std::move(r));
}

bool TimingRun::recheck(std::vector<CaseRecord>& into, const std::vector<protocol::RecheckItem>& items,
                        const std::vector<Blob>& blobs, const char* transform, int offset, const std::string& phase) {
  const auto r0 = clock::now();
  auto res = engine.ask_reference(protocol::RecheckRequest{.key = key, .items = items, .tolerances = tolerances}, blobs,
                                  eo.timeouts.reference_s, m);
  m.phase_ms[phase] += ms_since(r0);
  if (!res) return false;
  const auto results = protocol::read<protocol::RecheckReply>(res->header).results;
  for (std::size_t i = 0; i < results.size() && i < items.size(); ++i) {
    CaseRecord r;
    r.index = offset + items[i].index;
    r.seed = items[i].seed;
    r.transform = transform;
    apply_comparison(results[i], r);
    into.push_back(std::move(r));
  }
  return true;
}

}  // namespace kgym::runner
