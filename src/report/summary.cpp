#include "kgym/report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace kgym {

std::optional<double> fast_p_speedup(const Verdict& v, bool compile) {
  const auto& s = compile ? v.speedup_compile : v.speedup_eager;
  const auto& ci = compile ? v.speedup_compile_ci : v.speedup_eager_ci;
  if (!s) return std::nullopt;
  return ci ? std::min(ci->lo, *s) : *s;
}

Summary summarize(const std::vector<Verdict>& verdicts, const std::vector<double>& ps) {
  Summary s;
  s.total = static_cast<int>(verdicts.size());
  double log_sum = 0, reward_sum = 0;
  for (const auto& v : verdicts) {
    ++s.counts[v.outcome];
    if (v.outcome == Outcome::task_error) continue;  // not judged: counts neither for nor against
    ++s.judged;
    if (v.correct) ++s.correct;
    reward_sum += v.reward;
    if (v.outcome == Outcome::passed && v.speedup_eager && *v.speedup_eager > 0) {
      ++s.timed;
      log_sum += std::log(*v.speedup_eager);
    } else if (v.outcome == Outcome::passed && !v.speedup_eager) {
      ++s.untimed;
    }
  }
  for (double p : ps) {
    int n = 0;
    for (const auto& v : verdicts)
      if (const auto sp = fast_p_speedup(v); v.outcome == Outcome::passed && sp && *sp > p) ++n;
    s.fast_p[p] = s.judged ? static_cast<double>(n) / s.judged : 0.0;
  }
  if (s.timed) s.geomean_speedup = std::exp(log_sum / s.timed);
  s.mean_reward = s.judged ? reward_sum / s.judged : 0.0;
  return s;
}

std::string render_summary(const Summary& s) {
  std::string out = fmt::format("{:<20} {:>6}\n", "outcome", "count");
  out += std::string(27, '-') + "\n";
  for (Outcome o : kAllOutcomes) {
    auto it = s.counts.find(o);
    int n = it == s.counts.end() ? 0 : it->second;
    if (n) out += fmt::format("{:<20} {:>6}\n", to_string(o), n);
  }
  out += std::string(27, '-') + "\n";
  out += fmt::format("{:<20} {:>6}\n", "total", s.total);
  if (s.judged != s.total)
    out += fmt::format("task_error: {} not judged (the task's reference failed), left out of correct, fast_p and mean reward\n",
                       s.total - s.judged);
  out += fmt::format("correct: {}/{}", s.correct, s.judged);
  if (s.timed == 0 && s.untimed > 0)  // --no-timing: no speedup to count, not a failure
    out += "   fast_p: n/a (no timing)";
  else
    for (const auto& [p, f] : s.fast_p) out += fmt::format("   fast_{:g}: {:.3f}", p, f);
  out += "\n";
  out += s.geomean_speedup ? fmt::format("geomean speedup vs eager (passed, n={}): {:.3f}x", s.timed, *s.geomean_speedup)
                           : std::string("geomean speedup vs eager: n/a (no timed passing candidate)");
  out += fmt::format("   mean reward: {:.3f}\n", s.mean_reward);
  return out;
}

}  // namespace kgym
