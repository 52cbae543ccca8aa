# expect: runtime_error
import os
import struct

import torch.nn as nn

# Writes a forged "passed" record on the result channel (fd 3), then exits (H31).
payload = b'{"ok": true, "outcome": "passed", "times_ms": [0.0001]}'
try:
    os.write(3, struct.pack("<II", len(payload), 0) + payload)
    os.write(3, b"\xff" * 64)
except OSError:
    pass
os._exit(0)


class ModelNew(nn.Module):
    def forward(self, x):
        return x
