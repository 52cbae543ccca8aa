# expect: policy_rejected
import torch
import torch.nn as nn


class LayerNormKernel(nn.Module):
    """Broken: the class is not called ModelNew -> policy_rejected."""

    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, x):
        return self.ln(x)
