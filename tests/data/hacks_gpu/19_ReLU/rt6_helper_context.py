# expect: contract_violation|runtime_error
# why contract_violation|runtime_error: under the CUDA sandbox the helper cannot open the shared
#   memory (runtime_error); without it, the helper holding /dev/nvidia* while the tree is stopped
#   is [process] (contract_violation).
# Session 11: under the CUDA sandbox (Landlock, the default since) the helper cannot open the
# shared memory it hands tensors through (/dev/shm is not writable): runtime_error.
# Session 6 (2026-12-01): launch accounting sees one CUDA context, the worker's. This candidate
# computes every output in a helper process with its own CUDA context: the input and output
# storage go to the helper as CUDA IPC handles (torch.multiprocessing.reductions) and the helper
# runs the ReLU, so the worker's kernel trace holds no compute at all (under strict, a decoy own
# kernel plus cuBLAS in the helper would pass the library-share check unseen). Before the fix it
# passed under --profile off. Caught: the helper holds /dev/nvidia* while the candidate's tree is
# stopped for the baselines ([process], runner::foreign_gpu_holders).
import os
import pickle
import subprocess
import sys

import torch
import torch.nn as nn
from torch.multiprocessing.reductions import reduce_tensor

_HELPER = r'''
import pickle, sys, torch
torch.cuda.init()
r, w = sys.stdin.buffer, sys.stdout.buffer
while True:
    n = r.read(8)
    if len(n) < 8:
        break
    (fx, ax), (fo, ao) = pickle.loads(r.read(int.from_bytes(n, "little")))
    x, out = fx(*ax), fo(*ao)
    torch.clamp(x, min=0, out=out)
    torch.cuda.synchronize()
    w.write(b"k"); w.flush()
'''

_proc = subprocess.Popen([sys.executable, "-c", _HELPER], stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def _in_helper(x, out):
    msg = pickle.dumps((reduce_tensor(x), reduce_tensor(out)))
    torch.cuda.synchronize()
    _proc.stdin.write(len(msg).to_bytes(8, "little") + msg)
    _proc.stdin.flush()
    if _proc.stdout.read(1) != b"k":
        raise RuntimeError("helper died")
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        return _in_helper(x, torch.empty_like(x))
