"""Device-to-device transfer of the candidate's outputs to the reference worker (CUDA IPC).

On a GPU every case output and every rechecked timed output used to leave the candidate's process
through host memory (device -> pinned buffer -> sealed memfd -> the reference's host -> device).
At KernelBench's level-1 sizes (a 6.4 GB ReLU output) that was most of a verdict's device time on
the H200: 37 s of cases and 17 s of rechecks for one full-size ReLU (bench/h200/session9).

Here the candidate's process exports the device allocation that holds an output
(``cuIpcGetMemHandle`` of the allocation's base, from ``cuMemGetAddressRange``) and sends only a
64-byte handle, the output's offset in that allocation and its size. The reference worker opens
the handle, bounds-checks the range against the opened allocation, copies the bytes into storage
of its own (``cuMemcpyDtoD``), waits for the copy and closes the handle before it reads anything.
CUDA driver API, legacy IPC: https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__MEM.html

Trust: only the candidate's process exports, only the reference's opens. The reference never
exports (a handle maps the whole allocation, and the reference's allocations hold expected
outputs). A forged or stale handle, a range outside the allocation or a size that does not match
the output's shape is ``TransferError``: the reference judges that output unreadable (a failed
case), never a task error. What the candidate sends is its own memory, as the bytes of the host
path were; the reference compares only its private copy.

Where the export is impossible (memory from torch's expandable segments or another allocator, a
CPU worker, no driver), or ``KGYM_DEVICE_TRANSFER=host`` is set, outputs take the host path.
"""
import ctypes
import os

import torch

HANDLE_BYTES = 64  # sizeof(CUipcMemHandle)
CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 1


class TransferError(Exception):
    """A device transfer that failed (driver error, malformed or out-of-range descriptor)."""


class _Handle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * HANDLE_BYTES)]


_lib = None


def _driver():
    """libcuda.so.1 with the prototypes used here; TransferError without a CUDA driver."""
    global _lib
    if _lib is None:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError as exc:
            raise TransferError(f"no CUDA driver in this process ({exc})") from None
        ptr, size = ctypes.c_uint64, ctypes.c_size_t
        lib.cuMemGetAddressRange_v2.argtypes = [ctypes.POINTER(ptr), ctypes.POINTER(size), ptr]
        lib.cuIpcGetMemHandle.argtypes = [ctypes.POINTER(_Handle), ptr]
        lib.cuIpcOpenMemHandle_v2.argtypes = [ctypes.POINTER(ptr), _Handle, ctypes.c_uint]
        lib.cuIpcCloseMemHandle.argtypes = [ptr]
        lib.cuMemcpyDtoD_v2.argtypes = [ptr, ptr, size]
        lib.cuCtxSynchronize.argtypes = []
        lib.cuGetErrorName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        for f in ("cuMemGetAddressRange_v2", "cuIpcGetMemHandle", "cuIpcOpenMemHandle_v2",
                  "cuIpcCloseMemHandle", "cuMemcpyDtoD_v2", "cuCtxSynchronize", "cuGetErrorName"):
            getattr(lib, f).restype = ctypes.c_int
        _lib = lib
    return _lib


def _check(lib, code: int, what: str) -> None:
    if code != 0:
        name = ctypes.c_char_p()
        lib.cuGetErrorName(code, ctypes.byref(name))
        raise TransferError(f"{what} failed: {(name.value or b'?').decode()} ({code})")


def enabled(device: str) -> bool:
    """Whether a worker on ``device`` ("cuda", "cuda:1", "cpu") may export its outputs: a CUDA
    device and ``KGYM_DEVICE_TRANSFER`` not set to ``host`` (the switch bench/ uses to measure the
    host path)."""
    return device.startswith("cuda") and os.environ.get("KGYM_DEVICE_TRANSFER", "ipc") != "host"


def export(t: torch.Tensor) -> dict:
    """The transfer descriptor of ``t`` (a contiguous CUDA tensor, synchronised: its bytes are
    final): ``{"handle": 128 hex digits, "offset": bytes into the allocation, "bytes": n}``. The
    caller keeps ``t`` alive until the other side has copied it. Raises TransferError where the
    memory cannot be exported."""
    lib = _driver()
    nbytes = t.numel() * t.element_size()
    addr = t.data_ptr()
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    _check(lib, lib.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), addr), "cuMemGetAddressRange")
    if addr + nbytes > base.value + size.value:
        raise TransferError("the tensor extends beyond its allocation")
    handle = _Handle()
    _check(lib, lib.cuIpcGetMemHandle(ctypes.byref(handle), base.value), "cuIpcGetMemHandle")
    # (the c_char array's own value would stop at the first zero byte)
    return {"handle": ctypes.string_at(ctypes.addressof(handle), HANDLE_BYTES).hex(),
            "offset": addr - base.value, "bytes": nbytes}


def fetch(desc, nbytes: int, device: str) -> torch.Tensor:
    """A new uint8 tensor of ``nbytes`` on ``device`` (CUDA) holding the bytes ``desc`` (from
    ``export`` in another process) describes. ``nbytes`` is what the receiver expects from the
    output's dtype and shape; the descriptor must say the same. The handle is closed before this
    returns. Raises TransferError on a malformed descriptor, a range outside the exported
    allocation, a CPU device or a driver error."""
    if not isinstance(desc, dict):
        raise TransferError("the transfer descriptor is not an object")
    hx, offset, declared = desc.get("handle"), desc.get("offset"), desc.get("bytes")
    if not isinstance(hx, str) or len(hx) != 2 * HANDLE_BYTES:
        raise TransferError(f"the transfer handle is not {2 * HANDLE_BYTES} hex digits")
    try:
        raw = bytes.fromhex(hx)
    except ValueError:
        raise TransferError("the transfer handle is not hexadecimal") from None
    if type(offset) is not int or type(declared) is not int or offset < 0:
        raise TransferError("the transfer offset and size must be non-negative integers")
    if declared != nbytes:
        raise TransferError(f"the transfer declares {declared} bytes; the output's dtype and shape need {nbytes}")
    if torch.device(device).type != "cuda":
        raise TransferError("a device-transfer output reached a worker without a GPU")
    out = torch.empty(nbytes, dtype=torch.uint8, device=device)  # also makes the context current
    if nbytes == 0:
        return out
    lib = _driver()
    handle = _Handle()
    ctypes.memmove(ctypes.addressof(handle), raw, HANDLE_BYTES)
    torch.cuda.synchronize(out.device)  # the allocation is ready before the driver copies into it
    mapped = ctypes.c_uint64()
    _check(lib, lib.cuIpcOpenMemHandle_v2(ctypes.byref(mapped), handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
           "cuIpcOpenMemHandle")
    try:
        base, size = ctypes.c_uint64(), ctypes.c_size_t()
        _check(lib, lib.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), mapped.value),
               "cuMemGetAddressRange")
        if offset + nbytes > base.value + size.value - mapped.value:
            raise TransferError(f"the transfer range [{offset}, {offset + nbytes}) lies outside the exported "
                                f"allocation of {base.value + size.value - mapped.value} bytes")
        _check(lib, lib.cuMemcpyDtoD_v2(out.data_ptr(), mapped.value + offset, nbytes), "cuMemcpyDtoD")
        _check(lib, lib.cuCtxSynchronize(), "cuCtxSynchronize")
    finally:
        lib.cuIpcCloseMemHandle(mapped.value)
    return out
