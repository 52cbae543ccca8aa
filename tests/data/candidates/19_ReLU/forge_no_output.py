# expect: runtime_error|timeout
# why runtime_error|timeout: a case reply without an output is a protocol error (runtime_error);
#   when the requests carry input bytes, the desynchronised channel can stall with both sides
#   writing and the candidate is killed (timeout). Neither gives a reward.
import json
import os
import struct

import torch
import torch.nn as nn


def _frame(header: dict) -> bytes:
    data = json.dumps(header).encode()
    return struct.pack("<II", len(data), 0) + data


class ModelNew(nn.Module):
    """Writes a forged "case done" reply straight onto the result channel (fd 3, as C++ code
    could) with no output in it: a case without an output to compare must never pass (that case
    is a ProtocolError: runtime_error; when the requests carry input bytes, the desynchronised
    channel can also stall, both sides writing, and the candidate is killed: timeout)."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        try:
            os.write(3, _frame({"ok": True, "call_ms": 0.001, "inputs_unchanged": True}))
        except OSError:
            pass
        return torch.zeros_like(x)
