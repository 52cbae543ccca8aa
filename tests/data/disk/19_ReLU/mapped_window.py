# expect: runtime_error
import mmap
import os

import torch
import torch.nn as nn

# Writes 128 MiB, keeps one page of it mapped and deletes the file: the blocks stay used until
# the mapping goes. Red team rt19: counted by the length mapped, this was 4 KiB.
with open("window.bin", "wb") as f:
    for _ in range(128):
        f.write(os.urandom(1 << 20))
with open("window.bin", "rb") as f:
    _window = mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ)
os.unlink("window.bin")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.clamp_min(x, 0.0)
