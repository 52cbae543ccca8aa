# expect: runtime_error
import os

import torch.nn as nn

os._exit(0)  # leaves before any check runs (the H31 early exit)


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp_min(0)
