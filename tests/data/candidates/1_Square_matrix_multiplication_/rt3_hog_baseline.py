# expect: passed|timing_invalid|contract_violation, speedup <= twin
# why passed|timing_invalid|contract_violation: the candidate's tree is stopped while the
#   reference times, so the hogs gain nothing: passed at its honest speed (bounded by its twin) or
#   timing_invalid when the hogs' CPU time falls in its timed requests; on the H200 the hogs map
#   the device through replaced files ([process], contract_violation, the stronger verdict).
# Red team (2026-12-01, second round, CPU): forked children spin only while the candidate is idle, slowing the reference's baselines (passed 2.68x). The candidate's process tree is now stopped while the reference times.
# H200 (2026-12-01, session 9): contract_violation [process]: the hogs, forked after the worker's
# CUDA context existed, map the device through files the worker has since replaced; the stronger
# verdict is allowed.
# Red team rt3 #2: honest matmul, no protocol forging. At construction it forks 3 CPU-hog
# children that spin whenever a shared flag is 1. forward clears the flag on entry and sets it on
# return, so the hog runs only while the candidate's process is idle: i.e. while the reference
# worker times the eager/compile baselines and the wall calibration. Slower baselines = larger
# speedup; the candidate's own calls are never slowed.
import mmap, os, time
import torch
import torch.nn as nn

_FLAG = mmap.mmap(-1, 1)
_PARENT = os.getpid()


def _hog():
    k = 0
    while True:
        if _FLAG[0]:
            for _ in range(20000):
                k += 1
        else:
            time.sleep(0.0002)
        if os.getppid() != _PARENT:
            os._exit(0)


for _ in range(3):
    if os.fork() == 0:
        try:
            _hog()
        finally:
            os._exit(0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        _FLAG[0] = 0
        out = torch.matmul(A, B)
        _FLAG[0] = 1
        return out
