# expect: passed
import os
import time

import torch
import torch.nn as nn

if os.fork() == 0:  # double fork + setsid: leaves the candidate's process group
    os.setsid()
    if os.fork() == 0:
        import ctypes
        ctypes.CDLL(None).prctl(15, b"kgymtestdaemon", 0, 0, 0)  # PR_SET_NAME: findable by pgrep
        while True:
            time.sleep(0.2)  # kgym-sandbox-test-daemon
    os._exit(0)


class ModelNew(nn.Module):
    """Honest output, but leaves a daemon behind; the zygote (a child subreaper) must kill it."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.clamp_min(x, 0.0)
