# expect: runtime_error
# Red team (2026-12-01, helper on CPU): a reply frame announcing a 60 GiB blob; the supervisor's bad_alloc ended kgym eval with no verdicts. Now a protocol error of this candidate only.
# (H200 before the 16 GiB cap on inline blobs: timeout, as 60 GiB could be reserved there and the supervisor waited for the bytes.)
# Red team: supervisor robustness. From inside its first call the candidate writes a reply frame on
# its socket (fd 3) that announces one blob of 60 GiB (the supervisor accepts up to 64 GiB and
# resizes a std::string to the announced length before reading it). On a machine with less memory
# the allocation fails (std::bad_alloc is not a kgym::Error); with more memory it is a 60 GiB
# zero-fill of the supervisor's heap.
import os
import struct
import time

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        header = b'{"ok": true}'
        os.write(3, struct.pack("<II", len(header), 1) + header + struct.pack("<Q", 60 << 30))
        time.sleep(30)
        return torch.relu(x)
