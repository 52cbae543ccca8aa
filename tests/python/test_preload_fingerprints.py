"""The zygote's preload must leave nothing for a later torch.profiler session (the kernel trace,
the profiler warm-up) to replace: else the harness fingerprints taken at executor start read the
replacement as candidate tampering (H200, 2026-11-30: torch.manual_seed)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHILD = r"""
import sys
sys.path.insert(0, sys.argv[1])
from kgym_worker import zygote
if sys.argv[2] == "preload":
    zygote.preload()
from kgym_worker import candidate, integrity
fp = candidate._harness_fingerprints()
integrity.warm_profiler("cpu")
print("CHANGED", fp.changed())
"""


def _changed(mode):
    p = subprocess.run([sys.executable, "-c", CHILD, os.path.join(ROOT, "python"), mode],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    line = [x for x in p.stdout.splitlines() if x.startswith("CHANGED")][-1]
    return line


def test_profiler_session_after_preload_changes_no_harness_function():
    assert _changed("preload") == "CHANGED []"


def test_without_preload_the_profiler_replaces_manual_seed():
    # The kind this guards against, shown: without the preload the same session is flagged.
    assert "manual_seed" in _changed("none")
