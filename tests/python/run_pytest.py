#!/usr/bin/env python3
"""Runs pytest on tests/python and fails where a skip would hide a test group (CI's check).

usage: run_pytest.py [PYTEST ARGS ...]   (default: tests/python next to this file)

pytest reports "passed" with every test skipped, and ctest shows the whole run as one entry, so a
file that skips all its tests on a machine that could run them (a package install.sh should have
installed, a binary not built) would go unseen. After the run this script
  - fails when no test passed at all;
  - fails when every test of one file (a group) was skipped and a reason does not name what the
    machine lacks on purpose: a GPU / CUDA device, the KernelBench or CUDA-L1 data, a kernel or
    CPU feature (Landlock ABI, x86_64) (ALLOWED below);
  - prints every skip with its reason at the end, as `SKIPPED <nodeid>: <reason>` lines (the
    summary in scripts/test.sh collects them).
Exit status: pytest's own when it failed, 1 when a check above failed, else 0.
"""
import re
import sys
from collections import defaultdict
from pathlib import Path

import pytest

# Reasons that may skip a whole group on CI's CPU machine: hardware or data CI does not have.
ALLOWED = re.compile(r"GPU|CUDA|KernelBench|CUDA-L1|Landlock|x86_64", re.I)


class Collector:
    """Collects each test's outcome and skip reason, per file (pytest hook implementations)."""

    def __init__(self):
        self.by_file = defaultdict(lambda: {"passed": 0, "failed": 0, "skipped": []})

    @staticmethod
    def _reason(report) -> str:
        lr = report.longrepr
        if isinstance(lr, tuple) and len(lr) == 3:
            return str(lr[2]).removeprefix("Skipped: ")
        return str(lr)

    def pytest_runtest_logreport(self, report):
        f = self.by_file[report.nodeid.split("::")[0]]
        if report.skipped:
            if report.when != "teardown":
                f["skipped"].append((report.nodeid, self._reason(report)))
        elif report.failed:
            f["failed"] += 1
        elif report.when == "call" and report.passed:
            f["passed"] += 1

    def pytest_collectreport(self, report):
        if report.skipped:  # a module-level skip (pytest.importorskip, pytestmark at import)
            self.by_file[report.nodeid.split("::")[0]]["skipped"].append((report.nodeid, self._reason(report)))


def main() -> int:
    args = sys.argv[1:] or [str(Path(__file__).resolve().parent)]
    c = Collector()
    rc = pytest.main(["-q", "-rs", *args], plugins=[c])
    problems = []
    total_passed = sum(f["passed"] for f in c.by_file.values())
    if total_passed == 0:
        problems.append("no Python test passed (none collected, or all skipped)")
    for name, f in sorted(c.by_file.items()):
        if f["skipped"] and f["passed"] == 0 and f["failed"] == 0:
            bad = [(n, r) for n, r in f["skipped"] if not ALLOWED.search(r)]
            if bad:
                problems.append(f"every test of {name} was skipped, and not for a missing GPU, data or kernel "
                                f"feature: {bad[0][1]!r} (install what it needs: scripts/install.sh)")
    print("\n-- skipped Python tests (reasons) --")
    for name, f in sorted(c.by_file.items()):
        for nodeid, reason in f["skipped"]:
            print(f"SKIPPED {nodeid}: {reason}")
    for p in problems:
        print("FAIL:", p)
    if rc not in (0, pytest.ExitCode.OK):
        return int(rc)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
