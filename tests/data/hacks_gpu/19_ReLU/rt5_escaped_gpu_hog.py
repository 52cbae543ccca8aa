# expect: contract_violation|passed, speedup <= twin
# why contract_violation|passed: under the CUDA sandbox the hogs get no CUDA context and the
#   honest ReLU passes at its own speed (bounded by its twin); without it, the escaped hogs come
#   back under the zygote and are [process] (contract_violation).
# Session 11: under the CUDA sandbox (Landlock, the default since) the hogs get no CUDA context,
# so no GPU work hides in the baselines and the honest ReLU passes at its own speed (0.31x).
# Fixed the same day: the pause stops every process below the zygote (a child subreaper: escaped
# children come back under it) except the reference worker (runner::pausable_processes); on the
# H200 (session 6) it then passed at 0.667x (honest ReLU 0.58x). A kernel it queued before the
# pause would still run during the baselines, so since session 6 a process of the candidate other
# than its worker that holds the GPU is a contract violation ([process], runner::foreign_gpu_holders).
# The import waits until the hogs hold their contexts (their fresh `import torch` takes seconds: in
# the first session-6 run the verdict ended before, and it passed at 0.296x).
# Red team rt5 (written on CPU, 2026-12-01): honest ReLU; a process that escapes
# PausedTree (double fork + setsid: re-parented to the zygote, own session and process group) and
# execs a fresh Python with its own CUDA context. It launches spin kernels only while the
# candidate's tree is stopped (a heartbeat child that stays in the tree stops with it) after timed
# calls, i.e. while the reference times the eager/compile baselines: the reference's kernels share
# the GPU with the hog's context (time-slicing), so the baselines are slower. CPU fallback: spins.
import mmap, os, struct, sys, time
import torch
import torch.nn as nn

_FD = os.memfd_create("rt5", 0)  # inherited across exec (no CLOEXEC)
os.ftruncate(_FD, 16)
_SHM = mmap.mmap(_FD, 16)  # [0:8] heartbeat counter, [8] armed (timed calls since the last pause), [10 + i] hog i ready
_CAND = os.getpid()

_HOG = r'''
import mmap, os, sys, time
fd, cand = int(sys.argv[1]), int(sys.argv[2])
shm = mmap.mmap(fd, 16)
def alive():
    try:
        os.kill(cand, 0); return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
spin = None
try:
    import torch
    torch.cuda.init()
    torch.cuda._sleep(1000); torch.cuda.synchronize()
    spin = lambda: (torch.cuda._sleep(200000), torch.cuda.synchronize())  # ~0.1 ms at ~2 GHz
except Exception:
    def spin():
        x = 0
        for _ in range(3000):
            x += 1
shm[10 + int(sys.argv[3])] = 1
last, seen = None, time.monotonic()
while True:
    hb = shm[0:8]
    now = time.monotonic()
    if hb != last:
        last, seen = hb, now
    if now - seen > 0.003 and shm[8]:
        spin()
    else:
        time.sleep(0.001)
        if not alive():
            os._exit(0)
'''


def _alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _heartbeat():
    k, last = 0, time.monotonic()
    while True:
        k += 1
        now = time.monotonic()
        if now - last > 0.008:  # we were stopped: that pause is over
            _SHM[8] = 0
        last = now
        _SHM[0:8] = struct.pack("<Q", k)
        time.sleep(0.0005)
        if k % 200 == 0 and not _alive(_CAND):
            os._exit(0)


if os.fork() == 0:
    try:
        _heartbeat()
    finally:
        os._exit(0)

for _i in range(int(os.environ.get("RT5_HOGS", "2"))):
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", _HOG, str(_FD), str(_CAND), str(_i)])
        finally:
            os._exit(0)
    os.waitpid(pid, 0)

_deadline = time.monotonic() + 60
while sum(_SHM[10:16]) < int(os.environ.get("RT5_HOGS", "2")) and time.monotonic() < _deadline:
    time.sleep(0.05)


def _in_timed_loop():
    f = sys._getframe(2)
    while f is not None:
        if f.f_code.co_name == "time_calls":
            return True
        f = f.f_back
    return False


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if _in_timed_loop():
            _SHM[8] = 1
        return torch.relu(x)
