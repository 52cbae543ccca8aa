# expect: runtime_error
import os

import torch
import torch.nn as nn

# 128 MiB below 30 nested folders of 200-character names (about 6000 characters of path, past
# PATH_MAX), made with dir_fd: a walk by path names got ENAMETOOLONG and counted nothing
# (red team rt18: 2.5 GB in the build cache, verdict passed).
_fd = os.open(os.environ["TORCH_EXTENSIONS_DIR"] if os.path.isdir(os.environ["TORCH_EXTENSIONS_DIR"]) else ".", os.O_RDONLY)
for _ in range(30):
    os.mkdir("d" * 200, dir_fd=_fd)
    _child = os.open("d" * 200, os.O_RDONLY, dir_fd=_fd)
    os.close(_fd)
    _fd = _child
_out = os.open("payload", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=_fd)
for _ in range(128):
    os.write(_out, os.urandom(1 << 20))
os.close(_out)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.clamp_min(x, 0.0)
