# expect: incorrect
import torch
import torch.nn as nn

# H15 on the GPU: torch.empty_like hoping the caching allocator returns a block that still holds
# a result. Free blocks are poisoned (0xFF = NaN, then 0x7F) before each run (D4).


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.empty_like(x)
