# expect: contract_violation|build_failed
# why contract_violation|build_failed: where the machine allows a mount namespace the jailed hogs
#   are known by device major and inode ([process], contract_violation); where it does not, the
#   import raises (build_failed) and the evasion cannot be tried.
# Red team rt6 (2026-12-01, written on the CPU, not yet run on a GPU): rt5_escaped_gpu_hog whose
# hogs run chrooted in a bind mount of / inside a private mount namespace (an unprivileged user
# namespace when not root). /proc then shows their device files as "<workdir>/jail/dev/nvidia*",
# which the first [process] check (by the "/dev/nvidia" path prefix) did not match. Fixed the same
# day: device files are known by their character-device major and mappings by device and inode
# (runner::foreign_gpu_holders). `build_failed`: this machine allows no mount namespace (the
# import raises then), so the evasion cannot be tried; `passed` would be the evasion working.
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
                _jail = os.path.join(os.getcwd(), "jail")
                os.makedirs(_jail, exist_ok=True)
                _flags = 0x00020000 | (0 if os.geteuid() == 0 else 0x10000000)  # CLONE_NEWNS [| CLONE_NEWUSER]
                _uid, _gid = os.getuid(), os.getgid()
                import ctypes
                _libc = ctypes.CDLL(None, use_errno=True)
                if _libc.unshare(_flags) != 0:  # root without CAP_SYS_ADMIN: try a user namespace
                    _flags = 0x00020000 | 0x10000000
                    if _libc.unshare(_flags) != 0:
                        raise OSError(ctypes.get_errno(), "unshare")
                if _flags & 0x10000000:
                    open("/proc/self/setgroups", "w").write("deny")
                    open("/proc/self/uid_map", "w").write(f"0 {_uid} 1")
                    open("/proc/self/gid_map", "w").write(f"0 {_gid} 1")
                _libc.mount(b"none", b"/", None, 0x40000 | 0x4000, None)  # MS_PRIVATE | MS_REC
                if _libc.mount(b"/", _jail.encode(), None, 0x1000 | 0x4000, None) != 0:  # MS_BIND | MS_REC
                    raise OSError(ctypes.get_errno(), "rbind")
                os.chroot(_jail)
                os.chdir("/")
                os.execv(sys.executable, [sys.executable, "-c", _HOG, str(_FD), str(_CAND), str(_i)])
        except BaseException:
            _SHM[9] = 1  # the jail could not be made here
        finally:
            os._exit(0)
    os.waitpid(pid, 0)

_deadline = time.monotonic() + 60
while sum(_SHM[10:16]) < int(os.environ.get("RT5_HOGS", "2")) and time.monotonic() < _deadline:
    if _SHM[9]:
        raise RuntimeError("rt6: no mount namespace here, the jail evasion cannot be tried")
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
