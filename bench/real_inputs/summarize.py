"""Table of the audit and the control run: per level, how many tasks run at the scale and pass
the control, and the reason of each one that does not (markdown on stdout, JSON beside it).

usage: summarize.py AUDIT.jsonl CONTROL.jsonl
"""
import collections
import json
import pathlib
import sys


def reason_kind(reason: str) -> str:
    for stage in ("cannot be constructed", "fails on the probe input", "get_inputs() fails", "does not load"):
        if stage in reason:
            rest = reason.split(stage, 1)[1].lstrip(": ")
            return f"{stage}: {rest.split(':', 1)[0]}"
    return "could not be probed"


def main() -> int:
    audit = [json.loads(l) for l in open(sys.argv[1])]
    control = {}
    if pathlib.Path(sys.argv[2]).exists():
        for l in open(sys.argv[2]):
            v = json.loads(l)
            control[v["task_id"]] = v
    rows = collections.OrderedDict()
    per_task = []
    for a in audit:
        level = a["task_id"].split("/")[0]
        r = rows.setdefault(level, collections.Counter())
        r["tasks"] += 1
        v = control.get(a["task_id"])
        rec = {"task_id": a["task_id"], "runs": a["runs"], "scale": a["scale"],
               "notes": a.get("scaled", {}).get("notes", [])}
        if not a["runs"]:
            rec["reason"] = a["reason"]
            r["does not run"] += 1
        else:
            r["runs"] += 1
            if v is None:
                rec["control"] = "not judged"
                r["control not judged"] += 1
            else:
                rec["control"] = v["outcome"]
                rec["headline"] = v["messages"][0][:300] if v["messages"] else ""
                r["control " + v["outcome"]] += 1
        per_task.append(rec)
    scale = audit[0]["scale"] if audit else None
    print(f"# KernelBench at scale {scale}: the reference probe and the reference-as-candidate control\n")
    keys = ["tasks", "runs", "does not run", "control passed"]
    extra = sorted({k for r in rows.values() for k in r} - set(keys))
    print("| level | " + " | ".join(keys + extra) + " |")
    print("|---" * (1 + len(keys + extra)) + "|")
    total = collections.Counter()
    for level, r in rows.items():
        total.update(r)
        print(f"| {level} | " + " | ".join(str(r[k]) for k in keys + extra) + " |")
    print("| all | " + " | ".join(str(total[k]) for k in keys + extra) + " |\n")
    print("## Tasks that do not run at this scale\n")
    for rec in per_task:
        if not rec["runs"]:
            print(f"- `{rec['task_id']}`: {reason_kind(rec['reason'])} ({rec['reason'].split('cannot run: ', 1)[-1][:160]})")
    print("\n## Tasks that run but whose control did not pass\n")
    for rec in per_task:
        if rec["runs"] and rec.get("control") not in ("passed", "not judged"):
            print(f"- `{rec['task_id']}`: {rec.get('control')}: {rec.get('headline', '')[:200]}")
    skipped = sum(1 for rec in per_task if rec.get("control") == "not judged")
    if skipped:
        print(f"\n{skipped} tasks that run were not judged in this control run (see the README).")
    out = pathlib.Path(sys.argv[1]).with_name(pathlib.Path(sys.argv[1]).stem.replace("audit", "summary") + ".json")
    out.write_text(json.dumps({"scale": scale, "levels": rows, "all": total, "tasks": per_task}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
