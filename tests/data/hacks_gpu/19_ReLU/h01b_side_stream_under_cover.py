# expect: passed, speedup <= twin
import torch
import torch.nn as nn

# H01, second form (2026-11-30, after the launch cover): the work goes to a side stream that does
# NOT wait for the current stream, so it can run while the harness's launch-cover spin kernel
# holds the current stream, before the start event: the event window sees almost nothing. The
# supervisor's back-to-back wall clock still holds the work, so the runtime is floored at it and
# the speedup stays that of eager ReLU on a side stream (about 1x), never a fake one.
_side = None


class ModelNew(nn.Module):
    def forward(self, x):
        global _side
        if _side is None:
            _side = torch.cuda.Stream()
        with torch.cuda.stream(_side):
            y = torch.relu(x)
        return y
