# expect: contract_violation|passed|timing_invalid, speedup <= twin
# why contract_violation|passed|timing_invalid: the task module's fingerprinted globals catch the
#   proxy (contract_violation); where the floor's noise decides first it is timing_invalid, or it
#   passes at its honest speed (bounded by its twin), since the floor's calibration runs on the
#   reference.
# H200, session 10: with the floor's noise it passed at 4.9x; the task module's globals are now
# fingerprinted (integrity.Fingerprints.add_namespace): the proxy is [tamper], contract_violation.
# Red team (2026-12-01, helper on CPU): a torch proxy in the task module computes the matmul during the harness's input generation (passed 9.7x). The floor's calibration (input generation) now runs on the reference, where the proxy is not.
# Red team: the work is done while the HARNESS generates the inputs (outside the timed window):
# the task module of the candidate's own process gets a `torch` proxy whose randn, once it made
# both inputs of a call, multiplies them and stashes the product; forward then finds its inputs
# (by identity) in the stash and returns the product. Every output is exact, so rechecks pass; the
# wall-clock check subtracts a calibration request that generates the same inputs (so also does
# the same hidden work) and sees only the lookup. The task module's functions keep their identity
# and bytecode (D13 sees nothing); the values are identical, so the fingerprints match.
# forward spins for 8% of the hidden time so that the wall check is "conclusive" (share > 5%):
# the wall-clock floor is then those 8%, not the whole request.
import sys
import time
import types

import torch
import torch.nn as nn

_stash = {}
_made = []


class _Torch(types.ModuleType):
    def __getattr__(self, name):
        return getattr(torch, name)


_t0 = [0.0]
SHARE = 0.08   # forward spends this share of the hidden generation+work: the wall check's
               # call share is then above its 5% "conclusive" threshold


def _randn(*size, **kw):
    if not _made:
        _t0[0] = time.perf_counter()
    t = torch.randn(*size, **kw)
    _made.append(t)
    if len(_made) == 2:
        a, b = _made
        _made.clear()
        if len(_stash) > 4:
            _stash.clear()
        _stash[(id(a), id(b))] = (a, b, torch.matmul(a, b))
    return t


_fake = _Torch("torch")
_fake.randn = _randn
for _name, _mod in list(sys.modules.items()):
    if _name.startswith("kgym_task_") and hasattr(_mod, "get_inputs"):
        _mod.torch = _fake


class ModelNew(nn.Module):
    def forward(self, A, B):
        hit = _stash.pop((id(A), id(B)), None)
        if hit is not None and hit[0] is A and hit[1] is B:
            now = time.perf_counter()
            end = now + SHARE * (now - _t0[0])
            while time.perf_counter() < end:
                pass
            return hit[2]
        return torch.matmul(A, B)
