"""Encoding of inputs and outputs as JSON metadata plus raw byte blobs (no pickle).

A value is encoded as ``{"kind": "tensor", "dtype", "shape", "device", "blob": i}`` (bytes of the
contiguous tensor in blob i), ``{"kind": "list"|"tuple", "items": [...]}``, or
``{"kind": "scalar", "value": v}`` for int/float/bool/None/str.
"""
import torch

_DTYPES = {
    str(d).removeprefix("torch."): d
    for d in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8,
              torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool, torch.complex64)
}


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def encode(value, blobs: list):
    """Encodes ``value``; appends tensor bytes to ``blobs``; returns the JSON metadata."""
    if type(value) is torch.Tensor:
        t = value.detach()
        meta = {"kind": "tensor", "dtype": dtype_name(t.dtype), "shape": list(t.shape),
                "device": str(t.device), "blob": len(blobs)}
        c = t.contiguous().cpu()
        blobs.append(c.reshape(-1).view(torch.uint8).numpy().tobytes() if c.numel() else b"")
        return meta
    if isinstance(value, (list, tuple)):
        return {"kind": "tuple" if isinstance(value, tuple) else "list",
                "items": [encode(v, blobs) for v in value]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"kind": "scalar", "value": value}
    raise TypeError(f"cannot transfer a value of type {type(value).__name__}")


def decode(meta, blobs, device: str):
    """Rebuilds a value encoded by ``encode``, tensors in new storage on ``device``."""
    kind = meta["kind"]
    if kind == "tensor":
        dtype = _DTYPES[meta["dtype"]]
        raw = blobs[meta["blob"]]
        if isinstance(raw, bytes):
            raw = bytearray(raw)
        shape = [int(s) for s in meta["shape"]]
        if len(raw) == 0:
            t = torch.empty(shape, dtype=dtype)
        else:
            t = torch.frombuffer(raw, dtype=torch.uint8).view(dtype).reshape(shape).clone()
        return t.to(device)
    if kind in ("list", "tuple"):
        items = [decode(m, blobs, device) for m in meta["items"]]
        return tuple(items) if kind == "tuple" else items
    if kind == "scalar":
        return meta["value"]
    raise ValueError(f"unknown value kind {kind!r}")


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
