#!/usr/bin/env python3
"""After ctest (scripts/test.sh): fails a run that tested nothing, and prints every skip's reason.

usage: ci_summary.py JUNIT.xml LABELS.json
  JUNIT.xml    ctest --output-junit's file
  LABELS.json  ctest --show-only=json-v1's output (each test's labels)

A skipped ctest entry exits 77 and is not a failure, so a run could be green with nothing run. This
script fails (exit 1)
  - when no test passed;
  - when every test of one label (unit, integration, python, gpu) was skipped and a reason does not
    name what CI's machine lacks on purpose (ALLOWED: a GPU / CUDA device, the KernelBench or
    CUDA-L1 data, a kernel or CPU feature);
  - when an integration script (each one is its own group of checks) was skipped for another reason.
It prints, last, each skipped entry with its reason (an integration script's last output line, and
the `SKIPPED` lines tests/python/run_pytest.py writes for the Python tests).
"""
import json
import re
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict

ALLOWED = re.compile(r"GPU|CUDA|KernelBench|CUDA-L1|Landlock|x86_64", re.I)


def main() -> int:
    junit, labels_json = sys.argv[1], sys.argv[2]
    labels = {t["name"]: next((p["value"] for p in t.get("properties", []) if p["name"] == "LABELS"), [])
              for t in json.load(open(labels_json)).get("tests", [])}
    runs = []  # (name, status, output)
    for case in ET.parse(junit).getroot().iter("testcase"):
        out = case.findtext("system-out") or ""
        if case.find("failure") is not None or case.get("status") == "fail":
            status = "failed"
        elif case.find("skipped") is not None or case.get("status") in ("notrun", "disabled"):
            status = "skipped"
        else:
            status = "passed"
        runs.append((case.get("name"), status, out))
    problems, skips = [], []
    by_label = defaultdict(list)
    for name, status, out in runs:
        for label in labels.get(name) or ["(no label)"]:
            by_label[label].append((name, status, out))
        if status == "skipped":
            lines = [l for l in out.splitlines() if l.strip()]
            reason = lines[-1].strip() if lines else "(no reason printed)"
            skips.append((name, reason))
            if name.startswith("integration.") and not ALLOWED.search(reason):
                problems.append(f"{name} was skipped, and not for a missing GPU, data or kernel feature: {reason!r}")
        if name == "python.pytest":
            skips += [("python", l.removeprefix("SKIPPED ").strip()) for l in out.splitlines()
                      if l.startswith("SKIPPED ") and not l.startswith("SKIPPED [")]
    if not any(s == "passed" for _, s, _ in runs):
        problems.append(f"no test passed ({len(runs)} registered): a build without tests, or all skipped")
    for label, tests in sorted(by_label.items()):
        if all(s == "skipped" for _, s, _ in tests):
            reasons = [r for n, r in skips if n in {t[0] for t in tests}]
            if not reasons or not all(ALLOWED.search(r) for r in reasons):
                problems.append(f"every test labelled {label} was skipped: {reasons[:3]}")
    print(f"\n== {sum(s == 'passed' for _, s, _ in runs)} passed, {sum(s == 'failed' for _, s, _ in runs)} failed, "
          f"{sum(s == 'skipped' for _, s, _ in runs)} skipped ctest entries; skip reasons:")
    for name, reason in skips:
        print(f"  skipped {name}: {reason}")
    if not skips:
        print("  (none)")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
