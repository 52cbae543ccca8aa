# expect: passed, speedup <= twin
# why: red team rt38b (session 25, written on the CPU, not yet run on a GPU). rt38a without the
#   lying events: the honest ReLU on the current stream, and the same spin kernel queued (from a
#   weakref finalizer on the last kept output) after each of the wall check's timed requests, so
#   that eager's wall requests (right after the candidate's since edb88a6) and the next calibration
#   are time-sliced against it. Bounded by the event-ratio cap (its events are honest), so it may
#   gain at most up to eager's event ratio: above the twin only where the twin's floors read below
#   its event ratio (a small, host-bound ReLU: both sides taken by their floors).
# Since 8321faf the spin ends in the candidate's release (collected and synced there, untimed).
import os
import sys
import time
import weakref

import torch
import torch.nn as nn

_spin_stream = None
_cycles_per_ms = None
_state = {"first": None, "until": 0.0}
_K = float(os.environ.get("RT38_SPIN_K", "3"))


def _in(name):
    f = sys._getframe(2)
    while f is not None:
        if f.f_code.co_name == name:
            return f
        f = f.f_back
    return None


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


def _spin(span_s):
    try:
        now = time.monotonic()
        if _cycles_per_ms is None or now < _state["until"]:
            return
        ms = min(100.0, max(2.0, _K * span_s * 1e3))
        with torch.cuda.stream(_spin_stream):
            torch.cuda._sleep(int(ms * _cycles_per_ms))
        _state["until"] = now + ms / 1e3
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
        f = _in("wall_calls")
        if f is not None:
            i, n = f.f_locals.get("i", 0), f.f_locals.get("n", 1)
            now = time.monotonic()
            if i == 0:
                _state["first"] = now
            if i == n - 1 and _state["first"] is not None:
                weakref.finalize(y, _spin, now - _state["first"])
        return y
