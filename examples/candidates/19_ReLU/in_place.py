# expect: contract_violation
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Broken: ReLU in place on the input (mutates and aliases it) -> contract_violation."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.relu_()
