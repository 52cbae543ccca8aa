# expect: incorrect
# The ReLU with the 9 low mantissa bits of every output cleared: within the case tolerance at
# every element (relative error below 2^-14, under rtol 1e-4; with 10 bits, 2^-13 is above it, and
# about 4% of input sets had an element outside the tolerance first) but up to twice the precision
# floor's limit (256 eps of float32 times max |ref64|, 2^-15 of it): the float64 cross-check names
# it "computed at reduced precision"
# (test_eval_outcomes.sh asserts that message; the worker's record: test_integrity.py).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        return (y.view(torch.int32) & ~((1 << 9) - 1)).view(torch.float32)
