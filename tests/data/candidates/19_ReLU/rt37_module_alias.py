# expect: contract_violation
# Red team rt37 (session 24, CPU, profile off; passed at 1.58x to 1.83x doing eager's work, its
# honest control 0.90x): the harness's modules reach each other through module references
# (timing.contract, wallcheck.contract). Rebound to a proxy module whose input_spans computes the
# ReLU and keeps it, the call's work ran before the timer's window (time_calls) and on the wall
# check's harness clock (wall_calls' own work, taken out of the calls' time), and forward returned
# the kept result. No guarded function changed. The harness guard and the full fingerprint now hold
# every module reference of kgym_worker's modules by identity: a contract violation.
import sys
import types

import torch
import torch.nn as nn

_stash = {}


def _install():
    real = sys.modules.get("kgym_worker.contract")
    if real is None:
        import kgym_worker.contract as real  # noqa: F811
    import kgym_worker.timing as timing
    import kgym_worker.wallcheck as wallcheck
    proxy = types.ModuleType(real.__name__)
    proxy.__dict__.update(real.__dict__)

    def input_spans(args):
        spans = real.input_spans(args)
        try:
            if isinstance(args, (list, tuple)) and len(args) == 1 and type(args[0]) is torch.Tensor:
                x = args[0]
                _stash["k"] = (id(x), x.data_ptr())
                _stash["v"] = torch.clamp_min(x, 0.0)
        except Exception:  # noqa: BLE001
            pass
        return spans

    proxy.input_spans = input_spans
    timing.contract = proxy
    wallcheck.contract = proxy


_install()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if _stash.get("k") == (id(x), x.data_ptr()):
            _stash.pop("k")
            return _stash.pop("v")
        return torch.clamp_min(x, 0.0)
