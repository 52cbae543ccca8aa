# expect: build_failed
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Broken: does not parse -> build_failed."""

    def __init__(self, normalized_shape: tuple)
        super().__init__()

    def forward(self, x):
        return x
