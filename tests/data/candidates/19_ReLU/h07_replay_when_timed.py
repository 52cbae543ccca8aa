# expect: incorrect
import torch
import torch.nn as nn

# H07 (output replay cache): honest while the correctness cases run, then, once the call count
# says "this is the timed loop", returns the output it stored instead of computing. Against fresh
# inputs per timed call and the recheck of a secret subset of timed outputs (D2, D3) the stale
# output is wrong.
_memo = {}


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        key = tuple(x.shape)
        if self.calls > 14 and key in _memo:
            return _memo[key]
        out = torch.relu(x)
        _memo[key] = out
        return out
