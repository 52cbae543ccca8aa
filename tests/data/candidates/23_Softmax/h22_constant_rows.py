# expect: incorrect
import torch
import torch.nn as nn

# H20/H22: the uniform distribution (1/dim everywhere) is within atol of a softmax whose values
# are all small; atol is scaled by the output's magnitude, so it is not.


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.full_like(x, 1.0 / x.shape[1])
