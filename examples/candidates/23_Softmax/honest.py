# expect: passed
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Honest: numerically stable softmax written out."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e = torch.exp(x - x.amax(dim=1, keepdim=True))
        return e / e.sum(dim=1, keepdim=True)
