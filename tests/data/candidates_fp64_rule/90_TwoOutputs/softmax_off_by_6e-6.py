# expect: incorrect
# Red team rt17 (CPU, session 11): every softmax weight off by +6e-6 (rows sum to 1.025): all of
# the second output's elements are outside its own tolerance (atol 1e-4 x RMS, about 1.6e-6).
# The float64 rule compared the worst output's float64 error with the first output's atol
# (1e-4 x RMS(2x) = 2e-4) and excused them: passed. The precision floor (64 eps max|ref64|,
# 7.6e-6) lets 6e-6 through too.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x * 2.0, torch.softmax(x * 20.0, dim=-1) + 6e-6
