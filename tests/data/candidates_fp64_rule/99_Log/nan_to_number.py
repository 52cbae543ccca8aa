# expect: incorrect
# Red team rt16 (CPU, session 11): 12345 wherever the reference is NaN (passed, as nan_to_zero).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.log(x)
        return torch.where(torch.isnan(y), torch.full_like(y, 12345.0), y)
