"""Fused comparison kernels for the reference worker (Triton): one pass over a case's output
instead of about fifty float64 torch kernels per 256 MiB slice.

The reference's comparison (``reference.ReferenceWorker._compare``) used to read every output in
float64 slices and build each statistic with its own torch kernel, with a host sync per figure.
At KernelBench's full level-1 sizes that was most of a verdict's device time: a ReLU output has
1.6e9 elements, and its six cases spent 4.6 s in comparisons on the H200 (session 10,
bench/integrity.md), where reading the two outputs and the float64 reference once takes about
6 ms. Here each output is read once, every figure computed per element in float64 exactly as
``reference.error_stats_torch`` computes it, and reduced per program; the host reads one small
table per output.

Two kernels:

- ``moments``: the sum of squares and the count of the finite elements (for ``scaled_atol``) and
  the plain sum (the trivial "mean" answer's value), all in float64.
- ``stats``: the candidate's output (or one constant, for the trivial answers) against the
  reference output and, when given, the float64 reference. Same definitions as the torch path:
  an element is bad unless ``|o - r| <= atol + rtol * |r|`` with both finite, or both NaN, or the
  same infinity; non-finite candidate values where the reference is finite are counted apart.

Only the reference worker uses them (a trusted process; its Triton cache is below its own work
folder, ``HOME``, which a candidate under the sandbox cannot write). ``available`` says where they
apply: a CUDA tensor and Triton importable, or Triton's interpreter (``TRITON_INTERPRET=1`` with
``KGYM_FASTCOMPARE_INTERPRET=1``, the CPU tests of tests/python/test_fastcompare.py, which check both paths give the same figures).
"""
from __future__ import annotations

import os

import torch

try:  # Triton ships with torch's CUDA wheels; without it the torch path is used
    import triton
    import triton.language as tl
except Exception:  # noqa: BLE001
    triton = None
    tl = None

# Elements per program and step: each of a program's 128 threads keeps 14 float64/int64
# accumulators per element it holds, so 2 elements a thread (256) stay in registers where 8
# (1024, the first H200 run) would spill.
BLOCK = 256
MAX_PROGRAMS = 8192  # programs per launch (each loops over its share)

# Columns of the float64 table ``stats`` reduces (per program, then on the device).
_F_MAX_ABS, _F_SUM_ABS, _F_MAX_REL, _F_RATIO, _F_E_C, _F_E_R, _F_S64, _F_LO, _F_HI = range(9)
_N_F = 9
# Columns of the int64 table.
_I_BAD, _I_NONFIN, _I_REF_NONFIN, _I_FIN64, _I_FIRST, _I_BAD_UNCHECKED = range(6)
_N_I = 6


_broken = None  # why the fused path was given up in this process (None while it works)


def _interpreting() -> bool:
    """Triton's interpreter on CPU tensors, for the tests only (both variables set): a user's
    TRITON_INTERPRET=1, which lets Triton candidates run on the CPU, leaves the reference's
    comparisons on the torch path."""
    return os.environ.get("TRITON_INTERPRET", "") == "1" and os.environ.get("KGYM_FASTCOMPARE_INTERPRET", "") == "1"


def available(*tensors) -> bool:
    """True when the fused kernels can read these tensors: Triton is importable, each tensor is a
    floating-point tensor on a CUDA device (or on the CPU under Triton's interpreter)."""
    if triton is None or _broken is not None:
        return False
    for t in tensors:
        if t is None:
            continue
        if not t.is_floating_point() or t.is_complex():
            return False
        if not (t.is_cuda or (_interpreting() and t.device.type == "cpu")):
            return False
    return True


if triton is not None:
    _INF = tl.constexpr(float("inf"))
    _NEG_INF = tl.constexpr(-float("inf"))
    _BIG_INDEX = tl.constexpr(1 << 62)  # "no bad element" in the first-index minimum

    # n and iters vary with every output size: not specialised on (Triton would compile a variant
    # for each of "1", "a multiple of 16" and "other").
    @triton.jit(do_not_specialize=["n", "iters"])
    def _moments_kernel(x_ptr, out_ptr, n, iters, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        nprog = tl.num_programs(0)
        lane = tl.arange(0, BLOCK)
        sq = tl.zeros([BLOCK], tl.float64)
        total = tl.zeros([BLOCK], tl.float64)
        count = tl.zeros([BLOCK], tl.int64)
        it = 0
        while it < iters:  # (a while loop: Triton's interpreter cannot range() over an argument)
            offs = (it * nprog + pid).to(tl.int64) * BLOCK + lane
            m = offs < n
            x = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float64)
            fin = (tl.abs(x) < _INF) & m
            sq += tl.where(fin, x * x, 0.0)
            count += fin.to(tl.int64)
            total += tl.where(m, x, 0.0)
            it += 1
        tl.store(out_ptr + pid * 3, tl.sum(sq, axis=0))
        tl.store(out_ptr + pid * 3 + 1, tl.sum(count, axis=0).to(tl.float64))
        tl.store(out_ptr + pid * 3 + 2, tl.sum(total, axis=0))

    @triton.jit(do_not_specialize=["n", "iters"])
    def _stats_kernel(o_ptr, r_ptr, r64_ptr, p_ptr, f_ptr, i_ptr, n, iters,
                      O_CONST: tl.constexpr, HAS64: tl.constexpr, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        nprog = tl.num_programs(0)
        lane = tl.arange(0, BLOCK)
        atol = tl.load(p_ptr)
        rtol = tl.load(p_ptr + 1)
        const = tl.load(p_ptr + 2)
        max_abs = tl.zeros([BLOCK], tl.float64)
        sum_abs = tl.zeros([BLOCK], tl.float64)
        max_rel = tl.zeros([BLOCK], tl.float64)
        max_ratio = tl.zeros([BLOCK], tl.float64)
        e_c = tl.zeros([BLOCK], tl.float64)
        e_r = tl.zeros([BLOCK], tl.float64)
        s64 = tl.zeros([BLOCK], tl.float64)
        lo = tl.full([BLOCK], _NEG_INF, tl.float64)
        hi = tl.full([BLOCK], _INF, tl.float64)
        n_bad = tl.zeros([BLOCK], tl.int64)
        n_nonfin = tl.zeros([BLOCK], tl.int64)
        n_ref_nonfin = tl.zeros([BLOCK], tl.int64)
        n_fin64 = tl.zeros([BLOCK], tl.int64)
        n_bad_unchecked = tl.zeros([BLOCK], tl.int64)  # bad where the float64 cross-check does not look
        first = tl.full([BLOCK], _BIG_INDEX, tl.int64)
        it = 0
        while it < iters:  # (a while loop: Triton's interpreter cannot range() over an argument)
            offs = (it * nprog + pid).to(tl.int64) * BLOCK + lane
            m = offs < n
            rd = tl.load(r_ptr + offs, mask=m, other=0.0).to(tl.float64)
            if O_CONST:
                od = tl.zeros([BLOCK], tl.float64) + const
            else:
                od = tl.load(o_ptr + offs, mask=m, other=0.0).to(tl.float64)
            r_nan = rd != rd
            o_nan = od != od
            r_fin = tl.abs(rd) < _INF
            o_fin = tl.abs(od) < _INF
            both = r_fin & o_fin & m  # (masked lanes: rd is 0, od 0 or the constant)
            diff = tl.where(both, tl.abs(od - rd), 0.0)
            r_abs = tl.where(r_fin, tl.abs(rd), 0.0)
            denom = atol + rtol * r_abs
            ratio = tl.where(denom > 0, diff / tl.maximum(denom, 1e-300), tl.where(diff > 0, _INF, 0.0))
            nonfin_bad = (o_fin == 0) & r_fin & m
            r_inf = (r_fin == 0) & (r_nan == 0)
            special = (r_nan & (o_nan == 0)) | (r_inf & (od != rd))
            bad = ((ratio <= 1.0) == 0) | nonfin_bad | special
            bad = bad & m
            max_abs = tl.maximum(max_abs, diff)
            sum_abs += diff
            max_rel = tl.maximum(max_rel, tl.where(both, diff / (tl.abs(rd) + 1e-12), 0.0))
            max_ratio = tl.maximum(max_ratio, ratio)
            n_bad += bad.to(tl.int64)
            n_nonfin += nonfin_bad.to(tl.int64)
            n_ref_nonfin += ((r_fin == 0) & m).to(tl.int64)
            first = tl.minimum(first, tl.where(bad, offs, _BIG_INDEX))
            tol = atol + rtol * tl.abs(rd)
            lo = tl.maximum(lo, tl.where(r_fin & m, rd - tol, _NEG_INF))
            hi = tl.minimum(hi, tl.where(r_fin & m, rd + tol, _INF))
            if HAS64:
                r64 = tl.load(r64_ptr + offs, mask=m, other=0.0).to(tl.float64)
                fin = (tl.abs(r64) < _INF) & both & m
                e_c = tl.maximum(e_c, tl.where(fin, tl.abs(od - r64), 0.0))
                e_r = tl.maximum(e_r, tl.where(fin, tl.abs(rd - r64), 0.0))
                s64 = tl.maximum(s64, tl.where(fin, tl.abs(r64), 0.0))
                n_fin64 += fin.to(tl.int64)
                n_bad_unchecked += (bad & (fin == 0)).to(tl.int64)
            it += 1
        fb = f_ptr + pid * 9
        tl.store(fb + 0, tl.max(max_abs, axis=0))
        tl.store(fb + 1, tl.sum(sum_abs, axis=0))
        tl.store(fb + 2, tl.max(max_rel, axis=0))
        tl.store(fb + 3, tl.max(max_ratio, axis=0))
        tl.store(fb + 4, tl.max(e_c, axis=0))
        tl.store(fb + 5, tl.max(e_r, axis=0))
        tl.store(fb + 6, tl.max(s64, axis=0))
        tl.store(fb + 7, tl.max(lo, axis=0))
        tl.store(fb + 8, tl.min(hi, axis=0))
        ib = i_ptr + pid * 6
        tl.store(ib + 0, tl.sum(n_bad, axis=0))
        tl.store(ib + 1, tl.sum(n_nonfin, axis=0))
        tl.store(ib + 2, tl.sum(n_ref_nonfin, axis=0))
        tl.store(ib + 3, tl.sum(n_fin64, axis=0))
        tl.store(ib + 4, tl.min(first, axis=0))
        tl.store(ib + 5, tl.sum(n_bad_unchecked, axis=0))


def _grid(n: int) -> tuple:
    blocks = max(1, -(-n // BLOCK))
    progs = min(blocks, MAX_PROGRAMS)
    return progs, -(-blocks // progs)


def _flat(t: torch.Tensor) -> torch.Tensor:
    return t.reshape(-1).contiguous()


def moments(x: torch.Tensor) -> tuple:
    """(sum of squares of the finite elements, number of finite elements, sum of all elements)
    of ``x`` (any floating dtype and shape), accumulated in float64; the sum is NaN or infinite
    when an element is. Requires ``available(x)``."""
    x = _flat(x)
    n = x.numel()
    if n == 0:
        return 0.0, 0, 0.0
    progs, iters = _grid(n)
    out = torch.empty((progs, 3), dtype=torch.float64, device=x.device)
    _moments_kernel[(progs,)](x, out, n, iters, BLOCK=BLOCK)
    sq, count, total = out.sum(dim=0).tolist()
    return sq, int(count), total


def stats(r: torch.Tensor, o, r64, atol: float, rtol: float) -> dict:
    """Error figures of ``o`` (a tensor with r's number of elements, any floating dtype, or one
    float: every element that value) against the reference output ``r``, and against the
    float64 reference ``r64`` when it is not None. All arithmetic in float64. Returns the same
    keys as ``reference.error_stats_torch`` (max_abs, sum_abs, max_rel, ratio, bad, nonfinite,
    first: the first bad flat index or -1) plus ref_nonfinite (non-finite elements of ``r``),
    fin64 (elements finite in o, r and r64), bad_outside_fp64 (bad elements outside those: the
    float64 cross-check says nothing about them; all bad elements without r64), e_c / e_r / s64 (the largest |o - r64|, |r - r64|,
    |r64| over those; 0 when there are none), lo / hi (the largest r - tol and smallest r + tol
    over the finite elements of ``r``, tol = atol + rtol |r|: the interval one constant answer
    must lie in). Requires ``available(r, o, r64)``."""
    rf = _flat(r)
    n = rf.numel()
    o_const = not isinstance(o, torch.Tensor)
    of = rf if o_const else _flat(o)
    if not o_const and of.numel() != n:
        raise ValueError(f"stats: the output has {of.numel()} elements, the reference {n}")
    has64 = r64 is not None
    r64f = _flat(r64) if has64 else rf
    if has64 and r64f.numel() != n:
        raise ValueError(f"stats: the float64 reference has {r64f.numel()} elements, the reference {n}")
    progs, iters = _grid(n)
    params = torch.tensor([float(atol), float(rtol), float(o) if o_const else 0.0], dtype=torch.float64,
                          device=rf.device)
    ftab = torch.empty((progs, _N_F), dtype=torch.float64, device=rf.device)
    itab = torch.empty((progs, _N_I), dtype=torch.int64, device=rf.device)
    _stats_kernel[(progs,)](of, rf, r64f, params, ftab, itab, n, iters,
                            O_CONST=o_const, HAS64=has64, BLOCK=BLOCK)
    fmax = ftab.amax(dim=0)
    f = torch.stack([fmax[_F_MAX_ABS], ftab[:, _F_SUM_ABS].sum(), fmax[_F_MAX_REL], fmax[_F_RATIO],
                     fmax[_F_E_C], fmax[_F_E_R], fmax[_F_S64], fmax[_F_LO], ftab[:, _F_HI].amin()]).tolist()
    isum = itab.sum(dim=0)
    i = torch.stack([isum[_I_BAD], isum[_I_NONFIN], isum[_I_REF_NONFIN], isum[_I_FIN64],
                     itab[:, _I_FIRST].amin(), isum[_I_BAD_UNCHECKED]]).tolist()
    return {"max_abs": f[0], "sum_abs": f[1], "max_rel": f[2], "ratio": min(f[3], 1e300),
            "bad": int(i[0]), "nonfinite": int(i[1]), "first": int(i[4]) if i[0] else -1,
            "ref_nonfinite": int(i[2]), "fin64": int(i[3]), "bad_outside_fp64": int(i[5]) if has64 else int(i[0]),
            "e_c": f[4], "e_r": f[5], "s64": f[6],
            "lo": f[7], "hi": f[8]}


def give_up(exc: BaseException) -> None:
    """The fused path failed (a Triton compile or launch error on this device): this process
    uses the torch path from now on. The failure is kept for ``status``."""
    global _broken
    _broken = f"{type(exc).__name__}: {exc}"[:500]


def status() -> str:
    """"on", "off (Triton is not installed)" or "off (<the failure that turned it off>)"."""
    if triton is None:
        return "off (Triton is not installed)"
    return "on" if _broken is None else f"off ({_broken})"


def warm(device: str) -> str:
    """Compiles the kernels a float32 task needs (the output against the reference and the float64
    reference, against one constant, against the input; the moments) on tiny tensors, so that the
    first verdict's comparisons do not pay Triton's compilation (about 0.5 to 1 s per variant on
    the H200, session 11; Triton caches them below the reference's HOME for the process's life).
    The reference worker calls it once, in ``info``, when it starts. Other dtypes compile at first
    use. A failure turns the fused path off (``give_up``). Returns ``status()``."""
    t = torch.zeros(4, device=device)
    if not available(t):
        return status() if triton is None or _broken is not None else f"off (torch's float64 slices on {device})"
    try:
        r64 = t.double()
        stats(t, t, r64, 1e-4, 1e-4)
        stats(t, t, None, 1e-4, 1e-4)
        stats(t, 0.0, None, 1e-4, 1e-4)
        moments(t)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001
        give_up(exc)
    return status()
