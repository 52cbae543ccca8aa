# expect: incorrect
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Precision downgrade: multiplies in bfloat16 and casts back -> incorrect at fp32 tolerance."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return (A.bfloat16() @ B.bfloat16()).float()
