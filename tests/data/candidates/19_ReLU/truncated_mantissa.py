# expect: incorrect
# The ReLU with the 10 low mantissa bits of every output cleared: within the case tolerance
# (relative error below 2^-13) but about twice the precision floor's limit (256 eps of float32
# times max |ref64|): the float64 cross-check names it "computed at reduced precision"
# (test_eval_outcomes.sh asserts that message; the worker's record: test_integrity.py).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        return (y.view(torch.int32) & ~((1 << 10) - 1)).view(torch.float32)
