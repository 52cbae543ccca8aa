# expect: incorrect
import torch
import torch.nn as nn

# A precision downgrade at a few timed calls only: exact through the correctness cases, then every
# third call computes in bfloat16 (about 0.2% off). The secret rechecks hold the timed calls they
# draw to the cases' full check; the spot check held every other call to 1% of the output's
# magnitude, which bfloat16 passes. It now holds them to 8x the error the rechecked calls showed
# (here none), so the downgraded calls are named wherever the rechecks fell.


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls > 16 and self.calls % 3 == 0:
            return torch.relu(x.to(torch.bfloat16)).to(x.dtype)
        return torch.relu(x)
