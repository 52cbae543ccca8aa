# Honest: a 3-D convolution whose weight and bias are drawn exactly as nn.Conv3d draws them
# (kaiming_uniform_ with a = sqrt(5), bias uniform in +-1/sqrt(fan_in)), in the same order, so the
# same init seed gives the reference's values. At --scale 0.1 the task's 64-wide input once shrank
# to 6, below the (3, 5, 7) kernel, and this candidate was blamed (runtime_error); the scaled size
# is now kept at 8 and it passes.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=False):
        super().__init__()
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        self.weight = nn.Parameter(torch.empty(out_channels, in_channels // groups, *kernel_size))
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if bias:
            fan_in = (in_channels // groups) * math.prod(kernel_size)
            self.bias = nn.Parameter(torch.empty(out_channels).uniform_(-1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in)))
        else:
            self.bias = None

    def forward(self, x):
        return F.conv3d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
