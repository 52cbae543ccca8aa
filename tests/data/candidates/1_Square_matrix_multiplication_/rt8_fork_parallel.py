# expect: timing_invalid|passed, speedup <= twin
# why timing_invalid|passed: at --scale 4 its helper's CPU time during the timed wall-clock
#   requests exceeds one core (timing_invalid [cpu], asserted by test_baseline_interference.sh);
#   at the suite's default size the split gains nothing and it passes at its honest speed (bounded
#   by its twin).
# Session 6 (2026-12-01): a helper process forked at import computes the bottom half of each
# matmul in shared memory while the worker computes the top half: two cores against the baselines'
# one (the thread census sees only the worker's Python threads, the thread-pool sizes are checked
# flags). On the 2-core CPU machine at --scale 4: 1.2x against an honest 0.835x. Caught: the CPU
# time of all the candidate's processes during the timed wall-clock requests may not exceed the
# baselines' cores x wall clock x 1.1 + 20 ms ([cpu], timing_invalid). At the suite's default size
# the split gains nothing (IPC and copies), hence `passed` there; test_baseline_interference.sh
# runs it at --scale 4 and asserts timing_invalid.
import mmap
import os
import struct

import torch
import torch.nn as nn

_MAX = 2048 * 2048
_mem = mmap.mmap(-1, 3 * _MAX * 4)  # MAP_SHARED | MAP_ANONYMOUS: shared with the fork
_all = torch.frombuffer(_mem, dtype=torch.float32)
_cmd_r, _cmd_w = os.pipe()
_done_r, _done_w = os.pipe()


def _views(n):
    a = _all[: n * n].view(n, n)
    b = _all[_MAX: _MAX + n * n].view(n, n)
    c = _all[2 * _MAX: 2 * _MAX + n * n].view(n, n)
    return a, b, c


if os.fork() == 0:
    torch.set_num_threads(1)
    while True:
        msg = os.read(_cmd_r, 4)
        if len(msg) < 4:
            os._exit(0)
        (n,) = struct.unpack("<i", msg)
        a, b, c = _views(n)
        h = n // 2
        torch.matmul(a[h:], b, out=c[h:])
        os.write(_done_w, b"k")


class ModelNew(nn.Module):
    def forward(self, A, B):
        n = A.shape[0]
        if n * n > _MAX or A.shape != B.shape or A.dtype != torch.float32 or A.device.type != "cpu":
            return A @ B
        a, b, c = _views(n)
        a.copy_(A)
        b.copy_(B)
        os.write(_cmd_w, struct.pack("<i", n))
        h = n // 2
        out = torch.empty(n, n)
        torch.matmul(a[:h], b, out=out[:h])
        os.read(_done_r, 1)
        out[h:].copy_(c[h:])
        return out
