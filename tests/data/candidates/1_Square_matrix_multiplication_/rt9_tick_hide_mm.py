# expect: passed|timing_invalid, speedup <= twin
# why passed|timing_invalid: the busy clock counts the helpers' calls: passed at its honest speed
#   (bounded by its twin), or timing_invalid when its helpers' CPU time during the timed requests
#   exceeds one core.
# Red team rt9 (2026-12-01, helper on CPU): helpers forked at import do the wall check's calls
# and retire before their first 10 ms CPU tick while the worker sleeps on a pipe; the CPU-time
# clock (ticks for processes other than the worker, the lesser of two clocks) missed them:
# 1.7x and 2.0x against an honest 0.70x on examples/suite. Now the busy clock (wall minus the
# worker's run-queue wait, plus every process's CPU clock) counts the sleep: 0.19x.
import torch
NHELP_DEFAULT = 72
PAD = 0.3
REF = lambda a, b: a @ b
OP = lambda a, b, out=None: torch.matmul(a, b, out=out)
OUT_SHAPE = lambda a, b: (a.shape[0], b.shape[1])
OUT_BYTES = lambda a, b: a.shape[0] * b.shape[1] * 4
WARM = lambda: OP(torch.rand(64, 64), torch.rand(64, 64))
# Red team rt9 (generic part): CPU work hidden from the wall check's CPU-time clock.
# The supervisor's tree_cpu_ms reads the worker's CPU time precisely (clock_getcpuclockid) but
# every other process of the candidate from /proc/PID/stat utime+stime in 10 ms ticks (floored).
# A pool of helper processes forked at import does the calls of the timed wall requests, reading
# the inputs from the shared input file themselves (found through /proc/self/maps); a helper
# retires before its own CPU time reaches 10 ms, so none ever shows a tick: the CPU clock sees
# only the worker's Python loop, and the judge takes the lesser (CPU) figure. The timer loop
# returns outputs precomputed during the warm-up from the seeds in the time_calls frame (padded
# to PAD of the honest time, so that the wall check's call count stays small).
import mmap
import os
import struct
import sys
import time
import warnings

import torch
import torch.nn as nn

NHELP = int(os.environ.get("RT9_NHELP", "0")) or NHELP_DEFAULT
SLOT = 64 << 20
LIMIT_NS = 9_200_000

_ctl = mmap.mmap(-1, 16 * NHELP)  # per helper: CPU ns now, CPU ns of its last job
_ctlv = torch.frombuffer(_ctl, dtype=torch.int64)
_outm = mmap.mmap(-1, SLOT)
_outb = torch.frombuffer(_outm, dtype=torch.uint8)
_done_r, _done_w = os.pipe()
_cmd = []


def _helper(k, cmd_r):
    maps = {}
    njobs, touched = 0, 0
    while True:
        msg = os.read(cmd_r, 4096)
        if not msg:
            os._exit(0)
        c0 = time.clock_gettime_ns(time.CLOCK_PROCESS_CPUTIME_ID)
        path, specs = eval(msg.decode())  # noqa: S307 - our own message
        b = maps.get(path)
        if b is None:
            fd = os.open(path, os.O_RDONLY)
            m = mmap.mmap(fd, os.fstat(fd).st_size, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
            os.close(fd)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                b = torch.frombuffer(m, dtype=torch.uint8)
            maps[path] = (b, m)
        b, m = maps[path]
        for off, nb, shape in specs:  # the slice's page table in one go (MADV_POPULATE_READ)
            a0 = off // 4096 * 4096
            try:
                m.madvise(22, a0, (off + nb - a0 + 4095) // 4096 * 4096)
            except (OSError, ValueError):
                pass
        args = [b[off:off + nb].view(torch.float32).view(shape) for off, nb, shape in specs]
        nbo = OUT_BYTES(*args)
        if nbo > touched:
            try:
                _outm.madvise(23, 0, (nbo + 4095) // 4096 * 4096)  # MADV_POPULATE_WRITE
            except (OSError, ValueError):
                pass
            touched = nbo
        OP(*args, out=_outb[:nbo].view(torch.float32).view(OUT_SHAPE(*args)))
        c1 = time.clock_gettime_ns(time.CLOCK_PROCESS_CPUTIME_ID)
        _ctlv[2 * k] = c1
        njobs += 1
        _ctlv[2 * k + 1] = (c1 - c0) if njobs > 1 else 300_000  # the first job maps the file
        os.write(_done_w, b"k")


_threads = torch.get_num_threads()
torch.set_num_threads(1)
WARM()  # the first op of a fresh process costs ms: spent in the worker, at import
eval(repr(("/x", [(0, 4, (1,))])))
_outb[:8 << 20].fill_(0)  # the shared pages exist before the helpers map them
for _k in range(NHELP):
    r, w = os.pipe()
    if os.fork() == 0:
        try:
            import ctypes
            ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG SIGKILL
            _helper(_k, r)
        except BaseException as exc:  # noqa: BLE001
            sys.stderr.write(f"helper {_k}: {exc!r}\n")
        os._exit(0)
    _cmd.append(w)

torch.set_num_threads(_threads)
_cur = [0]
_regions = []


def _region(addr):
    for r in _regions:
        if r[0] <= addr < r[1]:
            return r
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) < 6 or not parts[5].startswith("/"):
                continue
            lo, hi = (int(v, 16) for v in parts[0].split("-"))
            if lo <= addr < hi:
                r = (lo, hi, parts[5], int(parts[2], 16))
                _regions.append(r)
                return r
    return None


def _frame():
    f = sys._getframe(2)
    for _ in range(6):
        if f is None:
            return None
        if f.f_code.co_name in ("wall_calls", "time_calls"):
            return f
        f = f.f_back
    return None


class ModelNew(nn.Module):
    def __init__(self, *a):
        super().__init__()
        self.seeds, self.pre, self.pad = None, [], 0.0

    def _offload(self, xs, f):
        # The input set's place in the shared input file: the layout, the file and the first
        # seed sit in the closure of the make_args lambda of candidate.wall.
        loc = f.f_locals
        ma = loc.get("make_args")
        if ma is None or not ma.__closure__:
            return None
        cells = dict(zip(ma.__code__.co_freevars, (c.cell_contents for c in ma.__closure__)))
        if "layout" not in cells or "shared" not in cells:
            return None
        entry, path = cells["layout"][loc["i"]], cells["shared"].path
        specs = []
        for x, e in zip(xs, entry):
            if type(x) is not torch.Tensor or x.dtype != torch.float32 or e.get("dtype") != "float32":
                return None
            specs.append((e["offset"], x.numel() * 4, tuple(e["shape"])))
        shape = OUT_SHAPE(*xs)
        nb = OUT_BYTES(*xs)
        if nb > SLOT:
            return None
        while _cur[0] < NHELP:
            k = _cur[0]
            if _ctlv[2 * k].item() + 2 * _ctlv[2 * k + 1].item() + 300_000 < 9_500_000:
                break
            _cur[0] += 1
        if _cur[0] >= NHELP:
            return None
        os.write(_cmd[_cur[0]], repr((path, specs)).encode())
        os.read(_done_r, 1)
        return _outb[:nb].view(torch.float32).view(shape)

    def forward(self, *xs):
        f = _frame()
        if f is not None and f.f_code.co_name == "wall_calls":
            out = self._offload(xs, f)
            if out is not None:
                return out
        elif f is not None:
            loc = f.f_locals
            seeds = loc["seeds"]
            if "args" in loc and self.seeds is seeds:
                k = len(loc["times"])
                if k < len(self.pre):
                    t0 = time.perf_counter()
                    while time.perf_counter() - t0 < self.pad:
                        pass
                    return self.pre[k]
            elif self.seeds is not seeds:
                self.seeds = seeds
                w, mk = loc["warmup"], loc["make_args"]
                t0 = time.perf_counter()
                REF(*xs)
                self.pad = (time.perf_counter() - t0) * PAD
                self.pre = [REF(*mk(s)) for s in seeds[w:]]
        return REF(*xs)
