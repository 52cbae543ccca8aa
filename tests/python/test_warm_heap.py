"""heap.warm_heap (CPU timer, docs/timing.md): after it, tensors of the request's size come from
heap memory already faulted in, so a fresh worker's first timed calls pay no page faults."""
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# In a fresh process (this one's heap already holds the other tests' freed memory): keep_heap as
# the workers do, then 8 MiB tensors written after warming (or not) a 64 MiB block.
PROBE = """
import resource, sys, torch
sys.path.insert(0, {python!r})
from kgym_worker import heap
assert heap.keep_heap()
if {warm}:
    assert heap.warm_heap(64 << 20)
f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(4):
    t = torch.empty(8 << 20, dtype=torch.uint8)
    t.fill_(1)
    del t
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
"""


def faults(warm: bool) -> int:
    out = subprocess.run([sys.executable, "-c", PROBE.format(python=str(ROOT / "python"), warm=warm)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's heap (mallopt, sbrk) is Linux's")
def test_a_warmed_heap_gives_the_calls_faulted_memory():
    cold, warm = faults(False), faults(True)
    # 8 MiB is 2048 pages: written into fresh heap, most of them fault once
    assert cold > 1000, cold
    assert warm < 100, warm


def test_warming_twice_writes_once():
    from kgym_worker import heap
    assert heap.keep_heap()
    assert heap.warm_heap(40 << 20)
    first = heap._heap_warmed
    assert heap.warm_heap(36 << 20)  # smaller, heap top unchanged: nothing written again
    assert heap._heap_warmed == first
