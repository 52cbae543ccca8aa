import torch
import torch.nn as nn


class Model(nn.Module):
    """Natural log of normal inputs: NaN where an input is negative (about half the elements).
    A reference with NaN in it, for the non-finite comparison rules (tests/integration/test_float64_rule.sh)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log(x)


batch_size = 16
dim = 2048


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
