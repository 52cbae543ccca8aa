// The judge's last rule (gate 5, timing): the candidate's runtime on the basis the supervisor's
// clocks allow (window overhead, wall-clock floor, the CPU's like-for-like wall check), and the
// speedups over eager and torch.compile with their 95% intervals.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "judge_rules.hpp"
#include "kgym/interval.hpp"

namespace kgym::judge_detail {

namespace {


/// One baseline against the candidate: the timers' speedup (median over median) and its interval
/// over the interleaved rounds; when both sides went through the same wall check (paired
/// differences between the same calibrations: every CPU check, and a GPU check whose baseline's
/// requests were made), the wall check's speedup (each side's median difference, never below the
/// check's resolution: WallCheckSeries::calls_ms) and its paired interval.
struct SideComparison {
  double timer_speedup = 0;
  std::optional<Interval> timer_ci;
  double wall_speedup = 0;  ///< 0 when not measured alike
  std::optional<Interval> wall_ci;
};

SideComparison compare_side(const TimingRecord& cand, const TimingRecord& base) {
  SideComparison c;
  if (cand.times_ms.empty() || base.times_ms.empty() || base.failure) return c;
  const double tc = summarize_times(cand.times_ms).median_ms, tb = summarize_times(base.times_ms).median_ms;
  if (!(tc > 0) || !(tb > 0)) return c;
  c.timer_speedup = tb / tc;
  c.timer_ci = ratio_of_medians_interval(base.times_ms, base.round_calls, cand.times_ms, cand.round_calls);
  const auto& dc = cand.wall_check_paired_ms;
  const auto& db = base.wall_check_paired_ms;
  if (cand.method == base.method && dc.size() >= 3 && db.size() == dc.size()) {
    // (the same calibrations, so the same resolution; the larger if they differ)
    const double res = std::max(cand.wall_check_spread_ms, base.wall_check_spread_ms);
    auto med = [](std::vector<double> x) {
      std::sort(x.begin(), x.end());
      const std::size_t h = x.size() / 2;
      return x.size() % 2 ? x[h] : 0.5 * (x[h - 1] + x[h]);
    };
    const double wc = std::max(med(dc), res), wb = std::max(med(db), res);
    if (wc > 0 && wb > 0) {
      c.wall_speedup = wb / wc;
      c.wall_ci = paired_ratio_interval(db, dc, res);
      if (!c.wall_ci) c.wall_speedup = 0;
    }
  }
  return c;
}

/// The CPU's like-for-like decision against eager: it applies when eager went through the same
/// wall check as the candidate; the candidate's timer is doubted when the timers' speedup lies
/// above the wall check's whole interval (a timer that claims more than the supervisor's clock
/// allows, measured alike for both: a shrunk or self-restoring timer, work hidden outside the
/// timed window). Capping at the check's point estimate instead read the same operator at 0.81x
/// on a loaded 2-core machine (the check is noisier than the timers at small sizes); a timer
/// patched inside the call no longer reaches the CPU window at all (timing.time_calls binds the
/// clock taken at import), so the interval's top bounds what is left of that kind.
struct LikeForLike {
  bool applies = false, doubted = false;
  double timer_speedup = 0, wall_speedup = 0;
  std::optional<Interval> wall_ci;
};

LikeForLike like_for_like_cpu(const Measurements& m, const JudgeOptions&) {
  LikeForLike l;
  if (!m.candidate_timing || !m.eager_timing || m.candidate_timing->method != "monotonic_clock") return l;
  const SideComparison c = compare_side(*m.candidate_timing, *m.eager_timing);
  if (!(c.wall_speedup > 0) || !c.wall_ci || !(c.timer_speedup > 0)) return l;
  l.applies = true;
  l.timer_speedup = c.timer_speedup;
  l.wall_speedup = c.wall_speedup;
  l.wall_ci = c.wall_ci;
  l.doubted = c.timer_speedup > c.wall_ci->hi;
  return l;
}


/// The basis the candidate's runtime and the baselines' are taken on: window overhead
/// subtracted, the wall-clock floor, the CPU's doubted timer and like-for-like comparison.
struct RuntimeBasis {
  const Measurements& m;
  const JudgeOptions& options;
  const TimingRecord& t;   ///< the candidate's timing
  TimeStats cand;          ///< the candidate's timer statistics
  bool gpu = false;        ///< timed by CUDA events
  double overhead = 0;     ///< window overhead subtracted from every median (ms)
  LikeForLike lfl;
  double cand_floor = 0;   ///< the candidate's wall-clock floor (ms; 0: none)
  bool timer_doubted = false;
  double cand_ms = 0;      ///< the candidate's runtime (ms)

  RuntimeBasis(const Measurements& measurements, const JudgeOptions& opts);

  /// `raw_ms` less `subtract`, never below min_net_ms nor net_floor_fraction of `raw_ms`.
  double net_of(double raw_ms, double subtract) const {
    if (subtract <= 0) return raw_ms;
    const double floor_ms = std::min(raw_ms, std::max(options.min_net_ms, options.net_floor_fraction * raw_ms));
    return std::max(raw_ms - subtract, floor_ms);
  }
  double net(double raw_ms) const { return net_of(raw_ms, overhead); }
  // A baseline's own windows hold its own process's overhead, which the reference measured (the
  // candidate's processes stopped): that, when larger, is what its medians lose. The same
  // subtraction for both had left eager part of its window in a median (the reference's
  // overhead 0.0248 ms, the candidate's 0.012 ms: eager's very matmul read 2.1x by the event
  // times). It only ever lowers a speedup.
  double net_baseline(const TimingRecord& b, double raw_ms) const {
    return net_of(raw_ms, overhead > 0 ? std::max(overhead, b.window_overhead_ms) : 0.0);
  }
  double floor_factor(const TimingRecord& r) const {
    return r.method == "cuda_events" ? options.wall_floor_factor : options.wall_floor_factor_cpu;
  }
  /// The per-call wall clock of a side's wall-check calls over the floor factor (0: not measured).
  double wall_floor(const TimingRecord& r) const {
    if (r.wall_check_calls <= 0 || r.wall_check_ms <= 0) return 0.0;
    return r.wall_check_ms / r.wall_check_calls / floor_factor(r);
  }
};

RuntimeBasis::RuntimeBasis(const Measurements& measurements, const JudgeOptions& opts)
    : m(measurements), options(opts), t(*measurements.candidate_timing), cand(summarize_times(t.times_ms)) {
  // Window overhead (docs/timing.md): the device-wide sync inside every timing window adds a
  // fixed host round trip that plain event timing does not have. Both workers measure it with
  // empty windows; the smaller of the two medians is subtracted from every median (candidate and
  // baselines alike): a candidate can only lower the subtraction by reporting less, never raise
  // it. A net time is never below min_net_ms nor below net_floor_fraction of its raw window:
  // below that the window cannot resolve the kernel, and noise in the subtraction must not turn
  // into a speedup.
  overhead = t.method == "cuda_events" && m.eager_timing && !m.eager_timing->failure
                 ? std::max(0.0, m.eager_timing->window_overhead_ms)
                 : 0.0;
  if (overhead > 0 && t.window_overhead_ms > 0) overhead = std::min(overhead, t.window_overhead_ms);
  // The candidate's event or clock times come from its own process, where a self-restoring
  // patch of the timer can shrink them. The supervisor's wall clock of the wall-check calls
  // cannot be patched from there: the time taken is never below that per-call wall clock /
  // wall_floor_factor (docs/timing.md, "Wall-clock floor"). On the GPU those calls run back to
  // back (one sync at the end), so the floor is about max(host time, GPU time) of a call: a
  // host-bound call is measured as one, and GPU work the event window missed (a side stream that
  // ran under the launch cover) counts. The baselines get the same floor from the reference
  // worker's own back-to-back calls.
  gpu = t.method == "cuda_events";
  // CPU: a timer far below the wall check is not believed (the timer and the check measure the
  // same synchronous call there); the runtime then rests on the check alone, so it takes the
  // check's pessimistic figure, not its median, whose downward noise would be a gain for a lying
  // timer. An honest candidate that lands here loses some speed, never its verdict.
  // CPU, like for like: when eager went through the same wall check as the candidate (its
  // requests between the same calibrations, wall_check_paired_ms on both sides), the one-sided
  // floor and pessimistic figure below give way to a comparison of the same measurements: the
  // timers' speedup stands unless the wall check's own speedup interval lies wholly below it
  // (like_for_like_cpu).
  lfl = like_for_like_cpu(m, options);
  cand_floor = lfl.applies ? 0.0 : wall_floor(t);
  timer_doubted = !lfl.applies && !gpu && t.wall_check_calls > 0 && t.wall_check_upper_ms > 0 &&
                  cand_floor > cand.median_ms * options.timer_doubt_factor_cpu;
  if (timer_doubted)
    cand_floor = std::max(cand_floor, t.wall_check_upper_ms / t.wall_check_calls / options.wall_floor_factor_cpu);
  cand_ms = std::max(net(cand.median_ms), cand_floor);
  // (the candidate's time on eager's basis when its timer is not believed: eager's timer over the
  // wall check's speedup)
  // (capped at the top of the wall check's interval: a timer that claims more gains nothing
  // beyond what the supervisor's clock allows, measured alike; an honest timer that lands above
  // the interval by noise loses only that excess)
  if (lfl.applies && lfl.doubted && m.eager_timing && lfl.wall_ci->hi > 0)
    cand_ms = summarize_times(m.eager_timing->times_ms).median_ms / lfl.wall_ci->hi;
}

/// The candidate's runtime against the supervisor's clocks: on the CPU a timer grossly below the
/// synchronised per-call wall clock lies; anywhere, a runtime below the task's roofline floor
/// (over its safety factor) is not possible.
bool runtime_gate(const RuntimeBasis& r, Verdict& v) {
  const TimingRecord& t = r.t;
  const JudgeOptions& options = r.options;
  if (t.wall_check_calls > 0 && !r.gpu) {
    // CPU: also a cross-check (the per-call wall clock there is synchronised and holds only the
    // Python loop besides the call): a gross gap is a timer that lies.
    const double per_call = t.wall_check_ms / t.wall_check_calls;
    if (r.cand.median_ms * options.wall_check_factor_cpu + options.wall_check_slack_ms_cpu < per_call)
      return decide(v, Outcome::timing_invalid, Gate::timing,
                    fmt::format("the timer says {:.4g} ms per call, but {} synchronised calls took {:.4g} ms each "
                                "{}", r.cand.median_ms, t.wall_check_calls, per_call,
                                t.wall_check_clock == "busy" ? "on the supervisor's clock (time waiting for a CPU left out)"
                                                            : "on the supervisor's wall clock"));
  }
  const auto& roofline = r.m.roofline;
  if (roofline && roofline->applied && roofline->floor_ms > 0 && r.cand_ms < roofline->floor_ms / options.roofline_safety)
    return decide(v, Outcome::timing_invalid, Gate::timing,
                  fmt::format("{:.4g} ms is below the task's roofline floor {:.4g} ms ({} bytes at {:.0f} GB/s, "
                              "{:.3g} FLOPs at {:.0f} TFLOP/s; safety x{:g})", r.cand_ms, roofline->floor_ms,
                              roofline->bytes, roofline->bandwidth_gbps, roofline->flops, roofline->peak_tflops,
                              options.roofline_safety));
  return false;
}

/// The speedup's interval against baseline `b` (docs/timing.md, "Speedup and its interval"): the
/// timers' interval moved onto the reported speedup, widened to the wall check's (the CPU; the GPU
/// where the candidate is taken by its floor and the baseline went through the same check), and
/// always holding the speedup itself. A note when it holds 1.0.
void speedup_interval(const RuntimeBasis& r, const std::optional<TimingRecord>& b, const std::optional<double>& speedup,
                      std::optional<Interval>& ci, const char* name, Verdict& v) {
  if (!b || !speedup) return;
  const SideComparison c = compare_side(r.t, *b);
  if (!c.timer_ci || !(c.timer_speedup > 0)) return;
  // The timers' interval, moved onto the reported speedup (GPU: net times and floors; CPU with
  // a doubted timer: the wall basis), then, on the CPU, never above what the wall check
  // measured for both sides alike: its lower bound lowers the interval's, its upper bound caps it.
  const double f = *speedup / c.timer_speedup;
  Interval out{c.timer_ci->lo * f, c.timer_ci->hi * f};
  // GPU: only where the candidate's runtime is its floor (then the floors set the speedup, and
  // their noise, 10 to 40% a request at small sizes, is what the interval must hold).
  const bool by_floor = !r.gpu || (r.cand_floor > 0 && r.cand_floor >= r.net(r.cand.median_ms));
  if (by_floor && c.wall_ci) {
    // the hull of the two: both estimate the same ratio, and each under-covers when the
    // machine's load drifts (2 rounds, 6 request pairs on the CPU; 3 on the GPU); the lower end
    // decides the noise gate and fast_p, so a claim must clear 1.0 on both clocks
    out.lo = std::min(out.lo, c.wall_ci->lo);
    out.hi = std::max(out.hi, c.wall_ci->hi);
  }
  out.lo = std::min(out.lo, *speedup);
  out.hi = std::max(out.hi, *speedup);
  ci = out;
  if (out.holds(1.0))
    v.messages.push_back(fmt::format("no measurable change vs {}: its speedup's 95% interval [{:.3g}, {:.3g}] holds 1.0",
                                     name, out.lo, out.hi));
}

/// One baseline's runtime (`ms`), the speedup over it and its interval, added to the headline.
///
/// GPU, one basis for both sides: when the candidate's runtime is its wall-clock floor, a
/// baseline whose floor was measured is taken by its floor too (both the supervisor's per-call
/// wall clock of back-to-back calls over the same factor), not by the larger of its floor and
/// events. Each side taking its larger would let the factor's 10% and the events' noise go to
/// the candidate (timed calls that do nothing, the matmul done outside the window, read 1.11x
/// its eager operator). A baseline's floor is never above the larger, so this only ever lowers a
/// speedup. A candidate whose events stand keeps each side's larger (docs/timing.md says why).
/// Taken by its floor, a baseline is never below its net event time over the same factor:
/// back-to-back calls on one stream cannot take less than their GPU time, so a floor below it
/// is the floor's noise, and the candidate's side is never below its events either.
void speedup_vs_baseline(const RuntimeBasis& r, const std::optional<TimingRecord>& b, std::optional<double>& ms,
                         std::optional<double>& speedup, std::optional<Interval>& ci, const char* name, Verdict& v,
                         std::string& headline) {
  if (!b) return;
  if (b->failure || b->times_ms.empty()) {
    v.messages.push_back(std::string(name) + " baseline unavailable" +
                         (b->failure ? ": " + failure_text(*b->failure) : ""));
    return;
  }
  const bool cand_by_floor = r.gpu && r.cand_floor > 0 && r.cand_floor >= r.net(r.cand.median_ms);
  // The baselines' floor is for a host-bound call on the GPU, where event times miss host
  // time; on the CPU the reference's synchronous timer is trusted as it is, and its noisy
  // wall-clock difference only inflated the baseline.
  const double b_floor = b->method == "cuda_events" ? r.wall_floor(*b) : 0.0;
  const double b_events = r.net_baseline(*b, summarize_times(b->times_ms).median_ms);
  ms = std::max(b_events, b_floor);
  const double factor = r.floor_factor(*b);
  const double b_by_floor = std::max(b_floor, factor > 0 ? b_events / factor : b_events);
  if (cand_by_floor && b_floor > 0 && b_by_floor < *ms) {
    v.messages.push_back(fmt::format("{} taken by its wall-clock floor too ({:.4g} ms, its event time {:.4g} ms): "
                                     "the candidate's runtime is its floor, so both sides are back-to-back calls "
                                     "on the supervisor's clock", name, b_by_floor, *ms));
    ms = b_by_floor;
  }
  speedup = *ms / r.cand_ms;
  // The floors never raise a speedup above the event times' (both sides' net medians): at a few
  // microseconds per call every floor is the difference of requests that vary by 30%, so a
  // floor set high by noise would otherwise be the speedup. A floor exists to catch a
  // candidate's events that are too low, which only ever lowers this bound's rival. What is
  // lost: a candidate whose device time equals eager's but whose host time is lower is credited
  // with its device time only.
  const double cand_events = r.net(r.cand.median_ms);
  if (r.gpu && cand_events > 0 && b_events > 0 && b_events / cand_events < *speedup) {
    v.messages.push_back(fmt::format("speedup vs {} capped at the event times' {:.3g}x (the wall-clock floors gave "
                                     "{:.3g}x; a floor may lower a speedup, never raise it)",
                                     name, b_events / cand_events, *speedup));
    speedup = b_events / cand_events;
    ms = *speedup * r.cand_ms;  // the baseline's time on the candidate's basis: ref_runtime_ms / runtime_ms
  }
  speedup_interval(r, b, speedup, ci, name, v);
  // (an interval holding 1.0 says so in the headline too: "0.722x" alone reads as a slowdown)
  headline += ci ? fmt::format(", {:.3g}x [{:.3g}, {:.3g}] vs {}{}", *speedup, ci->lo, ci->hi, name,
                               ci->holds(1.0) ? " (no measurable change)" : "")
                 : fmt::format(", {:.3g}x vs {}", *speedup, name);
}

/// A note when the wall check, measured alike for the candidate and eager, capped the speedup.
void like_for_like_note(const RuntimeBasis& r, Verdict& v) {
  const LikeForLike& lfl = r.lfl;
  if (lfl.applies && lfl.doubted)
    v.messages.push_back(fmt::format(
        "speedup capped by the wall check, measured alike for the candidate and eager: the timers' speedup {:.3g}x "
        "lies above the wall check's 95% interval [{:.3g}, {:.3g}] (its point {:.3g}x), so the candidate's timer is "
        "not believed beyond the interval's top", lfl.timer_speedup, lfl.wall_ci->lo, lfl.wall_ci->hi, lfl.wall_speedup));
}

/// Notes on the candidate's runtime after the headline's overhead: the wall check's
/// pessimistic figure (a doubted CPU timer) or the wall-clock floor.
void floor_notes(const RuntimeBasis& r, Verdict& v) {
  const TimingRecord& t = r.t;
  if (r.timer_doubted)
    v.messages.push_back(fmt::format(
        "runtime set by the wall check's pessimistic figure: the timer says {:.4g} ms per call, more than "
        "{:g}x below the check's {:.4g} ms, so it is not believed; the largest paired difference (at least "
        "twice the check's resolution) is {:.4g} ms per call", r.cand.median_ms, r.options.timer_doubt_factor_cpu,
        t.wall_check_ms / t.wall_check_calls, t.wall_check_upper_ms / t.wall_check_calls));
  else if (r.cand_floor > 0 && r.cand_floor >= r.net(r.cand.median_ms))
    v.messages.push_back(fmt::format(
        "runtime set by the wall-clock floor: {} {} calls took {:.4g} ms each on the supervisor's {}, "
        "more than the {} ({:.4g} ms){}", t.wall_check_calls, r.gpu ? "back-to-back" : "synchronised",
        t.wall_check_ms / t.wall_check_calls, t.wall_check_clock == "busy" ? "busy clock" : "clock",
        r.gpu ? "event times" : "timer", r.net(r.cand.median_ms),
        r.gpu ? ": the call is host-bound (launch and Python time above its GPU time), or GPU work ran "
                "outside its timing window" : ""));
}

}  // namespace

/// Gate 5's outcome for a candidate whose timings hold: its runtime, the speedups over eager and
/// torch.compile with their intervals, and the headline (passed at the timing gate), unless the
/// runtime gate decides first.
void speedup_outcome(const Measurements& m, const JudgeOptions& options, Verdict& v) {
  const RuntimeBasis r(m, options);
  if (runtime_gate(r, v)) return;
  v.runtime_ms = r.cand_ms;
  v.runtime_spread = r.cand_ms > 0 ? r.cand.iqr_ms / r.cand_ms : r.cand.spread;
  std::string headline = fmt::format("correct on {} cases; {:.4g} ms", v.cases_total, r.cand_ms);
  speedup_vs_baseline(r, m.eager_timing, v.ref_runtime_ms, v.speedup_eager, v.speedup_eager_ci, "eager", v, headline);
  speedup_vs_baseline(r, m.compile_timing, v.compile_runtime_ms, v.speedup_compile, v.speedup_compile_ci,
                      "torch.compile", v, headline);
  like_for_like_note(r, v);
  if (r.overhead > 0) headline += fmt::format(" (window overhead {:.3g} ms subtracted)", r.overhead);
  floor_notes(r, v);
  decide(v, Outcome::passed, Gate::timing, headline);
}

}  // namespace kgym::judge_detail
