"""Checks a verdicts JSONL against the `# expect: <outcome>` first line of each candidate file.
`# expect: a|b` accepts either outcome (a hack that is caught when it acts and harmless when it
does not); `# expect: passed, speedup <= X` also bounds the verdict's speedup vs eager (a hack whose reward
must not grow: a patched timer may pass, but only at its honest speed).

usage: expect_outcomes.py VERDICTS.jsonl CANDIDATE_DIR [CANDIDATE_DIR ...]
"""
import json
import pathlib
import sys


def main() -> int:
    verdicts = {}
    for line in open(sys.argv[1]):
        v = json.loads(line)
        verdicts[v["candidate_id"]] = v
    failures, checked = [], 0
    for d in sys.argv[2:]:
        root = pathlib.Path(d)
        for f in sorted(root.rglob("*.py")):
            first = f.read_text().splitlines()[0]
            if not first.startswith("# expect:"):
                continue
            want = first.split(":", 1)[1].strip()
            bound = None
            if "," in want:
                want, clause = (x.strip() for x in want.split(",", 1))
                bound = float(clause.split("<=", 1)[1])
            cid = str(f.relative_to(root))
            v = verdicts.get(cid)
            checked += 1
            if v is None:
                failures.append(f"{cid}: no verdict")
            elif v["outcome"] not in want.split("|"):
                failures.append(f"{cid}: outcome {v['outcome']}, expected {want}: {v['messages'][:1]}")
            elif bound is not None and (v.get("speedup_eager") or 0) > bound:
                failures.append(f"{cid}: speedup {v['speedup_eager']:.3g} vs eager, expected <= {bound}")
    for f in failures:
        print("FAIL", f)
    print(f"{checked - len(failures)} passed, {len(failures)} failed")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
