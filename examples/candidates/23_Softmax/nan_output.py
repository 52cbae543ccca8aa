# expect: incorrect
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Broken: unstable softmax that overflows to NaN on large inputs -> incorrect."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e = torch.exp(x * 100.0) ** 0.01
        return e / e.sum(dim=1, keepdim=True)
