"""Checks a verdicts JSONL against the `# expect: <outcome>` first line of each candidate file.

`# expect: a|b` accepts either outcome; the file must then say why both are right in a comment
line starting `# why a|b:` (e.g. a hack caught when it acts and harmless when it does not, or a
stronger verdict on another machine): a list without its reason fails the check.

`# expect: passed, speedup <= twin` also bounds the verdict's speedup vs eager (a hack whose reward
must not grow: a patched timer may pass, but only at its honest speed) by its honest twin measured
in the same run: `honest_twin.py` in the same task folder (it computes what the hack computes, the
way eager does). The bound is the twin's speedup times the spread of the twin's own timed calls
(upper over lower quartile) in that run. A fixed number is refused: a cap between two speedups
seen once moves with the machine.

usage: expect_outcomes.py VERDICTS.jsonl CANDIDATE_DIR [CANDIDATE_DIR ...]
"""
import json
import pathlib
import sys

TWIN = "honest_twin.py"


def quartile_ratio(times) -> float:
    """Upper over lower quartile of a list of call times (>= 1): the call-to-call spread of one
    timed series, measured in the run itself."""
    t = sorted(times)
    if len(t) < 2 or t[len(t) // 4] <= 0:
        raise ValueError(f"no spread from {len(t)} timed calls")
    return t[min(len(t) - 1, (3 * len(t)) // 4)] / t[len(t) // 4]


def twin_ceiling(v) -> float:
    """The largest speedup vs eager a candidate doing the twin's work can be credited with in the
    run of the twin's verdict ``v``: the twin's speedup times the spread of its own timed calls
    (quartile_ratio), or the upper end of the twin's 95% speedup interval (speedup_eager_ci:
    how far this code's speedup moves between verdicts of one run; the quartile spread alone was
    exceeded by that drift on a loaded machine), whichever is larger. Both come from that
    verdict; no number is fixed here."""
    own = v["measurements"]["candidate_timing"]["times_ms"]
    ci = v.get("speedup_eager_ci") or [0.0, 0.0]
    return max(v["speedup_eager"] * quartile_ratio(own), ci[1])


def main() -> int:
    verdicts = {}
    for line in open(sys.argv[1]):
        v = json.loads(line)
        verdicts[v["candidate_id"]] = v
    failures, checked = [], 0
    for d in sys.argv[2:]:
        root = pathlib.Path(d)
        for f in sorted(root.rglob("*.py")):
            lines = f.read_text().splitlines()
            first = lines[0] if lines else ""
            if not first.startswith("# expect:"):
                continue
            want = first.split(":", 1)[1].strip()
            bound = None
            if "," in want:
                want, clause = (x.strip() for x in want.split(",", 1))
                bound = clause.split("<=", 1)[1].strip()
            cid = str(f.relative_to(root))
            checked += 1
            if "|" in want and not any(l.startswith(f"# why {want}:") for l in lines):
                failures.append(f"{cid}: expects {want} but says nowhere why (a line '# why {want}: ...')")
                continue
            if bound is not None and bound != "twin":
                failures.append(f"{cid}: speedup bound {bound!r}: only 'twin' ({TWIN} in the same run) is a bound")
                continue
            v = verdicts.get(cid)
            if v is None:
                failures.append(f"{cid}: no verdict")
            elif v["outcome"] not in want.split("|"):
                failures.append(f"{cid}: outcome {v['outcome']}, expected {want}: {v['messages'][:1]}")
            elif bound == "twin" and v["outcome"] == "passed":
                twin = verdicts.get(str(f.parent.relative_to(root) / TWIN))
                if twin is None or twin["outcome"] != "passed":
                    failures.append(f"{cid}: its twin {f.parent.name}/{TWIN} has no passed verdict in this run")
                    continue
                ceiling = twin_ceiling(twin)
                if (v.get("speedup_eager") or 0) > ceiling:
                    failures.append(f"{cid}: speedup {v['speedup_eager']:.3g} vs eager, above its twin's "
                                    f"{ceiling:.3g} (twin's speedup {twin['speedup_eager']:.3g})")
                else:
                    print(f"{cid}: speedup {v['speedup_eager']:.3g} <= twin's ceiling {ceiling:.3g}")
    for f in failures:
        print("FAIL", f)
    print(f"{checked - len(failures)} passed, {len(failures)} failed")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
