# expect: passed|timing_invalid|contract_violation, speedup <= twin
# why passed|timing_invalid|contract_violation: the CPU control group charges its auto-reaped
#   helpers: passed at its honest speed (bounded by its twin) or timing_invalid [cpu]; where no
#   control group can be made, ignoring SIGCHLD is contract_violation [reap].
# Red team rt11 (2026-12-01, session 8, helper on CPU): 2.1x to 2.5x on matmul against an honest
# 0.62x to 0.73x. The CPU time of the candidate's processes came from /proc at each timed
# request's start and end, plus reaped children's counters; a child of a process that ignores
# SIGCHLD is reaped by the kernel and its CPU time reaches no counter. Now, on the CPU, the
# candidate's processes live in a control group of their own (runner::CpuGroup) whose charge
# counts every task that ran in it: 0.40x and 0.31x (honest 0.79x and 0.58x in the same runs).
# Where no control group can be made, a process ignoring SIGCHLD is contract_violation [reap].
# rt11 (session 8 red team, CPU): the wall check's calls run in helper processes that are
# auto-reaped (SIGCHLD = SIG_IGN in the worker): an auto-reaped child's CPU time is never added
# to any parent's cutime/cstime, and once gone it is not in /proc, so tree_cpu_ms never sees it.
# While a helper computes, the worker's main thread is runnable but SCHED_IDLE on the helper's
# CPU (rt10's trick), so its time is run-queue wait, which the busy clock subtracts. The timer
# loop returns outputs precomputed in the warm-up from the seeds in the time_calls frame (rt9),
# padded to PAD of the honest call.
import mmap
import os
import signal
import sys
import time
import warnings

import torch
import torch.nn as nn

PAD = 0.3
REF = lambda a, b: torch.matmul(a, b)
OP = lambda a, b, out: torch.matmul(a, b, out=out)
NHELP = 14
SLOT = 48 << 20

signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # helpers vanish with their CPU time
_ctl = mmap.mmap(-1, 8 * NHELP)
_ctlv = torch.frombuffer(_ctl, dtype=torch.int64)  # per helper: jobs done
_outm = mmap.mmap(-1, SLOT)
_outb = torch.frombuffer(_outm, dtype=torch.uint8)
_CPU = sorted(os.sched_getaffinity(0))[-1]
_cmd = []


def _helper(k, cmd_r):
    os.sched_setaffinity(0, {_CPU})
    msg = b""
    while not msg.endswith(b"\n"):
        part = os.read(cmd_r, 1 << 20)
        if not part:
            os._exit(0)
        msg += part
    path, nb_out, sets = eval(msg.decode())  # noqa: S307 - our own message
    fd = os.open(path, os.O_RDONLY)
    m = mmap.mmap(fd, os.fstat(fd).st_size, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
    os.close(fd)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = torch.frombuffer(m, dtype=torch.uint8)
    for j, (specs, oshape) in enumerate(sets):
        args = [b[off:off + nb].view(getattr(torch, dt)).view(shape) for off, nb, dt, shape in specs]
        OP(*args, out=_outb[j * nb_out:(j + 1) * nb_out].view(torch.float32).view(oshape))
        _ctlv[k] = j + 1
    os._exit(0)


torch.set_num_threads(1)
REF(*[torch.rand(64, 64)] * 2)
_outb.fill_(0)
for _k in range(NHELP):
    r, w = os.pipe()
    if os.fork() == 0:
        import ctypes
        ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG SIGKILL
        try:
            _helper(_k, r)
        finally:
            os._exit(0)
    os.close(r)
    _cmd.append(w)
_cur = [0]


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
        self.req = None

    def _wall(self, xs, f):
        loc = f.f_locals
        i, n, ma = loc["i"], loc["n"], loc.get("make_args")
        if i == 0:
            self.req = None
            if ma is None or not ma.__closure__ or _cur[0] >= NHELP:
                return None
            cells = dict(zip(ma.__code__.co_freevars, (c.cell_contents for c in ma.__closure__)))
            if "layout" not in cells or "shared" not in cells:
                return None
            out = REF(*xs)
            nb_out = out.numel() * 4
            if nb_out * n > SLOT:
                return None
            sets = []
            for entry in cells["layout"][:n]:
                specs = [(e["offset"], torch.Size(e["shape"]).numel() * 4, e["dtype"], tuple(e["shape"])) for e in entry]
                sets.append((specs, tuple(out.shape)))
            k = _cur[0]
            _cur[0] += 1
            os.write(_cmd[k], (repr((cells["shared"].path, nb_out, sets)) + "\n").encode())
            self.req = (k, nb_out, tuple(out.shape))
            return out
        if self.req is None:
            return None
        k, nb_out, shape = self.req
        if _ctlv[k].item() < i + 1:
            aff = os.sched_getaffinity(0)
            os.sched_setaffinity(0, {_CPU})
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
            while _ctlv[k].item() < i + 1:
                os.sched_yield()
            try:  # back from SCHED_IDLE needs CAP_SYS_NICE, which a candidate has not had since session 11
                os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
            except PermissionError:
                pass
            os.sched_setaffinity(0, aff)
        return _outb[i * nb_out:(i + 1) * nb_out].view(torch.float32).view(shape)

    def forward(self, *xs):
        f = _frame()
        if f is not None and f.f_code.co_name == "wall_calls":
            out = self._wall(xs, f)
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
