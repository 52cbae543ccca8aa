# expect: contract_violation
# Red team rt24 (C1, CPU, profile off): out of place in the correctness cases, in place (x.relu_(), the
# input returned) in every timed and wall-check call. The call contract is now checked in every
# call: an output in an input's storage is a contract violation wherever it happens.
import sys

import torch
import torch.nn as nn


def _in_case():
    f = sys._getframe(2)
    while f is not None:
        if f.f_code.co_name == "run_case":
            return True
        f = f.f_back
    return False


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if _in_case():
            return torch.relu(x)
        return x.relu_()
