# expect: passed
import os

import torch
import torch.nn as nn

# Puts a folder with 1 MiB in it where its log was (red team rt19): the folder goes after its
# verdict like every other file of its work folder.
os.unlink("worker.log")
os.makedirs("worker.log/inside")
with open("worker.log/inside/fill.bin", "wb") as f:
    f.write(b"x" * (1 << 20))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.clamp_min(x, 0.0)
