#!/usr/bin/env python3
"""Renders a `kgym report --json` file as one self-contained HTML page with plots.

Usage: python3 scripts/report_html.py REPORT.json OUT.html

Every number comes from the C++ core (the JSON); this tool only lays it out. Plots are drawn with
matplotlib (PyPI, installed by scripts/install.sh) and embedded as base64 PNG, so the page needs
no network and no other file.
"""
import base64
import html
import io
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return '<img alt="plot" src="data:image/png;base64,%s"/>' % base64.b64encode(buf.getvalue()).decode()


def fmt(v, spec="{:.3f}"):
    return "-" if v is None else spec.format(v)


def table(headers, rows):
    out = ["<table><tr>" + "".join("<th>%s</th>" % html.escape(str(h)) for h in headers) + "</tr>"]
    for r in rows:
        out.append("<tr>" + "".join("<td>%s</td>" % html.escape(str(c)) for c in r) + "</tr>")
    return "\n".join(out) + "</table>"


def fast_p_plot(groups):
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    for g in groups:
        if g["key"] not in ("all",):
            continue
        ps = sorted(float(p) for p in g["fast_p_eager"])
        ax.plot(ps, [g["fast_p_eager"]["%g" % p] for p in ps], marker="o", label="vs eager")
        if g["fast_p_compile"]:
            ax.plot(ps, [g["fast_p_compile"]["%g" % p] for p in ps], marker="s", label="vs torch.compile")
    ax.set_xlabel("speedup threshold p")
    ax.set_ylabel("fast_p (fraction of attempts)")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title("fast_p")
    return png(fig)


def outcome_plot(all_group):
    items = sorted(all_group["outcomes"].items(), key=lambda kv: -kv[1])
    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    ax.barh([k for k, _ in items][::-1], [v for _, v in items][::-1], color="#4c72b0")
    for i, (_, v) in enumerate(items[::-1]):
        ax.text(v, i, " %d" % v, va="center")
    ax.set_xlabel("attempts")
    ax.set_title("outcomes")
    return png(fig)


def family_plot(groups):
    fam = [g for g in groups if g["key"] == "family"]
    if not fam:
        return ""
    names = [g["value"] for g in fam]
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    x = range(len(names))
    ax.bar([i - 0.2 for i in x], [g["correct_rate"] for g in fam], width=0.4, label="correct")
    ax.bar([i + 0.2 for i in x], [g["fast_p_eager"].get("1", 0) for g in fam], width=0.4, label="fast_1 vs eager")
    ax.set_xticks(list(x))
    ax.set_xticklabels(names, rotation=30, ha="right")
    ax.set_ylim(0, 1)
    ax.legend()
    ax.set_title("per family")
    return png(fig)


def claims_plot(claims):
    pts = [(c["claimed_eager"], c["measured_eager"]) for c in claims
           if c.get("claimed_eager") and c.get("measured_eager")]
    if not pts:
        return ""
    fig, ax = plt.subplots(figsize=(5.2, 5.2))
    xs, ys = zip(*pts)
    ax.scatter(xs, ys, s=18, alpha=0.75)
    lo = min(min(xs), min(ys)) * 0.8
    hi = max(max(xs), max(ys)) * 1.25
    ax.plot([lo, hi], [lo, hi], color="gray", lw=1, ls="--", label="measured = claimed")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("claimed speedup vs eager")
    ax.set_ylabel("measured speedup vs eager (passed)")
    ax.legend()
    ax.set_title("claimed vs measured")
    return png(fig)


def speedup_hist(claims, groups):
    vals = [c["measured_eager"] for c in claims if c.get("measured_eager")]
    if not vals:
        return ""
    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    import math
    ax.hist([math.log10(v) for v in vals], bins=30, color="#55a868")
    ax.axvline(0, color="gray", ls="--", lw=1)
    ax.set_xlabel("log10 measured speedup vs eager")
    ax.set_ylabel("candidates")
    ax.set_title("speedups of passed candidates")
    return png(fig)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1]) as f:
        rep = json.load(f)
    groups = rep["groups"]
    allg = groups[0]
    ps = sorted(float(p) for p in allg["fast_p_eager"])
    rows = []
    for g in groups:
        rows.append([g["value"] if g["key"] == "all" else "%s=%s" % (g["key"], g["value"]), g["tasks"], g["attempts"],
                     fmt(g["build_rate"]), fmt(g["correct_rate"])] +
                    [fmt(g["fast_p_eager"]["%g" % p]) for p in ps] +
                    [fmt(g["geomean_speedup_eager"], "{:.3f}x"),
                     fmt(g["fast_p_compile"].get("1")), fmt(g["geomean_speedup_compile"], "{:.3f}x"),
                     fmt(g["hybrid_share"])])
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>kgym report: %s</title>" % html.escape(rep["name"]),
             "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
             "table{border-collapse:collapse;font-size:13px;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 7px;"
             "text-align:right}th{background:#f0f0f0}td:first-child{text-align:left}img{max-width:100%}"
             ".plots{display:flex;flex-wrap:wrap;gap:12px}</style></head><body>",
             "<h1>kgym report: %s</h1>" % html.escape(rep["name"]),
             "<p>%d tasks, %d attempts (task &times; sample), %d verdicts, up to %d turn(s). fast_p and geomean are vs "
             "eager PyTorch unless marked torch.compile; geomean over passed attempts. Numbers from <code>kgym report"
             "</code> (C++); this page only draws them.</p>" % (allg["tasks"], allg["attempts"], allg["verdicts"],
                                                               allg["max_turns"]),
             table(["group", "tasks", "attempts", "build", "correct"] + ["fast_%g" % p for p in ps] +
                   ["geomean", "fast_1 vs compile", "geomean vs compile", "hybrid share"], rows),
             "<div class='plots'>", outcome_plot(allg), fast_p_plot(groups), family_plot(groups),
             claims_plot(rep.get("claims", [])), speedup_hist(rep.get("claims", []), groups), "</div>"]
    k_rows = [[k, fmt(allg["pass_at_k"][k]), fmt(allg["fast1_at_k"][k]), fmt(allg["best_at_k"][k], "{:.3f}x")]
              for k in sorted(allg["pass_at_k"], key=int)]
    parts += ["<h2>Samples and turns</h2>", table(["k", "pass@k", "fast_1@k", "best@k"], k_rows),
              table(["", "correct", "fast_1"], [["first turn", fmt(allg["first_turn"]["correct"]),
                                                 fmt(allg["first_turn"]["fast_1"])],
                                                ["best of turns", fmt(allg["best_of_turns"]["correct"]),
                                                 fmt(allg["best_of_turns"]["fast_1"])]])]
    cs = rep.get("claims_summary")
    if cs:
        parts += ["<h2>Claimed vs measured</h2>", table(["", "claimed", "measured"], [
            ["fast_1 vs eager (all %d rows)" % cs["rows"], fmt(cs["claimed_fast_1"]), fmt(cs["measured_fast_1"])],
            ["geomean vs eager (%d rows passed here)" % cs["passed"], fmt(cs["claimed_geomean_on_passed"], "{:.3f}x"),
             fmt(cs["measured_geomean_on_passed"], "{:.3f}x")],
            ["geomean vs eager (all rows with a claim)", fmt(cs["claimed_geomean"], "{:.3f}x"), ""],
            ["geomean vs torch.compile (%d rows)" % cs["compile_pairs"],
             fmt(cs["claimed_compile_geomean_on_passed"], "{:.3f}x"),
             fmt(cs["measured_compile_geomean_on_passed"], "{:.3f}x")]])]
        parts.append(table(["task", "candidate", "outcome", "claimed eager", "measured eager", "claimed compile",
                            "measured compile"],
                           [[c["task_id"], c["candidate_id"], c["outcome"], fmt(c["claimed_eager"]),
                             fmt(c["measured_eager"]), fmt(c["claimed_compile"]), fmt(c["measured_compile"])]
                            for c in rep.get("claims", [])]))
    parts += ["<h2>Implausible speedups (%d)</h2>" % len(rep["implausible"]),
              table(["task", "candidate", "reason"], [[f["task_id"], f["candidate_id"], f["reason"]]
                                                     for f in rep["implausible"]])]
    cmp_ = rep.get("comparison")
    if cmp_:
        parts += ["<h2>vs baseline %s (%d common tasks, paired bootstrap 95%% CI)</h2>" % (
            html.escape(cmp_["baseline"]), cmp_["common_tasks"]),
                  table(["metric", "run", "baseline", "difference", "95% CI"],
                        [[d["metric"], fmt(d["run"], "{:.4f}"), fmt(d["baseline"], "{:.4f}"),
                          fmt(d["difference"], "{:+.4f}"), "[%+.4f, %+.4f]" % tuple(d["ci95"])]
                         for d in cmp_["differences"]]),
                  "<p>fixed: %s</p><p>broken: %s</p>" % (html.escape(", ".join(cmp_["fixed"]) or "none"),
                                                         html.escape(", ".join(cmp_["broken"]) or "none"))]
    if rep.get("manifest"):
        parts += ["<h2>Manifest</h2><pre>%s</pre>" % html.escape(json.dumps(rep["manifest"], indent=1)[:20000])]
    parts.append("</body></html>")
    with open(argv[2], "w") as f:
        f.write("\n".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
