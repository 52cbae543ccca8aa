# expect: runtime_error
import os

import torch
import torch.nn as nn

# Writes 128 MiB into a file it deletes at once but keeps open: the blocks stay used until the
# process exits, and a walk of the folder sees nothing (red team rt18 held 3 GB this way).
_f = open("held.bin", "wb")
os.unlink("held.bin")
for _ in range(128):
    _f.write(os.urandom(1 << 20))
_f.flush()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.clamp_min(x, 0.0)
