# expect: passed, speedup <= 1.5
# Session 16 floor diagnostic: eager's very operator, plus a forked child that only sleeps.
import os
import time

import torch
import torch.nn as nn

_me = os.getpid()
if os.fork() == 0:
    try:
        while os.getppid() == _me:
            time.sleep(0.5)
    finally:
        os._exit(0)


class ModelNew(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)
