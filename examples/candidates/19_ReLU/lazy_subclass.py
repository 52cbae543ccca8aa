# expect: contract_violation
import torch
import torch.nn as nn


class Deferred(torch.Tensor):
    """A tensor subclass that pretends to be the result (the CUDA-L1 task 9 trick)."""


class ModelNew(nn.Module):
    """Hack: returns a torch.Tensor subclass instead of a plain tensor -> contract_violation."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp_min(x, 0.0).as_subclass(Deferred)
