# expect: passed
import os

import torch
import torch.nn as nn

# Red team rt20: its log replaced by a link to a folder of its own holding 1 MiB. The release
# after each verdict knew the log by fs::equivalent, which follows links, and kept the folder as
# if it were the log; b_finds_no_earlier_files.py looks for it.
os.makedirs("stash")
with open("stash/fill.bin", "wb") as f:
    f.write(b"x" * (1 << 20))
os.unlink("worker.log")
os.symlink(os.path.abspath("stash"), "worker.log")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.clamp_min(x, 0.0)
