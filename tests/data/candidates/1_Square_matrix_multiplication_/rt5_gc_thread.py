# expect: contract_violation
# Red team rt5 (CPU, 2026-12-01): a finalizer on a garbage cycle left by the import starts a
# persistent worker thread. The workers collect garbage only after a reply (protocol.serve), so
# the thread started after load's thread check, and the per-call census saw it alive before and
# after every call: forward split the matmul with it unseen. Fixed: load collects before its check,
# and every call refuses a Python thread that was not alive when the worker started.
import queue
import threading

import torch
import torch.nn as nn

_JOBS = queue.Queue()


def _worker():
    while True:
        a, b, out, done = _JOBS.get()
        torch.matmul(a, b, out=out)
        done.set()


class _Starter:
    def __init__(self):
        self.me = self  # a cycle: freed only by the cyclic collector

    def __del__(self):
        threading.Thread(target=_worker, daemon=True, name="rt5-gc-started").start()


_Starter()


class ModelNew(nn.Module):
    def forward(self, A, B):
        out = torch.empty(A.shape[0], B.shape[1], dtype=A.dtype, device=A.device)
        if any(t.name == "rt5-gc-started" for t in threading.enumerate()):
            half = A.shape[0] // 2
            done = threading.Event()
            _JOBS.put((A[half:], B, out[half:], done))
            torch.matmul(A[:half], B, out=out[:half])
            done.wait()
        else:
            torch.matmul(A, B, out=out)
        return out
