# expect: contract_violation
import time

import torch
import torch.nn as nn

# H04: rebinds the timers at import (CPU and GPU clocks). The identity checks of the harness and
# of the torch/time functions it uses (D13) see it after import: [tamper].
_orig = time.perf_counter_ns
time.perf_counter_ns = lambda: _orig() // 100
torch.cuda.Event.elapsed_time = lambda self, end: 1e-3


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
