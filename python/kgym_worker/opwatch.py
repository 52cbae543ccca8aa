"""The op watch (docs/timing.md, "Op watch"): kgym's own global RecordFunction callback
(``native/opwatch.cpp``) that counts the dispatcher ops run on any thread while the harness has
it on. The worker zygote builds it once per cache (g++ against torch's headers, a few seconds),
loads it and adds the callback before it forks any worker, so the candidate's process has it from
its first instruction and every call of the candidate pays the same for it. The harness turns
counting on around each observed call of the candidate (every timed, wall-clock and traced
call) and reads the counts at the end: ATen compute among them is what the strict profile's
launch gate rejects (``integrity.summarize_aten_ops``).

Before it, the only run-time view of ATen ops was ``torch.profiler`` around 3 traced calls at
the end: thread-local (an OpenMP team thread's ops went unseen, red team rt28) and telling
apart by its cost (red team rt33: 64 ``view`` calls took 2.2x longer under it, and a candidate
ran ATen's GEMM whenever they did not, under strict, at 0.70x to 0.91x against 0.10x honest).
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import pathlib
import subprocess
import sys
import tempfile

_SOURCE = pathlib.Path(__file__).with_name("native") / "opwatch.cpp"
_lib = None
_why = "not loaded"
_cap = 0
_names = None
_counts = None


def cache_dir() -> pathlib.Path:
    """kgym's cache (the engine's rule: KGYM_CACHE_DIR, XDG_CACHE_HOME/kgym, ~/.cache/kgym, then
    the temporary folder) / opwatch."""
    if os.environ.get("KGYM_CACHE_DIR"):
        base = pathlib.Path(os.environ["KGYM_CACHE_DIR"])
    elif os.environ.get("XDG_CACHE_HOME"):
        base = pathlib.Path(os.environ["XDG_CACHE_HOME"]) / "kgym"
    elif os.environ.get("HOME"):
        base = pathlib.Path(os.environ["HOME"]) / ".cache" / "kgym"
    else:
        base = pathlib.Path(tempfile.gettempdir()) / "kgym-cache"
    return base / "opwatch"


def _built_path(directory: pathlib.Path | None = None) -> pathlib.Path:
    """Where the library for this source, torch, compiler and Python lives."""
    import torch
    cxx = os.environ.get("CXX", "g++")
    abi = int(bool(torch._C._GLIBCXX_USE_CXX11_ABI))
    key = hashlib.sha256(_SOURCE.read_bytes() + f"|{torch.__version__}|{cxx}|{abi}|{sys.version}".encode()).hexdigest()[:20]
    return (directory or cache_dir()) / key / "libkgym_opwatch.so"


def build(directory: pathlib.Path | None = None) -> pathlib.Path:
    """The shared library for this source, torch and compiler, built when missing (into a
    temporary name, then renamed: two zygotes may build at once). Raises RuntimeError with the
    compiler's first error line. Run it in a process that forks no CUDA worker (``python -m
    kgym_worker.opwatch``): torch.utils.cpp_extension may initialise CUDA."""
    import torch
    cxx = os.environ.get("CXX", "g++")
    abi = int(bool(torch._C._GLIBCXX_USE_CXX11_ABI))
    lib = _built_path(directory)
    out_dir = lib.parent
    if lib.is_file():
        return lib
    import torch.utils.cpp_extension as ext  # (imports setuptools: only when building)
    out_dir.mkdir(parents=True, exist_ok=True)
    torch_lib = pathlib.Path(torch.__file__).parent / "lib"
    tmp = out_dir / f".build-{os.getpid()}.so"
    cmd = [cxx, "-O2", "-std=c++17", "-shared", "-fPIC", f"-D_GLIBCXX_USE_CXX11_ABI={abi}"]
    for inc in ext.include_paths():
        cmd += ["-isystem", inc]
    cmd += [str(_SOURCE), "-o", str(tmp), f"-L{torch_lib}", "-lc10", "-ltorch_cpu", f"-Wl,-rpath,{torch_lib}"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeError(f"cannot run the compiler {cxx!r}: {exc}") from None
    if r.returncode != 0:
        first = next((ln for ln in r.stderr.splitlines() if "error" in ln), r.stderr.strip()[:300])
        raise RuntimeError(f"{cxx} failed on {_SOURCE.name}: {first}")
    os.replace(tmp, lib)
    return lib


def install() -> str:
    """Builds (when needed), loads the library and adds the callback; returns "on" or why not.
    Called once, in the zygote, before any fork. Without it the launch gate keeps the profiler's
    3 traced calls only (``LaunchRecord.op_watch`` says so)."""
    global _lib, _why, _cap, _names, _counts
    if _lib is not None:
        return "on"
    try:
        path = _built_path()
        if not path.is_file():
            # Built in a process of its own: importing torch.utils.cpp_extension initialised CUDA
            # in the zygote on the H200, and no forked worker could use the GPU after it.
            r = subprocess.run([sys.executable, "-m", "kgym_worker.opwatch"], capture_output=True, text=True,
                               timeout=600, env=os.environ.copy())
            if r.returncode != 0 or not path.is_file():
                tail = (r.stderr or r.stdout).strip().splitlines()
                raise RuntimeError(tail[-1] if tail else f"the build exited with {r.returncode}")
        lib = ctypes.CDLL(str(path))
        lib.kgym_opwatch_take.argtypes = [ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_longlong), ctypes.c_int]
        lib.kgym_opwatch_take.restype = ctypes.c_int
        lib.kgym_opwatch_set.argtypes = [ctypes.c_int]
        lib.kgym_opwatch_overflow.restype = ctypes.c_longlong
        lib.kgym_opwatch_slots.restype = ctypes.c_int
        if lib.kgym_opwatch_install() != 1:
            raise RuntimeError("at::addGlobalCallback gave no handle")
    except (OSError, RuntimeError, AttributeError) as exc:
        _why = f"unavailable: {exc}"
        return _why
    _cap = int(lib.kgym_opwatch_slots())
    _names, _counts = (ctypes.c_char_p * _cap)(), (ctypes.c_longlong * _cap)()
    _lib, _why = lib, "on"
    return "on"


def status() -> str:
    return "on" if _lib is not None else _why


def on() -> None:
    if _lib is not None:
        _lib.kgym_opwatch_set(1)


def off() -> None:
    if _lib is not None:
        _lib.kgym_opwatch_set(0)


def take() -> dict:
    """{op name: count} since the last take (counted only while on), then zeroed; every entry
    of the table is read. An "<overflow>" entry counts ops that found no free slot: their names
    are unknown, so ``integrity.aten_category`` files them as compute (red team rt34 filled the
    table with 4100 ops of its own to hide ATen's GEMM behind it)."""
    if _lib is None:
        return {}
    names, counts = _names, _counts
    n = _lib.kgym_opwatch_take(names, counts, _cap)
    out = {}
    for i in range(n):
        if names[i]:
            k = names[i].decode(errors="replace")
            out[k] = out.get(k, 0) + int(counts[i])
    over = int(_lib.kgym_opwatch_overflow())
    if over:
        out["<overflow>"] = over
    return out


if __name__ == "__main__":  # the zygote's build step, in a process of its own
    try:
        print(build())
    except RuntimeError as exc:
        print(f"kgym op watch: {exc}", file=sys.stderr)
        sys.exit(1)
