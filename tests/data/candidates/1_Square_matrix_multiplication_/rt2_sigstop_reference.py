# expect: passed, speedup <= twin
# Red team (2026-12-01, helper on CPU): a forked child SIGSTOPs the reference worker while the baselines are timed (passed 2.51x). Landlock signal scoping now denies it.
# Red team: honest output, inflated baseline. At import the candidate forks a child (no thread:
# the census counts threads, not processes). The child throttles every sibling worker (children of
# the zygote: the trusted reference worker) with SIGSTOP/SIGCONT. The eager baseline, timed in the
# reference worker, is slowed ~3x; the candidate's own timing (its own process) is untouched.
import os
import time

import torch
import torch.nn as nn


def _siblings(me, parent):
    out = []
    for e in os.listdir("/proc"):
        if not e.isdigit() or int(e) in (me,):
            continue
        try:
            with open(f"/proc/{e}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        if ppid == parent:
            out.append(int(e))
    return out


_me, _parent = os.getpid(), os.getppid()
if os.fork() == 0:
    try:
        while True:
            victims = _siblings(_me, _parent)
            for _ in range(50):
                for p in victims:
                    try:
                        os.kill(p, 19)  # SIGSTOP
                    except OSError:
                        pass
                time.sleep(0.004)
                for p in victims:
                    try:
                        os.kill(p, 18)  # SIGCONT
                    except OSError:
                        pass
                time.sleep(0.002)
            if os.getppid() != _me:
                break
    finally:
        os._exit(0)


class ModelNew(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)
