# expect: passed, speedup <= twin
# why: red team rt38c (session 25, written on the CPU, not yet run on a GPU): the exposure the main
#   timing rounds had before edb88a6 (not new; a control for rt38a/b). The honest ReLU; the output
#   of every timed call gets a weakref finalizer, and the one that runs after the timing loop has
#   returned (the last call's output, dropped with time_calls' frame, after its last device-wide
#   sync) queues a one-thread spin kernel (torch.cuda._sleep, RT38_ROUND_SPIN_MS, default 150 ms)
#   in the worker's own context. The reply, the rechecks and the release follow; the candidate is
#   stopped and eager's round is timed while the spin still runs: eager's event windows are
#   time-sliced against it, so eager's event time (not a floor: the event-ratio cap is then the
#   inflated ratio) grows. docs/timing.md assumes GPU work queued before the pause is seen by the
#   candidate's own trace; the trace is another phase, where this candidate queues nothing.
# Since 8321faf the spin ends in the candidate's release (synced there, untimed) and the reference
#   waits for a quiet device before each baseline round.
import os
import sys
import time
import weakref

import torch
import torch.nn as nn

_spin_stream = None
_cycles_per_ms = None
_until = [0.0]
_MS = float(os.environ.get("RT38_ROUND_SPIN_MS", "150"))


def _on_stack(name, depth):
    f = sys._getframe(depth)
    while f is not None:
        if f.f_code.co_name == name:
            return True
        f = f.f_back
    return False


def _calibrate():
    global _cycles_per_ms, _spin_stream
    _spin_stream = torch.cuda.Stream()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(_spin_stream):
        torch.cuda._sleep(1000)
        a.record()
        torch.cuda._sleep(2_000_000)
        b.record()
    b.synchronize()
    _cycles_per_ms = 2_000_000 / max(a.elapsed_time(b), 1e-3)


def _spin():
    try:
        if _on_stack("time_calls", 1):  # dropped inside the loop: the next call's sync would wait
            return
        now = time.monotonic()
        if _cycles_per_ms is None or now < _until[0]:
            return
        with torch.cuda.stream(_spin_stream):
            torch.cuda._sleep(int(_MS * _cycles_per_ms))
        _until[0] = now + _MS / 1e3
    except Exception:
        pass


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        if not x.is_cuda:
            return y
        if _spin_stream is None:
            try:
                _calibrate()
            except Exception:
                pass
        if _on_stack("time_calls", 1):
            weakref.finalize(y, _spin)
        return y
