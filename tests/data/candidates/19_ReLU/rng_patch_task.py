# expect: incorrect|contract_violation
# why incorrect|contract_violation: the identity checks of the task module's names catch the swap
#   (contract_violation); where they do not, the timed rechecks on each call's seed find the zeros
#   (incorrect). Never passed.
import sys
import types

import torch
import torch.nn as nn

# Replaces `torch` inside the task module of its own process (torch.randn itself stays, so the
# identity checks see nothing): get_inputs there now yields zeros. The case inputs it regenerates
# from the seed then miss the reference's fingerprint and the reference's bytes are sent instead,
# so the cases pass; its timed inputs are zeros too, and the timed outputs, rechecked against the
# reference on the inputs of each call's seed, are wrong: incorrect, never passed. Since session 10
# the task module's globals are fingerprinted too (integrity.Fingerprints.add_namespace): the
# rebound `torch` is [tamper] at load, contract_violation.
class _Torch(types.ModuleType):
    def __getattr__(self, name):
        return getattr(torch, name)


_fake = _Torch("torch")
_fake.randn = lambda *size, **kw: torch.zeros(*size, **kw)
_fake.rand = lambda *size, **kw: torch.zeros(*size, **kw)
for _name, _mod in list(sys.modules.items()):
    if _name.startswith("kgym_task_") and hasattr(_mod, "get_inputs"):
        _mod.torch = _fake


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
