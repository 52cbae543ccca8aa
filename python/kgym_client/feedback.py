"""Observations for training: a verdict's feedback rendered as text within a token budget.

`observation_text(feedback, budget_tokens)` keeps, in this order of priority, the outcome (with
the gate and the cases passed), the first failing case, the timing (the speedup over eager with
its confidence interval when the verdict carries one, `speedup_eager_ci` [low, high]), then the
headline message and the log excerpt; what does not fit the budget is cut with a marker. Tokens are
counted as the server counts them (1 token per 4 characters, `kgym::estimate_tokens`), so a budget
is the same on both sides but not exact for any one tokenizer.
"""
from __future__ import annotations

from typing import Optional

CHARS_PER_TOKEN = 4
CUT_MARKER = " [...cut to the token budget]"


def _num(x, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}g}"


def speedup_interval(feedback: dict) -> Optional[tuple]:
    """(low, high) of the speedup over eager when the verdict has one (`speedup_eager_ci` in the
    feedback or in its `timing`), else None."""
    for where in (feedback, feedback.get("timing") or {}):
        ci = where.get("speedup_eager_ci")
        if isinstance(ci, (list, tuple)) and len(ci) == 2 and all(isinstance(v, (int, float)) for v in ci):
            return float(ci[0]), float(ci[1])
        if isinstance(ci, dict) and "low" in ci and "high" in ci:
            return float(ci["low"]), float(ci["high"])
    return None


def feedback_lines(feedback: dict) -> list:
    """The feedback as lines, most important first (outcome, failing case, timing, message, log)."""
    f = feedback
    lines = [f"Outcome: {f.get('outcome')} (gate: {f.get('gate')}; correct on {f.get('cases_passed', 0)}"
             f"/{f.get('cases_total', 0)} cases)"]
    case = f.get("failing_case")
    if case:
        text = (f"First failing case: #{case.get('index')} ({case.get('transform')})")
        if case.get("message"):
            text += f": {case['message']}"
        if case.get("mismatches"):
            text += (f"; {case['mismatches']}/{case.get('numel')} elements differ, first at "
                     f"{case.get('first_mismatch_index')}, max abs error {_num(case.get('max_abs_error'))}"
                     f" (atol {_num(case.get('atol'))}, rtol {_num(case.get('rtol'))})")
        lines.append(text)
    t = f.get("timing")
    if t:
        text = (f"Timing: {_num(t.get('runtime_ms'))} ms (spread {_num(t.get('spread'), 2)}) vs eager "
                f"{_num(t.get('ref_runtime_ms'))} ms")
        if f.get("speedup_eager") is not None:
            text += f"; speedup over eager {_num(f['speedup_eager'])}x"
            ci = speedup_interval(f)
            if ci is not None:
                text += f" (95% interval {_num(ci[0])}x to {_num(ci[1])}x)"
        lines.append(text)
    messages = f.get("messages") or []
    if messages:
        lines.append(f"Message: {messages[0]}")
    if f.get("log_excerpt"):
        lines.append("Log:\n" + f["log_excerpt"])
    return lines


def observation_text(feedback: Optional[dict], budget_tokens: int = 600) -> str:
    """The feedback as prompt text of at most `budget_tokens` tokens (1 token ~ 4 characters).
    Lines are kept in priority order; the first line that does not fit is cut with a marker and
    the rest dropped. `feedback` None (no evaluation) gives ""."""
    if not feedback:
        return ""
    if budget_tokens <= 0:
        raise ValueError("budget_tokens must be positive")
    limit = budget_tokens * CHARS_PER_TOKEN
    out = ""
    for line in feedback_lines(feedback):
        piece = line if not out else "\n" + line
        if len(out) + len(piece) <= limit:
            out += piece
            continue
        room = limit - len(out) - len(CUT_MARKER)
        if room > 0:
            out += piece[:room] + CUT_MARKER
        elif not out:
            out = line[:limit]
        break
    return out
