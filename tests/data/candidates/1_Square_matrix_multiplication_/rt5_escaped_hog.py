# expect: passed|timing_invalid, speedup <= twin
# why passed|timing_invalid: the pause stops every process below the zygote, so the hogs gain
#   nothing: passed at its honest speed (bounded by its twin), or timing_invalid when the hogs'
#   CPU time falls in the timed wall-clock requests.
# Fixed the same day: the pause stops every process below the zygote (a child subreaper: escaped
# children come back under it) except the reference worker (engine.cpp, pausable_processes).
# Red team rt5 (CPU, 2026-12-01): honest matmul; hog processes escape PausedTree by a double fork
# + setsid (re-parented to the zygote, own session and process group, so neither below the
# candidate nor in its group). They spin only while the candidate's tree is stopped (a heartbeat
# child that stays in the tree stops with it) and only in a pause that follows timed calls, i.e.
# while the reference times the eager/compile baselines (not its wall calibration, which would
# make the floor inconclusive). The baselines run on a CPU shared with the hogs.
import mmap, os, struct, sys, time
import torch
import torch.nn as nn

_SHM = mmap.mmap(-1, 16)  # [0:8] heartbeat counter, [8] armed (timed calls since the last pause)
_CAND = os.getpid()
NHOGS = 5


def _alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _heartbeat():
    k, last = 0, time.monotonic()
    while True:
        k += 1
        now = time.monotonic()
        if now - last > 0.008:  # we were stopped: that pause is over
            _SHM[8] = 0
        last = now
        _SHM[0:8] = struct.pack("<Q", k)
        time.sleep(0.0005)
        if k % 200 == 0 and not _alive(_CAND):
            os._exit(0)


def _hog():
    last, seen = None, time.monotonic()
    x = 0
    while True:
        hb = _SHM[0:8]
        now = time.monotonic()
        if hb != last:
            last, seen = hb, now
        if now - seen > 0.003 and _SHM[8]:  # heartbeat stalled: the candidate's tree is stopped
            for _ in range(3000):
                x += 1
        else:
            time.sleep(0.001)
            if not _alive(_CAND):
                os._exit(0)


if os.fork() == 0:
    try:
        _heartbeat()
    finally:
        os._exit(0)

for _ in range(NHOGS):
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            if os.fork() == 0:
                _hog()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def _in_timed_loop():
    f = sys._getframe(2)
    while f is not None:
        if f.f_code.co_name == "time_calls":
            return True
        f = f.f_back
    return False


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        if _in_timed_loop():
            _SHM[8] = 1
        blocks = [A[i:i + 64] @ B for i in range(0, A.shape[0], 64)]
        return torch.cat(blocks, dim=0)
