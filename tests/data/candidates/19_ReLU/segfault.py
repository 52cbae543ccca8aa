# expect: runtime_error
import os
import signal

import torch.nn as nn


class ModelNew(nn.Module):
    """Crashes its process (as an illegal memory access in native code would)."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        os.kill(os.getpid(), signal.SIGSEGV)
