"""Outcome changes between two kgym verdict files (same tasks and candidates, e.g. the CUDA-L1
rows judged by issue 2's engine and by the engine with run-time integrity).

    python3 bench/verdict_diff.py OLD.jsonl NEW.jsonl [--md OUT.md]

Prints one row per (task, candidate) with both outcomes, runtimes, speedups and the new verdict's
first message; rows whose outcome changed are marked. Exit status 0 (a report, not a test)."""
import argparse
import json
import sys


def load(path):
    """{(task_id, candidate_id): verdict dict} from a JSONL file (blank lines skipped)."""
    rows = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                v = json.loads(line)
                rows[(v["task_id"], v["candidate_id"])] = v
    return rows


def fmt(x, spec="{:.3f}"):
    return "-" if x is None else spec.format(x)


def render(old, new):
    """Markdown table of every key in either file; changed outcomes are flagged with **."""
    lines = ["| task | old outcome | new outcome | old ms | new ms | old x eager | new x eager | new message |",
             "|---|---|---|---|---|---|---|---|"]
    changed = 0
    for key in sorted(set(old) | set(new)):
        o, n = old.get(key, {}), new.get(key, {})
        oo, no = o.get("outcome", "(absent)"), n.get("outcome", "(absent)")
        mark = "**" if oo != no else ""
        changed += oo != no
        msg = ((n.get("messages") or [""])[0] or "").replace("\n", " ").replace("|", "\\|")[:160]
        lines.append(f"| {key[0]} | {oo} | {mark}{no}{mark} | {fmt(o.get('runtime_ms'))} | {fmt(n.get('runtime_ms'))} | "
                     f"{fmt(o.get('speedup_eager'), '{:.2f}')} | {fmt(n.get('speedup_eager'), '{:.2f}')} | {msg} |")
    lines.append("")
    lines.append(f"{changed} of {len(set(old) | set(new))} outcomes changed.")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--md", help="also write the table here")
    a = ap.parse_args()
    text = render(load(a.old), load(a.new))
    print(text)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
