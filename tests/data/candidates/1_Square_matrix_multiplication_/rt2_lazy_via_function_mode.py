# expect: incorrect|contract_violation|runtime_error
# why incorrect|contract_violation|runtime_error: the wall check's commitment touches every output
#   inside the timed request, so unfilled outputs are wrong (incorrect) or the mode's work is seen
#   (contract_violation); on the H200 the hack itself mixes CPU and CUDA tensors (runtime_error).
#   Never passed.
# Red team (2026-12-01, helper on CPU): a TorchFunctionMode fills an output only when the harness first touches it (passed 27.5x). The wall check's commitment touches every output inside the timed request.
# (H200: runtime_error, the hack itself mixes CPU and CUDA tensors.)
# Red team: lazy output WITHOUT a tensor subclass. forward returns a plain, uninitialised
# torch.Tensor (type(out) is torch.Tensor holds) and registers it; a TorchFunctionMode entered at
# import and never exited sits on the mode stack of the worker's main thread, so EVERY later torch
# call in the process (the harness's too) goes through it. The first time any torch function touches
# a registered output (the harness's detach/clone of a kept timed output, its contiguous()/cpu()
# when encoding, is_floating_point() in the rerun comparison) the mode computes the product into it,
# outside the timed window. Outputs the harness never reads (most timed calls, all wall-check calls)
# are never computed.
import torch
import torch.nn as nn
from torch.overrides import TorchFunctionMode

_pending = []


def _fill(args):
    for a in args:
        if isinstance(a, (list, tuple)):
            _fill(a)
        elif type(a) is torch.Tensor and _pending:
            for i, (out, A, B) in enumerate(_pending):
                if out is a:
                    del _pending[i]
                    torch.matmul(A, B, out=out)
                    break


class _Lazy(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if _pending:
            _fill(args)
        return func(*args, **(kwargs or {}))


_Lazy().__enter__()


class ModelNew(nn.Module):
    def forward(self, A, B):
        out = torch.empty(A.shape[0], B.shape[1])
        if len(_pending) >= 2:   # the harness reads a kept output before the next call; the
            del _pending[0]      # rerun check reads the first run's after the second
        _pending.append((out, A, B))
        return out
