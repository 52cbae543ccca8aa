# expect: incorrect
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Broken: leaky instead of plain ReLU (wrong values on negative inputs) -> incorrect."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.where(x > 0, x, 0.01 * x)
