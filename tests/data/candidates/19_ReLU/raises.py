# expect: runtime_error
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        raise ValueError("kernel launch failed: invalid configuration argument")
