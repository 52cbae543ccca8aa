# expect: passed, speedup <= twin
# Red team rt16 (CPU, session 11): at import every thread of the sibling workers (the reference)
# gets SCHED_DEADLINE with a 10% CPU reservation (sched_setattr: Landlock scopes signals, not
# scheduling; it needs CAP_SYS_NICE, which a root worker had). At --scale 3 the eager baseline
# went from 10.5 ms to 130 ms and this honest-speed matmul passed at 11.04x (honest control
# 0.83x), the reference staying throttled for every later candidate. Now the candidate's process
# has no capabilities and a seccomp filter lets scheduling calls name only itself
# (zygote._restrict_process_calls): the calls fail with EPERM and it is an honest matmul.
import ctypes, os
import torch
import torch.nn as nn


class _Attr(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("policy", ctypes.c_uint32), ("flags", ctypes.c_uint64),
                ("nice", ctypes.c_int32), ("prio", ctypes.c_uint32), ("runtime", ctypes.c_uint64),
                ("deadline", ctypes.c_uint64), ("period", ctypes.c_uint64)]


def _throttle():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    me, zyg = os.getpid(), os.getppid()
    kids = set()
    for tid in os.listdir(f"/proc/{zyg}/task"):
        kids.update(int(x) for x in open(f"/proc/{zyg}/task/{tid}/children").read().split())
    done = []
    for pid in kids - {me}:
        for tid in os.listdir(f"/proc/{pid}/task"):
            a = _Attr(ctypes.sizeof(_Attr), 6, 1, 0, 0, 1_000_000, 10_000_000, 10_000_000)  # 1 ms / 10 ms
            done.append(libc.syscall(314, int(tid), ctypes.byref(a), 0))
    print("rt16 throttled", kids - {me}, done, flush=True)


_throttle()


class ModelNew(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)
