# expect: incorrect
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """A trivial answer: zeros have the right shape and are half right for ReLU."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.zeros_like(x)
