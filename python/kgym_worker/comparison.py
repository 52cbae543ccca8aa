"""The comparison of an output with the reference: error figures, tolerance scaled by the output's
magnitude, float64 slices. Imported by both sides: the trusted reference worker (reference.py),
which decides correctness with it, and the candidate's process (candidate.py), which uses the
same slicing and tolerance to compare its two runs of a case (a read of uninitialised memory). Holds no reference outputs,
seeds or verdicts, so the untrusted side never imports the trusted module."""
import math

import torch

from . import fastcompare

COMPARE_CHUNK = 1 << 25  # elements per float64 slice of a comparison (256 MiB a slice)


def flat_slices(n: int, chunk: int = COMPARE_CHUNK):
    """(start, end) of consecutive slices of ``chunk`` elements covering ``n``: comparisons run
    slice by slice in float64, so that their memory does not grow with the output (a KernelBench
    level-1 ReLU at full size has 1.6e9 elements: its float64 copy alone is 12.8 GB, and the
    whole-tensor comparison ran the reference out of the H200's memory, task_error)."""
    chunk = max(1, int(chunk))
    for a in range(0, n, chunk):
        yield a, min(n, a + chunk)


def moments(x, chunk: int = COMPARE_CHUNK, fused: bool = True) -> tuple:
    """(sum of squares of the finite elements, number of finite elements, sum of all elements) of
    ``x`` (any floating dtype and shape), in float64: ``fastcompare.moments``, one fused pass, on
    a GPU; float64 slices of ``chunk`` elements otherwise, and always with ``fused`` False (the
    candidate's process, where Triton's launcher is not fingerprinted). A Triton failure turns
    the fused path off (``fastcompare.give_up``) and the slices answer."""
    if fused and fastcompare.available(x):
        try:
            return fastcompare.moments(x)
        except Exception as exc:  # noqa: BLE001 - a Triton failure: the torch path from now on
            fastcompare.give_up(exc)
    flat = x.reshape(-1)
    sq, count, total = 0.0, 0, 0.0
    for a, b in flat_slices(flat.numel(), chunk):
        part = flat[a:b].double()
        fin = part[torch.isfinite(part)]
        count += fin.numel()
        sq += float(fin.square().sum())
        total += float(part.sum())
    return sq, count, total


def scaled_atol(atol: float, rd, chunk: int = COMPARE_CHUNK, fused: bool = True) -> float:
    """atol x the output's magnitude (root mean square of the finite reference values; atol
    itself for an all-zero reference). Tiny outputs (softmax over a wide row) no longer accept
    zeros (H20); large ones (sums, GEMMs on x3 inputs) no longer reject honest rounding.
    ``rd``: the reference output, any floating dtype and shape (read by ``moments``)."""
    sq, count, _ = moments(rd, chunk, fused)
    if count == 0:
        return atol
    rms = math.sqrt(sq / count)
    return atol * rms if rms > 0 else atol


def _error_stats(od, rd, atol, rtol) -> dict:
    """Elementwise check of ``od`` against ``rd`` (both float64): written as "every element
    within tolerance" so that NaN never passes (H19); non-finite values must match in place and
    sign. An element with no tolerance at all (atol + rtol |r| = 0) passes only when equal."""
    r_nan, o_nan = torch.isnan(rd), torch.isnan(od)
    r_fin, o_fin = torch.isfinite(rd), torch.isfinite(od)
    both_fin = r_fin & o_fin
    diff = torch.where(both_fin, (od - rd).abs(), torch.zeros_like(od))
    denom = atol + rtol * rd.abs().where(r_fin, torch.zeros_like(rd))
    inf = torch.full_like(diff, float("inf"))
    ratio = torch.where(denom > 0, diff / denom.clamp_min(1e-300), torch.where(diff > 0, inf, torch.zeros_like(diff)))
    nonfin_bad = (~o_fin) & r_fin
    special_bad = (r_nan & ~o_nan) | (torch.isinf(rd) & (od != rd))
    bad = ~(ratio <= 1) | nonfin_bad | special_bad
    n = rd.numel()
    nb = int(bad.sum())
    return {"max_abs": float(diff.max()) if n else 0.0, "sum_abs": float(diff.sum()) if n else 0.0,
            "max_rel": float((diff / (rd.abs() + 1e-12)).where(both_fin, torch.zeros_like(rd)).max()) if n else 0.0,
            "ratio": min(float(ratio.max()), 1e300) if n else 0.0, "bad": nb, "nonfinite": int(nonfin_bad.sum()),
            "first": int(bad.reshape(-1).nonzero()[0]) if nb else -1, "mask": bad}


def output_stats_torch(r, o, r64, atol: float, rtol: float, chunk: int = COMPARE_CHUNK,
                       exact: bool = False) -> dict:
    """The torch path of ``fastcompare.stats`` (same keys and definitions): ``o`` (a tensor with
    r's number of elements, or one float for every element) against ``r`` and, when not None,
    the float64 reference ``r64``, in float64 slices of ``chunk`` elements (CPU, and a GPU
    without Triton). With ``exact`` (integer and bool outputs) an element is bad unless equal."""
    rflat = r.reshape(-1)
    n = rflat.numel()
    o_const = not isinstance(o, torch.Tensor)
    oflat = None if o_const else o.reshape(-1)
    r64flat = None if r64 is None else r64.reshape(-1)
    acc = {"max_abs": 0.0, "sum_abs": 0.0, "max_rel": 0.0, "ratio": 0.0, "bad": 0, "nonfinite": 0, "first": -1,
           "ref_nonfinite": 0, "fin64": 0, "bad_outside_fp64": 0, "e_c": 0.0, "e_r": 0.0, "s64": 0.0, "lo": -math.inf, "hi": math.inf}
    for a, b in flat_slices(n, chunk):
        rd = rflat[a:b].double()
        od = torch.full_like(rd, float(o)) if o_const else oflat[a:b].double()
        st = _error_stats(od, rd, atol, rtol)
        bad = st.pop("mask")
        if exact:
            bad = rflat[a:b] != oflat[a:b]
            st["bad"] = int(bad.sum())
            st["first"] = int(bad.nonzero()[0]) if st["bad"] else -1
        for key in ("max_abs", "max_rel", "ratio"):
            acc[key] = max(acc[key], st[key])
        acc["sum_abs"] += st["sum_abs"]
        if st["bad"] and acc["first"] < 0:
            acc["first"] = a + st["first"]
        acc["bad"] += st["bad"]
        acc["nonfinite"] += st["nonfinite"]
        r_fin = torch.isfinite(rd)
        acc["ref_nonfinite"] += int((~r_fin).sum())
        if bool(r_fin.any()):
            tol = atol + rtol * rd.abs()
            acc["lo"] = max(acc["lo"], float((rd - tol)[r_fin].max()))
            acc["hi"] = min(acc["hi"], float((rd + tol)[r_fin].min()))
        if r64flat is not None:
            s64 = r64flat[a:b].double()
            fin = torch.isfinite(s64) & torch.isfinite(od) & r_fin
            k = int(fin.sum())
            if k:
                acc["e_c"] = max(acc["e_c"], float((od - s64).abs()[fin].max()))
                acc["e_r"] = max(acc["e_r"], float((rd - s64).abs()[fin].max()))
                acc["s64"] = max(acc["s64"], float(s64.abs()[fin].max()))
            acc["fin64"] += k
            acc["bad_outside_fp64"] += int((bad & ~fin).sum())
            del s64, fin
        else:
            acc["bad_outside_fp64"] += st["bad"]
        del rd, od, bad
    return acc


def output_stats(r, o, r64, atol: float, rtol: float, chunk: int = COMPARE_CHUNK, exact: bool = False) -> dict:
    """Error figures of ``o`` against ``r`` (and ``r64``): ``fastcompare.stats``, one fused pass,
    where it applies (floating outputs on a GPU); ``output_stats_torch`` otherwise."""
    if not exact and fastcompare.available(r, o if isinstance(o, torch.Tensor) else None, r64):
        try:
            return fastcompare.stats(r, o, r64, atol, rtol)
        except Exception as exc:  # noqa: BLE001 - a Triton failure: the torch path from now on
            fastcompare.give_up(exc)
    return output_stats_torch(r, o, r64, atol, rtol, chunk, exact)
