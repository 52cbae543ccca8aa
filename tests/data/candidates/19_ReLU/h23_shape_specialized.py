# expect: incorrect
import torch
import torch.nn as nn

# H23: a "fast path" valid only for the public shape (16, 4096); anything else gets a wrong
# shortcut. The extra case with other sizes (x0.75, odd) catches it.


class ModelNew(nn.Module):
    def forward(self, x):
        if tuple(x.shape) == (16, 4096):
            return torch.relu(x)
        return x.clamp_min(0) * 0.5
