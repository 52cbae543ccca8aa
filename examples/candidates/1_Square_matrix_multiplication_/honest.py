# expect: passed
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Honest: matrix product as a sum of row-block products."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        blocks = [A[i:i + 64] @ B for i in range(0, A.shape[0], 64)]
        return torch.cat(blocks, dim=0)
