// Feedback of a turn: the machine-readable schema built from a verdict, its rendered text and
// one-line summary (episode.hpp).
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "kgym/episode.hpp"

namespace kgym {
namespace {

std::string fmt_num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

/// Keeps the lines that mention an error first (compiler logs put them among many notes), then
/// fills up with the log's tail; at most max_chars characters.
std::string excerpt_log(const std::string& log, std::size_t max_chars) {
  if (log.size() <= max_chars) return log;
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  for (const auto& line : lines) {
    if (lower(line).find("error") == std::string::npos) continue;
    if (out.size() + line.size() + 1 > max_chars) break;
    out += line + "\n";
  }
  if (out.size() < max_chars / 2) {
    std::size_t room = max_chars - out.size() - 5;
    out += "...\n" + log.substr(log.size() - std::min(room, log.size()));
  }
  return out.substr(0, max_chars);
}

std::string failure_text(const Failure& f) {
  std::string text = f.type.empty() ? f.message : f.type + ": " + f.message;
  if (!f.traceback.empty()) text += "\n" + f.traceback;
  return text;
}

std::string join_index(const std::vector<std::int64_t>& idx) {
  std::string s = "[";
  for (std::size_t i = 0; i < idx.size(); ++i) s += (i ? ", " : "") + std::to_string(idx[i]);
  return s + "]";
}

}  // namespace

std::size_t estimate_tokens(const std::string& text) noexcept { return (text.size() + 3) / 4; }

Feedback make_feedback(const Verdict& v, std::size_t log_chars) {
  Feedback f;
  f.outcome = v.outcome;
  f.gate = v.gate;
  f.correct = v.correct;
  f.cases_passed = v.cases_passed;
  f.cases_total = v.cases_total;
  f.messages = v.messages;
  f.speedup_eager = v.speedup_eager;
  f.speedup_compile = v.speedup_compile;
  f.speedup_eager_ci = v.speedup_eager_ci;
  f.speedup_compile_ci = v.speedup_compile_ci;
  for (const auto& j : v.policy_findings) {
    if (!j.is_object()) continue;
    PolicyHit hit;
    hit.rule = j.value("rule_id", j.value("rule", std::string()));
    hit.severity = j.value("severity", std::string());
    hit.message = j.value("message", std::string());
    if (j.contains("line") && j["line"].is_number_integer()) hit.line = j["line"].get<int>();
    f.policy_hits.push_back(std::move(hit));
  }
  const Measurements& m = v.measurements;
  // The log the model needs: the build/import failure, else the crash, else the first case error.
  std::string log;
  if (m.load.failure) log = failure_text(*m.load.failure);
  else if (m.crash) log = failure_text(*m.crash);
  for (const auto& c : m.cases) {
    bool failed = c.failure || !c.output_plain_tensor || !c.structure_matches || !c.dtype_matches ||
                  !c.shape_matches || !c.device_matches || !c.inputs_unchanged ||
                  c.output_aliases_input || c.mismatches > 0;
    if (!failed) continue;
    CaseFeedback cf;
    cf.index = c.index;
    cf.transform = c.transform;
    if (c.failure) {
      cf.message = c.failure->type.empty() ? c.failure->message
                                           : c.failure->type + ": " + c.failure->message;
      if (log.empty()) log = failure_text(*c.failure);
    } else if (!c.output_plain_tensor) {
      cf.message = "output is a " + c.output_type + ", not a plain torch.Tensor";
    } else if (!c.detail.empty()) {
      cf.message = c.detail;
    } else if (!c.inputs_unchanged) {
      cf.message = "the candidate modified its inputs";
    } else if (c.output_aliases_input) {
      cf.message = "an output shares storage with an input";
    }
    cf.mismatches = c.mismatches;
    cf.numel = c.numel;
    cf.first_mismatch_index = c.first_mismatch_index;
    cf.max_abs_error = c.max_abs_error;
    cf.mean_abs_error = c.mean_abs_error;
    cf.max_rel_error = c.max_rel_error;
    cf.atol = c.atol;
    cf.rtol = c.rtol;
    f.failing_case = std::move(cf);
    break;
  }
  f.log_excerpt = excerpt_log(log, log_chars);
  if (v.runtime_ms) {
    TimingFeedback t;
    t.runtime_ms = *v.runtime_ms;
    t.spread = v.runtime_spread.value_or(0.0);
    t.calls = m.candidate_timing ? static_cast<int>(m.candidate_timing->times_ms.size()) : 0;
    t.ref_runtime_ms = v.ref_runtime_ms;
    t.compile_runtime_ms = v.compile_runtime_ms;
    f.timing = t;
  }
  return f;
}

std::string summarize_feedback(const Feedback& f) {
  std::string s(to_string(f.outcome));
  if (f.cases_total > 0) {
    s += ": " + std::to_string(f.cases_passed) + "/" + std::to_string(f.cases_total) + " cases";
  }
  if (f.outcome == Outcome::passed && f.speedup_eager) {
    s += ", " + fmt_num(*f.speedup_eager) + "x vs eager";
    if (f.speedup_eager_ci && f.speedup_eager_ci->holds(1.0)) s += " (no measurable change)";
  } else if (f.failing_case && f.failing_case->mismatches > 0) {
    s += "; max abs error " + fmt_num(f.failing_case->max_abs_error);
  } else if (!f.policy_hits.empty()) {
    s += "; rule " + f.policy_hits.front().rule;
  } else if (!f.messages.empty()) {
    s += "; " + f.messages.front().substr(0, 120);
  }
  return s;
}

std::string render_feedback(const Feedback& f, std::size_t max_chars) {
  std::ostringstream out;
  out << "Outcome: " << to_string(f.outcome);
  if (f.gate != Gate::none) out << " (gate: " << to_string(f.gate) << ")";
  out << ".";
  if (f.cases_total > 0) {
    out << " " << f.cases_passed << "/" << f.cases_total << " correctness cases passed.";
  }
  out << "\n";
  for (std::size_t i = 0; i < f.messages.size() && i < 3; ++i) out << f.messages[i] << "\n";
  for (const auto& hit : f.policy_hits) {
    out << "Policy [" << hit.rule << "]";
    if (!hit.severity.empty()) out << " (" << hit.severity << ")";
    if (hit.line > 0) out << " line " << hit.line;
    out << ": " << hit.message << "\n";
  }
  if (f.failing_case) {
    const auto& c = *f.failing_case;
    out << "Failing case " << c.index << " (inputs " << c.transform << ")";
    if (!c.message.empty()) out << ": " << c.message;
    if (c.mismatches > 0) {
      out << ": " << c.mismatches << " of " << c.numel << " elements outside tolerance";
      if (!c.first_mismatch_index.empty()) out << ", first at " << join_index(c.first_mismatch_index);
      out << "; max abs error " << fmt_num(c.max_abs_error) << ", mean abs error "
          << fmt_num(c.mean_abs_error) << ", max rel error " << fmt_num(c.max_rel_error)
          << " (atol " << fmt_num(c.atol) << ", rtol " << fmt_num(c.rtol) << ")";
    }
    out << "\n";
  }
  if (f.timing) {
    const auto& t = *f.timing;
    out << "Timing: " << fmt_num(t.runtime_ms) << " ms (spread " << fmt_num(100 * t.spread)
        << "%, " << t.calls << " calls)";
    if (t.ref_runtime_ms) out << "; eager " << fmt_num(*t.ref_runtime_ms) << " ms";
    if (t.compile_runtime_ms) out << "; torch.compile " << fmt_num(*t.compile_runtime_ms) << " ms";
    out << ".";
    // (with its 95% interval; one holding 1.0 is no measurable change: docs/timing.md)
    auto ci = [&](const std::optional<Interval>& c) {
      if (!c) return;
      out << " (95% interval " << fmt_num(c->lo) << "-" << fmt_num(c->hi)
          << (c->holds(1.0) ? ": no measurable change)" : ")");
    };
    if (f.speedup_eager) {
      out << " Speedup " << fmt_num(*f.speedup_eager) << "x vs eager";
      ci(f.speedup_eager_ci);
    }
    if (f.speedup_compile) {
      out << ", " << fmt_num(*f.speedup_compile) << "x vs torch.compile";
      ci(f.speedup_compile_ci);
    }
    out << "\n";
  }
  if (!f.log_excerpt.empty()) out << "Log:\n" << f.log_excerpt << "\n";
  std::string text = out.str();
  if (text.size() > max_chars) {
    const std::string marker = "\n[feedback cut]";
    text = text.substr(0, max_chars > marker.size() ? max_chars - marker.size() : 0) + marker;
  }
  return text;
}

}  // namespace kgym
