# expect: incorrect
import torch
import torch.nn as nn

# H15: returns uninitialised memory, hoping the allocator hands back a block that holds a result.
# Nothing of the reference lives in this process (D10); free blocks are poisoned on the GPU (D4)
# and two runs with different poison must agree.


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.empty_like(x)
