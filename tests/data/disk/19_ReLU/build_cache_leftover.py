# expect: passed
import os

import torch
import torch.nn as nn

# Within its quota, but leaves 40 MiB in the content-addressed build folder, which outlives the
# run: red team rt18 grew the cache by 95 MiB per source this way (sources differing by a
# comment). A build folder larger than KGYM_BUILD_KEEP_MB is removed after its verdict.
_dir = os.environ["TORCH_EXTENSIONS_DIR"]
os.makedirs(_dir, exist_ok=True)
with open(os.path.join(_dir, "leftover.bin"), "wb") as f:
    for _ in range(40):
        f.write(os.urandom(1 << 20))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.clamp_min(x, 0.0)
