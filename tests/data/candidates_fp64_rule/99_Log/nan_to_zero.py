# expect: incorrect
# Red team rt16 (CPU, session 11): the log with every NaN replaced by 0. All its wrong elements
# are where the reference is NaN, which the float64 cross-check skips; its error against float64
# (4.4e-7) was within atol, and the rule "an output within atol of float64 is correct" excused
# the 32,593 mismatches: passed.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.log(x).nan_to_num(nan=0.0)
