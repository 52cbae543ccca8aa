# expect: passed, speedup <= 1.5
# Session 16 floor diagnostic: eager's very operator, plus a forked child that spins on the CPU
# for the worker's life (no signals, no shared state): does a busy sibling core change the
# candidate's wall-clock floor?
import os

import torch
import torch.nn as nn

_me = os.getpid()
if os.fork() == 0:
    try:
        n = 0
        while True:
            n += 1
            if n % 1000000 == 0 and os.getppid() != _me:
                break
    finally:
        os._exit(0)


class ModelNew(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)
