"""CPU workers' heap (glibc): freed memory kept in the heap (``keep_heap``), a block of it
written before each timed request (``warm_heap``), and given back after a large task or arena
(``trim_heap``), so that no timed call pays page faults that depend on the heap's history
(docs/timing.md, "Wall check, CPU"). Applied to the reference and the candidate alike.
"""
import torch

def keep_heap() -> bool:
    """CPU workers: glibc's allocator keeps freed memory in the heap instead of returning it to
    the kernel (``M_MMAP_MAX`` 0: no block gets its own mapping; ``M_TRIM_THRESHOLD`` 2 GiB: the
    heap's top is trimmed only above that). Without it every tensor above the mmap threshold (128 KiB to
    32 MiB, moving) was a fresh mapping whose pages fault on first write, whether it did or not
    depended on the heap's recent history, and the wall-clock request of the CPU ReLU at
    ``--scale 0.02`` took 1 to 4x its calls' time on the same process (2 cores, 2026-12-01):
    the floor set honest runtimes up to 8x above the timer, and in CI an honest candidate was
    ``timing_invalid``. Applied to the reference and the candidate alike; a candidate that undoes
    it only makes its own calls slower. Returns False where mallopt is unavailable."""
    import ctypes
    try:
        libc = ctypes.CDLL(None)
        m_trim_threshold, m_mmap_max = -1, -4
        ok = libc.mallopt(m_mmap_max, 0) == 1
        return bool(libc.mallopt(m_trim_threshold, ctypes.c_int(2**31 - 1)) == 1 and ok)
    except (OSError, AttributeError):
        return False


HEAP_WARM_MIN = 32 << 20  # warm_heap's least reserve (bytes)
HEAP_WARM_MAX = 1 << 30  # and its most (below keep_heap's trim threshold, so that it stays)


def tensor_bytes(value) -> int:
    """Bytes of the tensors in ``value`` (a tensor, or a list/tuple of them and other things)."""
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, (list, tuple)):
        return sum(tensor_bytes(v) for v in value)
    return 0


def warm_heap(nbytes: int) -> bool:
    """CPU workers: ``nbytes`` of glibc's heap allocated, written and freed, so that the heap
    holds that much memory already faulted in (``keep_heap``: freed memory stays). A freshly
    forked candidate worker otherwise grew its heap during its first timed calls (the kept
    copies, the spot samples and the outputs held across calls each took new pages at the heap's
    top), and those calls paid the page faults inside their window: 600 to 12,600 minor faults
    in 4 to 20 of a request's calls (L1/1, L1/21, L1/88 at --scale 0.02, 2 cores), none in the
    long-lived reference's, whose heap had grown long before; the same-op control read 0.93x
    to 0.96x (docs/timing.md). Called by
    ``time_calls`` for every timed request, the baselines' alike; a no-op while the heap's top
    has not moved since a block at least this large was warmed. Returns False where malloc is unavailable or the block could not be had."""
    import ctypes
    global _heap_warmed, _libc
    nbytes = max(HEAP_WARM_MIN, min(HEAP_WARM_MAX, int(nbytes)))
    try:
        libc = _libc
        if libc is None:  # (declared once per process: this runs before every timed request)
            libc = ctypes.CDLL(None)
            libc.malloc.restype = ctypes.c_void_p
            libc.malloc.argtypes = [ctypes.c_size_t]
            libc.free.argtypes = [ctypes.c_void_p]
            libc.sbrk.restype = ctypes.c_void_p
            libc.sbrk.argtypes = [ctypes.c_ssize_t]
            _libc = libc
        top = libc.sbrk(0)
        if _heap_warmed is not None and nbytes <= _heap_warmed[0] and top == _heap_warmed[1]:
            return True  # the heap neither grew nor shrank since a block this large was warmed
        block = libc.malloc(nbytes)
        if not block:
            return False
        ctypes.memset(block, 0, nbytes)
        libc.free(block)
        _heap_warmed = (nbytes, libc.sbrk(0))
        return True
    except (OSError, AttributeError):
        return False


# (bytes, heap top) of the last warm_heap block: with keep_heap, freed memory stays faulted in, so
# the same block needs no second pass (1 GiB of memset per timed request, both sides) until the
# heap's top moves (it grew into new pages, or malloc_trim returned some).
_heap_warmed = None
_libc = None  # the C library with malloc, free and sbrk declared (warm_heap)

def trim_heap() -> None:
    """Returns the heap's free memory to the kernel (glibc ``malloc_trim``), which
    ``keep_heap`` otherwise keeps: after a large arena or task in a long-lived worker."""
    import ctypes
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass
