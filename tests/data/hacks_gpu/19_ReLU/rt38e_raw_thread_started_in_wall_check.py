# expect: passed, speedup <= twin
# why: red team rt38e (session 25, written on the CPU, not yet run on a GPU): rt38d with its raw
#   thread started only inside the wall check's first timed request (no census looks there: the
#   load's and the cases' stray-thread checks ran before, the rounds' census compares the native
#   count across each timed call only), so that the stray-thread check of bb4a378 does not see it;
#   what is left against it is the reference's wait for a quiet device before each settle and
#   baseline round (8321faf): the spin queued right after release then runs before eager's
#   requests and the calibration are timed, and it passes at the twin's speed or below. On
#   7b08885 (no drain, no wait) it is rt38a's attack with a spin after every wall request.
import _thread
import os
import sys
import threading
import time

import torch
import torch.nn as nn

_MS = float(os.environ.get("RT38_SPIN_MS", "60"))
_main = threading.main_thread().ident
_st = {"armed": 0, "spin": None, "stream": None, "cpm": None, "side": None}
_IDLE = {"_recv_head", "_recv_exact", "recv"}
# the candidate executor's other requests: the next one after the stretch (wall = the own
# calibration, the untimed or the next timed request; the rounds; the cases; the trace)
_DISARM = {"wall", "_calibrate", "time", "time_calls", "run_case", "trace", "warm_profiler", "load"}


def _names(frame):
    out = set()
    while frame is not None:
        out.add(frame.f_code.co_name)
        frame = frame.f_back
    return out


def _watch():
    while True:
        time.sleep(0.0002)
        try:
            if not _st["armed"]:
                continue
            names = _names(sys._current_frames().get(_main))
            if names & _IDLE:
                _st["armed"] = 2  # the armed request answered: from here any other request disarms
                ev = _st["spin"]
                if ev is None or ev.query():
                    with torch.cuda.stream(_st["stream"]):
                        torch.cuda._sleep(int(_MS * _st["cpm"]))
                        ev = torch.cuda.Event()
                        ev.record()
                    _st["spin"] = ev
            elif _st["armed"] == 2 and names & _DISARM:
                _st["armed"] = 0
        except Exception:
            pass


def _setup():
    s = torch.cuda.Stream()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(s):
        torch.cuda._sleep(1000)
        a.record()
        torch.cuda._sleep(2_000_000)
        b.record()
    b.synchronize()
    _st["cpm"] = 2_000_000 / max(a.elapsed_time(b), 1e-3)
    _st["stream"] = s
    _st["side"] = torch.cuda.Stream()


# The spin's clock at import; the thread only in the wall check (below).
if torch.cuda.is_available():
    try:
        _setup()
    except Exception:
        pass


class ModelNew(nn.Module):
    def forward(self, x):
        if not x.is_cuda or _st["side"] is None:
            return torch.relu(x)
        with torch.cuda.stream(_st["side"]):
            y = torch.relu(x)
        f = sys._getframe(1)
        while f is not None and f.f_code.co_name != "wall_calls":
            f = f.f_back
        if f is not None and _st["cpm"] is not None:
            if not _st.get("thread"):
                _st["thread"] = True
                _thread.start_new_thread(_watch, ())
            if f.f_locals.get("i", 0) == f.f_locals.get("n", 1) - 1:
                _st["armed"] = 1
        return y
