import torch
import torch.nn as nn


class Model(nn.Module):
    """Layer normalization with learned affine parameters (KernelBench level 1 task 40, small)."""

    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


batch_size = 8
features = 32
dim1 = 32


def get_inputs():
    x = torch.randn(batch_size, features, dim1)
    return [x]


def get_init_inputs():
    return [(features, dim1)]
