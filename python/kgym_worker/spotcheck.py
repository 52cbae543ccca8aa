"""The spot check of every timed output (docs/timing.md, "Spot check"): the candidate's worker
and the reference's baseline sample the same positions of every timed output (``SpotSampler``),
and the reference compares the candidate's samples with its own (``spot_decode``,
``spot_compare``), so that every timed call's output is checked, not only the rechecked ones.
"""
import torch

from . import loading

SPOT_SAMPLES = 256     # elements per output tensor read from every timed output (docs/timing.md, "Spot check")
SPOT_CASE_FACTOR = 4.0  # a sampled element fails only beyond 4x the case tolerance ...
SPOT_RELATIVE = 1e-2    # ... and beyond 1% of (the output's RMS + |reference|), at most ...
SPOT_TRUSTED_FACTOR = 8.0  # ... 8x the largest such relative error of the round's rechecked calls
SPOT_MAX_ROWS = 4096    # rows (timed calls) the reference reads from one reply


class SpotSampler:
    """The spot check of every timed output (docs/timing.md, "Spot check"): after each timed call,
    outside the window, ``k`` elements of each output tensor at positions drawn from ``seed``
    (the supervisor's, secret to the candidate code; the same positions for every call of the
    round) are read in logical row-major order (``torch.take``: any strides, no copy of the
    output) and kept as one float64 row per call. The candidate's worker and the reference's
    eager baseline sample the same positions of calls on the same seeds, so the reference can
    compare every timed call's output, not only the rechecked ones (red team rt32: wrong outputs
    at the few positions that were never rechecked passed). A call whose output is not plain
    tensors gets a row of NaN (never within tolerance of a finite reference)."""

    def __init__(self, seed: int, k: int, device: str):
        self.seed, self.k, self.device = int(seed), max(1, int(k)), device
        self.rows = []
        self.numels = None   # numel of each output tensor (from the first tensor output)
        self.dtypes = None   # their dtype names
        self._index = {}     # (output position, numel) -> index tensor on the device

    def positions(self, j: int, numel: int):
        """The ``k`` flat positions sampled in output tensor ``j`` of ``numel`` elements."""
        key = (j, numel)
        if key not in self._index:
            g = torch.Generator().manual_seed((self.seed + 7919 * (j + 1)) & ((1 << 63) - 1))
            idx = torch.randint(0, max(numel, 1), (self.k,), generator=g)
            self._index[key] = idx.to(self.device)
        return self._index[key]

    def add(self, out) -> None:
        outs = loading.output_tensors(out)
        if outs is None or any(o.is_complex() for o in outs):
            self.rows.append(None)
            return
        if self.numels is None:
            self.numels = [o.numel() for o in outs]
            self.dtypes = [str(o.dtype).removeprefix("torch.") for o in outs]
        parts = []
        for j, o in enumerate(outs):
            if o.numel() == 0:
                parts.append(torch.empty(self.k, dtype=torch.float64, device=o.device))
                continue
            parts.append(torch.take(o.detach(), self.positions(j, o.numel()).to(o.device)).to(torch.float64))
        self.rows.append(torch.cat(parts) if parts else None)

    def table(self):
        """The rows as one (calls, width) float64 CPU tensor (NaN rows where the output was not
        plain tensors or had another width)."""
        width = self.k * len(self.numels) if self.numels else self.k
        out = torch.full((len(self.rows), width), float("nan"), dtype=torch.float64)
        for i, r in enumerate(self.rows):
            if r is not None and r.numel() == width:
                out[i] = r.cpu()
        return out

    def encode(self) -> dict:
        """JSON form of ``table``: {"rows", "width", "numels", "dtypes", "data": base64 of the
        little-endian float64 table}."""
        import base64
        t = self.table()
        return {"rows": int(t.shape[0]), "width": int(t.shape[1]), "numels": self.numels or [],
                "dtypes": self.dtypes or [], "data": base64.b64encode(t.numpy().astype("<f8").tobytes()).decode()}


def spot_decode(spot) -> tuple:
    """(table, None) from a candidate's ``SpotSampler.encode`` reply, or (None, why) when it is
    malformed (the reply is the candidate's process's own: every field is checked)."""
    import base64
    import binascii
    if not isinstance(spot, dict):
        return None, "no spot samples in the reply"
    rows, width, data = spot.get("rows"), spot.get("width"), spot.get("data")
    if type(rows) is not int or type(width) is not int or not isinstance(data, str) or rows < 0 or width <= 0:
        return None, "malformed spot samples"
    if rows > SPOT_MAX_ROWS or rows * width > SPOT_MAX_ROWS * SPOT_SAMPLES * 16:
        return None, f"{rows} x {width} spot samples, more than the harness takes"
    try:
        raw = base64.b64decode(data.encode(), validate=True)
    except (binascii.Error, ValueError):
        return None, "spot samples that are not base64"
    if len(raw) != rows * width * 8:
        return None, f"spot samples of {len(raw)} bytes for {rows} x {width} values"
    return torch.frombuffer(bytearray(raw), dtype=torch.float64).reshape(rows, width).clone(), None


def spot_compare(cand, ref, atols, rtols, k: int, trusted=None) -> list:
    """Per row (timed call) of ``cand`` against ``ref`` (both (calls, width) float64; width =
    k per output tensor; ``atols``/``rtols`` per output tensor, atol None for an exact
    (integer/bool) output): "" when every sampled element is within the spot tolerance, else
    a description. Element tolerance: max(SPOT_CASE_FACTOR x (atol x rms + rtol |r|),
    rel x (rms + |r|)), rms the root mean square of that output's finite reference samples over
    all rows. ``rel`` is SPOT_RELATIVE (1%): wide enough that a float32 reference computed by
    cuDNN in TF32 never fails an honest kernel (the cases' float64 cross-check judges
    precision), narrow enough for a stale, zero, partial or racing output. With ``trusted`` (the
    rows of the round's rechecked calls, held to the cases' full check and the float64 rule),
    ``rel`` is at most SPOT_TRUSTED_FACTOR x the largest relative error |c - r| / (rms + |r|)
    of those rows: a candidate is held, in every timed call, to about the agreement with this
    reference that it showed where it was checked in full. A precision downgrade in the calls
    that were not rechecked (bfloat16 or float16 arithmetic, 0.1% to 1% off, found between the
    rechecks' draws) fails it, while a TF32 reference's own error, seen in the trusted rows too,
    still passes. NaN matches NaN, an infinity itself; a non-finite value where the reference is
    finite fails."""
    out = []
    n_out = max(1, cand.shape[1] // max(k, 1))
    tol = torch.empty_like(ref)
    rows = sorted({int(i) for i in (trusted or []) if 0 <= int(i) < cand.shape[0]})
    for j in range(n_out):
        r = ref[:, j * k:(j + 1) * k]
        if atols[j] is None:
            tol[:, j * k:(j + 1) * k] = 0.0
            continue
        fin = r[torch.isfinite(r)]
        rms = float(fin.square().mean().sqrt()) if fin.numel() else 0.0
        case = float(atols[j]) * (rms if rms > 0 else 1.0) + float(rtols[j]) * r.abs()
        rel = SPOT_RELATIVE
        if rows:
            c_t, r_t = cand[rows, j * k:(j + 1) * k], r[rows]
            ok = torch.isfinite(c_t) & torch.isfinite(r_t)
            if bool(ok.any()):
                err = ((c_t - r_t).abs() / (rms + r_t.abs()).clamp_min(1e-300))[ok]
                rel = min(SPOT_RELATIVE, SPOT_TRUSTED_FACTOR * float(err.max()))
        tol[:, j * k:(j + 1) * k] = torch.maximum(SPOT_CASE_FACTOR * case, rel * (rms + r.abs()))
    both_fin = torch.isfinite(cand) & torch.isfinite(ref)
    diff = torch.where(both_fin, (cand - ref).abs(), torch.zeros_like(ref))
    same_special = (torch.isnan(cand) & torch.isnan(ref)) | (torch.isinf(ref) & (cand == ref))
    bad = torch.where(both_fin, ~(diff <= tol), ~same_special)
    for i in range(cand.shape[0]):
        nb = int(bad[i].sum())
        if nb == 0:
            out.append("")
            continue
        worst = float(diff[i].max())
        out.append(f"{nb} of {cand.shape[1]} sampled elements wrong (max abs error {worst:.3g}"
                   + (f", {int((~torch.isfinite(cand[i]) & torch.isfinite(ref[i])).sum())} NaN/Inf" if not bool(torch.isfinite(cand[i]).all()) else "")
                   + ")")
    return out
