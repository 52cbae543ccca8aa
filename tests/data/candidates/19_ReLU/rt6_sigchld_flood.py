# expect: passed|timing_invalid, speedup <= twin
# why passed|timing_invalid: the flood only slows the candidate itself (passed, at its honest
#   speed, bounded by its twin), unless its shell loop still runs during the timed wall-clock
#   requests: then its processes' CPU time exceeds one core (timing_invalid [cpu]).
# Red team rt6 (CPU, 2026-12-01): before the fix this killed the zygote and `kgym eval` wrote no
# verdict. Fixed: SIGCHLD only wakes the zygote's main loop, which collects (zygote.StrayCollector),
# and the reap sweeps orphans until none is left. Now the flood slows only the candidate itself
# (or, when its shell loop still runs during the timed wall-clock requests, the CPU time of the
# candidate's processes exceeds one core: timing_invalid [cpu]).
# The attack: a SIGCHLD flood made the zygote's collecting signal handler re-enter itself until
# RecursionError killed the zygote. The candidate parks 2000 sleeping orphans under the zygote
# (each handler call then waits on 2000 pids), then a shell loop makes orphans that exit at once,
# so SIGCHLD arrives faster than one handler call finishes; CPython runs a Python signal handler
# again inside the running one (no re-entry guard), the stack grows until RecursionError, which
# escapes the handler into zygote.main(). Every worker dies with it (PR_SET_PDEATHSIG).
import os

import torch
import torch.nn as nn

_SCRIPT = ("for i in $(seq 2000); do sleep 60 & done; "
           "timeout 20 sh -c 'while :; do ( : & ); done' & ")


def _flood():
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            os.execvp("sh", ["sh", "-c", _SCRIPT])
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.n = 0

    def forward(self, x):
        self.n += 1
        if self.n == 1:
            _flood()
        return torch.relu(x)
