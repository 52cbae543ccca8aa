# expect: passed
import torch
import torch.nn as nn

with open("scratch.bin", "wb") as f:  # in its work folder: removed after its verdict
    f.write(b"x" * (1 << 20))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.clamp_min(x, 0.0)
