# expect: passed
# The honest twin of this folder's timing hacks: the ReLU computed as eager computes it. The hacks
# bounded by `speedup <= twin` may pass only at a speed this verdict, in the same run, allows
# (tests/integration/expect_outcomes.py).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
