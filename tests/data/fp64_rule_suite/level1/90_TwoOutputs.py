import torch
import torch.nn as nn


class Model(nn.Module):
    """Two outputs of different magnitudes: a value (2x) and a peaked softmax (weights), as an
    attention block returns them. Each output has its own scaled tolerance
    (tests/integration/test_float64_rule.sh)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor):
        return x * 2.0, torch.softmax(x * 20.0, dim=-1)


batch_size = 16
dim = 4096


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
