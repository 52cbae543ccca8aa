"""Encoding of inputs and outputs as JSON metadata plus raw byte blobs (no pickle).

A value is encoded as ``{"kind": "tensor", "dtype", "shape", "device", "blob": i}`` (bytes of the
contiguous tensor in blob i) or, for a large CUDA tensor of the candidate's process,
``{..., "ipc": descriptor}`` (no bytes: ``devicecopy``), ``{"kind": "list"|"tuple", "items": [...]}``,
or ``{"kind": "scalar", "value": v}`` for int/float/bool/None/str.
"""
import math
import zlib

import torch

from . import devicecopy, protocol

_DTYPES = {
    str(d).removeprefix("torch."): d
    for d in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8,
              torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool, torch.complex64)
}


PINNED_MIN_BYTES = 1 << 20  # device tensors at least this large leave the GPU through pinned memory
SHARED_MIN_BYTES = 1 << 20  # tensors at least this large travel as sealed memfds (protocol.SharedBlob)


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def encode(value, blobs: list, exports: list = None):
    """Encodes ``value``; appends tensor bytes to ``blobs``; returns the JSON metadata. With
    ``exports`` (the candidate worker only), a CUDA tensor of at least SHARED_MIN_BYTES is sent
    as a device-transfer descriptor instead (``devicecopy.export``), and the exported tensor is
    appended to ``exports``, which the caller keeps until the receiver has copied it; where the
    export fails, the bytes go through host memory as before."""
    if type(value) is torch.Tensor:
        t = value.detach()
        meta = {"kind": "tensor", "dtype": dtype_name(t.dtype), "shape": list(t.shape),
                "device": str(t.device)}
        if exports is not None and t.device.type == "cuda" and t.numel() * t.element_size() >= SHARED_MIN_BYTES:
            try:
                c = t.contiguous()
                torch.cuda.synchronize(c.device)  # the bytes are final before another process reads them
                meta["ipc"] = devicecopy.export(c)
                exports.append(c)
                return meta
            except (devicecopy.TransferError, RuntimeError):
                pass  # the host path below
        meta["blob"] = len(blobs)
        c = None
        if t.device.type == "cuda" and t.numel() * t.element_size() >= PINNED_MIN_BYTES:
            # Through page-locked memory (torch's caching host allocator reuses the block): a
            # 64 MB output took 40 ms to pageable memory on the H200.
            try:
                c = torch.empty(t.shape, dtype=t.dtype, pin_memory=True)
                c.copy_(t)
            except RuntimeError:  # no pinned memory to be had: the pageable copy below
                c = None
        if c is None:
            c = t.contiguous().cpu()
        # The numpy view itself (it keeps the tensor alive): protocol.send writes its buffer to the
        # socket without another copy.
        raw = c.reshape(-1).view(torch.uint8).numpy() if c.numel() else b""
        if len(raw) >= SHARED_MIN_BYTES:
            # A sealed memfd instead of bytes on the stream: the supervisor passes it on to the
            # other worker without copying it through two sockets (64 MB: about 42 ms per hop).
            try:
                raw = protocol.SharedBlob.from_buffer(raw)
            except OSError:
                pass  # no memfds here: inline bytes
        blobs.append(raw)
        return meta
    if isinstance(value, (list, tuple)):
        return {"kind": "tuple" if isinstance(value, tuple) else "list",
                "items": [encode(v, blobs, exports) for v in value]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"kind": "scalar", "value": value}
    raise TypeError(f"cannot transfer a value of type {type(value).__name__}")


def meta_problem(meta, blobs, depth: int = 0):
    """Why ``meta`` (an output description from another process, with its ``blobs``) cannot be
    decoded, or None when it can: the kinds, dtypes, shapes, devices, blob indices and blob sizes
    ``encode`` writes, nothing else (a transfer descriptor is checked by ``devicecopy.fetch``).
    The reference calls it before it reads a candidate's output: a candidate's process can write
    its own replies (red team rt14: a forged description raised inside the reference, a task
    error)."""
    if not isinstance(meta, dict):
        return f"an output description is a {type(meta).__name__}, not an object"
    kind = meta.get("kind")
    if kind in ("list", "tuple"):
        items = meta.get("items")
        if not isinstance(items, list):
            return "a list output without its items"
        if depth > 8:
            return "outputs nested too deeply"
        for item in items:
            why = meta_problem(item, blobs, depth + 1)
            if why:
                return why
        return None
    if kind in ("scalar", "invalid"):  # (invalid: a timed output that was no tensor, said so by the harness)
        return None
    if kind != "tensor":
        return f"unknown output kind {str(kind)[:40]!r}"
    if meta.get("dtype") not in _DTYPES:
        return f"unknown dtype {str(meta.get('dtype'))[:40]!r}"
    shape = meta.get("shape")
    if not isinstance(shape, list) or len(shape) > 16 or any(type(x) is not int or x < 0 for x in shape):
        return "the shape is not a list of non-negative integers"
    device = meta.get("device")
    try:
        if not isinstance(device, str) or torch.device(device).type not in ("cpu", "cuda"):
            raise ValueError
    except (RuntimeError, ValueError):
        return f"unknown device {str(device)[:40]!r}"
    if "ipc" in meta:
        return None
    index = meta.get("blob")
    if type(index) is not int or not 0 <= index < len(blobs):
        return "the output's bytes were not sent"
    need = math.prod(shape) * torch.empty((), dtype=_DTYPES[meta["dtype"]]).element_size()
    raw = blobs[index]
    have = raw.nbytes if isinstance(raw, protocol.SharedBlob) else memoryview(raw).nbytes
    if have != need:
        return f"{have} bytes sent for an output of {need}"
    return None


def decode(meta, blobs, device: str):
    """Rebuilds a value encoded by ``encode``, tensors in new storage on ``device``."""
    kind = meta["kind"]
    if kind == "tensor":
        dtype = _DTYPES[meta["dtype"]]
        if "ipc" in meta:  # bytes in the sender's device memory: copied device to device
            shape = [int(s) for s in meta["shape"]]
            if any(s < 0 for s in shape):
                raise ValueError(f"negative size in shape {shape}")
            nbytes = math.prod(shape) * torch.empty((), dtype=dtype).element_size()
            return devicecopy.fetch(meta["ipc"], nbytes, device).view(dtype).reshape(shape)
        raw = blobs[meta["blob"]]
        if isinstance(raw, protocol.SharedBlob):  # encoded in this process, never sent
            raw = raw.read()
        elif isinstance(raw, bytes):  # read-only: torch.frombuffer needs a writable buffer
            raw = bytearray(raw)
        shape = [int(s) for s in meta["shape"]]
        if len(raw) == 0:
            return torch.empty(shape, dtype=dtype, device=device)
        t = torch.frombuffer(raw, dtype=torch.uint8).view(dtype).reshape(shape)
        # New storage either way: the copy to another device, or a clone on the CPU (the tensor
        # must not share, or be aligned like, the received buffer).
        return t.clone() if torch.device(device).type == "cpu" else t.to(device)
    if kind in ("list", "tuple"):
        items = [decode(m, blobs, device) for m in meta["items"]]
        return tuple(items) if kind == "tuple" else items
    if kind == "scalar":
        return meta["value"]
    raise ValueError(f"unknown value kind {kind!r}")


FINGERPRINT_ROW = 2048  # words per row of the 2-D views _word_sums reduces
FINGERPRINT_MOD = (1 << 61) - 1  # a prime; keeps the weighted sum a JSON-safe integer


def _word_sums(flat) -> dict:
    """Two exact integer sums over the bytes of ``flat`` (a 1-D contiguous tensor) read as
    signed 16-bit words w_i (bytes for 1-byte dtypes): S1 = sum w_i and S2 = sum (i + 1) w_i mod
    (2^61 - 1). No overflow, no rounding, so the result does not depend on reduction order.

    With R = ``FINGERPRINT_ROW`` and i = m R + b, the words before the last partial row are a
    matrix W[m, b]: S2 = R * sum_m m r_m + sum_b (b + 1) c_b, with row sums r_m and column sums
    c_b (int64 reductions of the words, no temporaries: |r_m| < 2^26, |c_b| < 2^15 M). The row
    sums, padded to whole rows, are again a matrix r[a, b'] (m = a R + b'):
    sum_m m r_m = R * sum_a a R_a + sum_b' b' C_b'. The device reduces four times (two reads of
    the words, two of the small row sums); c, R_a, C_b' and the last partial row come back with
    one host sync and are combined in Python integers. Before (session 14) a Python loop over
    chunks of 4M words made ~6 small launches per chunk: about 100 ms for a 6.4 GB input on the
    H200, twice per correctness case (the reference's fingerprint and the candidate's check)."""
    words = flat.view(torch.uint8) if flat.element_size() == 1 else flat.view(torch.int16)
    n, row = words.numel(), FINGERPRINT_ROW
    rows = n // row
    head = words[:rows * row].view(rows, row)
    tail = words[rows * row:]
    parts = []
    if rows:
        r = head.sum(dim=1, dtype=torch.int64)
        c = head.sum(dim=0, dtype=torch.int64)
        pad = (-rows) % row
        if pad:
            r = torch.cat([r, r.new_zeros(pad)])
        r2 = r.view(-1, row)
        parts = [c, r2.sum(dim=1), r2.sum(dim=0)]
    parts.append(tail.to(torch.int64))
    values = torch.cat(parts).tolist()  # the one host sync
    s1 = s2 = 0
    if rows:
        c, big_r = values[:row], values[row:row + (rows + row - 1) // row]
        big_c = values[row + len(big_r):row + len(big_r) + row]
        s1 = sum(big_r)
        weighted_rows = row * sum(a * x for a, x in enumerate(big_r)) + sum(b * x for b, x in enumerate(big_c))
        s2 = row * weighted_rows + sum((b + 1) * x for b, x in enumerate(c))
    start = rows * row
    for t, w in enumerate(values[len(values) - tail.numel():] if tail.numel() else []):
        s1 += w
        s2 += (start + t + 1) * w
    return {"sum": s1, "weighted_sum": s2 % FINGERPRINT_MOD}


def _fingerprint_tensor(t) -> dict:
    """dtype, shape, strides, and a digest of the bytes computed where the tensor is: on the CPU
    the CRC-32 of the bytes (zlib, ~4 GB/s), on a GPU the word sums of ``_word_sums`` (bandwidth
    bound there; an int64 reduction on the CPU would be 10x slower than the CRC)."""
    flat = t.detach().contiguous().reshape(-1)
    if flat.dtype == torch.bool:
        flat = flat.view(torch.uint8)
    rec = {"dtype": dtype_name(t.dtype), "shape": list(t.shape), "stride": list(t.stride())}
    if flat.device.type == "cpu":
        rec["crc32"] = zlib.crc32(flat.view(torch.uint8).numpy()) if flat.numel() else 0
    else:
        rec.update(_word_sums(flat))
    return rec


def fingerprint(value):
    """A cheap fingerprint of a (nested) input value, computed on the device its tensors are on:
    per tensor ``_fingerprint_tensor``, scalars as themselves. Equal inputs always give equal
    fingerprints. It catches a different dtype, shape or layout and, per tensor: on the CPU any
    change of the bytes but with probability 2^-32 (CRC-32; every change of up to 32 consecutive
    bits for certain); on a GPU any one changed element (S1 changes by the nonzero difference of a
    word), two swapped words unless their difference times their distance is a multiple of
    2^61 - 1, and a tensor from another seed or generator (random words: S1 and S2 collide with
    negligible probability). It is not collision-resistant against a constructed tensor, and need
    not be: it only decides whether the candidate worker computes on the inputs it regenerated
    from the seed or asks for the reference's bytes; the reference always compares with its own
    inputs, so wrong inputs in the candidate's process can only make its own output wrong."""
    if type(value) is torch.Tensor:
        return _fingerprint_tensor(value)
    if isinstance(value, (list, tuple)):
        return {"kind": "tuple" if isinstance(value, tuple) else "list",
                "items": [fingerprint(v) for v in value]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"scalar": value}
    raise TypeError(f"cannot fingerprint a value of type {type(value).__name__}")


def tensors_of(value):
    """Flat list of the tensors in a (nested) value, in order."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        out = []
        for v in value:
            out.extend(tensors_of(v))
        return out
    return []
