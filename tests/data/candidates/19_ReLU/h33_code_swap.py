# expect: contract_violation
import sys

import torch
import torch.nn as nn

# H33, code-object variant: keeps the function object, swaps its __code__ (an identity check
# alone misses this; the bytecode hash does not).


def _fast(fn, args, n, device):
    return None


for name, mod in list(sys.modules.items()):
    if name.startswith("kgym_worker.") and hasattr(mod, "wall_calls"):
        mod.wall_calls.__code__ = _fast.__code__


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
