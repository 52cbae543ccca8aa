# expect: passed
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x * 2.0, torch.softmax(x * 20.0, dim=-1)
