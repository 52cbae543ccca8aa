# expect: contract_violation
import torch
import torch.nn as nn

# H16: zeroes its inputs so that a reference run afterwards on the same tensors would agree.
# The reference runs on its own copy after the candidate, and inputs are checksummed (D5).


class ModelNew(nn.Module):
    def forward(self, A, B):
        out = torch.zeros(A.shape[0], B.shape[1])
        A.zero_()
        B.zero_()
        return out
