# expect: passed|timing_invalid|build_failed|runtime_error, speedup <= twin
# why passed|timing_invalid|build_failed|runtime_error: the process-call filter and the pause that
#   waits until every thread stopped leave the hogs nothing: passed at its honest speed (bounded
#   by its twin) or timing_invalid when their CPU time falls in the timed requests; where the
#   kernel refuses its set-up at import, build_failed or runtime_error.
# Session 11: closed (zygote._restrict_process_calls: no new user namespace, sched_setaffinity on
# itself only; runner::PausedTree waits until every thread is stopped). Its effect showed at
# --scale 3 (1.3x to 1.7x against an honest 0.77x to 1.1x); at the test's scale the bound is loose.
# Red team rt17: the candidate's process tree is SIGSTOPped while the reference times its
# baselines, but a SIGSTOP takes effect only when a thread returns to user space. Two forked
# children (one per CPU) enter one long system call each, madvise(MADV_POPULATE_READ) over a
# 6 GiB anonymous mapping (~1 s of kernel CPU; it checks only fatal signals), as soon as the
# timed request's last call returned and the worker sleeps: the call runs on through the pause and the eager baseline
# shares the CPUs with it. The hogs stay off while the candidate's own calls (and its wall-check
# requests) run.
import ctypes, mmap, os, struct, sys, time
import torch
import torch.nn as nn

NHOG = int(os.environ.get("RT17_NHOG", "2"))
SPAN = int(os.environ.get("RT17_SPAN_GB", "6")) << 30
_FLAG = mmap.mmap(-1, 16)  # [armed: double 0/1][last return: double]
_PARENT = os.getpid()


def _hog(k):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    try:
        os.sched_setaffinity(0, {k % os.cpu_count()})
    except OSError:
        pass
    stat = f"/proc/{_PARENT}/task/{_PARENT}/stat"
    sleeping = 0
    while os.getppid() == _PARENT:
        armed, last = struct.unpack("dd", _FLAG[:16])
        if not armed:
            sleeping = 0
            time.sleep(0.0005)
            continue
        # armed by the timed request's calls: wait until the worker's main thread sleeps (it
        # replied and waits for the next request), then one long call
        with open(stat) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        sleeping = sleeping + 1 if state == "S" else 0
        if sleeping < 3:
            time.sleep(0.0003)
            continue
        _FLAG[:8] = struct.pack("d", 0.0)
        sleeping = 0
        p = libc.mmap(None, SPAN, 3, 0x22 | 0x4000, -1, 0)
        libc.madvise(p, SPAN, 22)  # MADV_POPULATE_READ: zero-page PTEs, no memory
        libc.munmap(p, SPAN)
    os._exit(0)


for _k in range(NHOG):
    if os.fork() == 0:
        try:
            _hog(_k)
        finally:
            os._exit(0)


def _in(name):
    f = sys._getframe(2)
    while f is not None:
        if f.f_code.co_name == name:
            return True
        f = f.f_back
    return False


class ModelNew(nn.Module):
    def forward(self, A, B):
        _FLAG[:16] = struct.pack("dd", 0.0, time.monotonic())
        out = torch.matmul(A, B)
        if _in("time_calls"):
            _FLAG[:16] = struct.pack("dd", 1.0, time.monotonic())
        return out
