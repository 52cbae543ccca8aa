# expect: runtime_error
import os

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Right answer, but fills the disk below its work folder (1 MiB files until 256 MiB; red team
    rt17's kind: every later verdict would find the disk full). kgym stops it at its quota."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        os.makedirs("fill", exist_ok=True)
        chunk = os.urandom(1 << 20)
        for i in range(256):
            with open(os.path.join("fill", f"{i}.bin"), "wb") as f:
                f.write(chunk)
        return torch.clamp_min(x, 0.0)
