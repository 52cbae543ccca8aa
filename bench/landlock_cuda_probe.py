"""Which write allowlist does CUDA initialisation need under kgym's Landlock sandbox?

Run on the GPU machine: python3 bench/landlock_cuda_probe.py > $OUT/landlock_probe.txt
Each variant runs in a fresh subprocess: restrict writes to a private folder plus the variant's
extra paths (zygote._restrict_writes), then initialise CUDA, run a kernel, a Triton kernel and a
load_inline-free torch op; prints ok or the error."""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHILD = r"""
import os, sys, traceback
sys.path.insert(0, os.path.join(sys.argv[1], "python"))
from kgym_worker import zygote
work = sys.argv[2]
extra = [p for p in sys.argv[3].split(":") if p]
env = {"TRITON_CACHE_DIR": os.path.join(work, "triton"), "CUDA_CACHE_PATH": os.path.join(work, "nv"),
       "TORCHINDUCTOR_CACHE_DIR": os.path.join(work, "inductor"), "TMPDIR": work}
if sys.argv[4] == "env":
    os.environ.update(env)
print("sandbox:", zygote._restrict_writes([work] + extra), flush=True)
import glob
print("nvidia nodes:", sorted(glob.glob("/dev/nvidia*")), flush=True)
try:
    import torch
    x = torch.randn(1 << 20, device="cuda")
    torch.cuda.synchronize()
    print("cuda ok", float(x.abs().sum()) > 0, flush=True)
    import triton, triton.language as tl
    @triton.jit
    def k(x_ptr, y_ptr, n, B: tl.constexpr):
        o = tl.program_id(0) * B + tl.arange(0, B)
        m = o < n
        tl.store(y_ptr + o, tl.maximum(tl.load(x_ptr + o, mask=m), 0), mask=m)
    y = torch.empty_like(x)
    k[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), B=1024)
    torch.cuda.synchronize()
    print("triton ok", bool(torch.equal(y, x.relu())), flush=True)
except BaseException:
    traceback.print_exc()
    sys.exit(1)
"""


def main():
    # H200 runs of 2026-11-30: (1) none, none+env, shm, shm+env and shm+tmp+env all failed in
    # cudaGetDeviceCount with error 304 (cudaErrorOperatingSystem); (2) CUDA initialised with
    # writes allowed below /, /proc, /dev:/proc, /dev:/proc:/sys, and not with /dev or /sys alone:
    # CUDA initialisation writes below /proc. Next bisection: which part of /proc.
    variants = [("proc-self", "/proc/self", "env"), ("proc-thread-self", "/proc/thread-self", "env"),
                ("proc-driver", "/proc/driver", "env"), ("proc-sys", "/proc/sys", "env"),
                ("proc", "/proc", "env")]
    for name, extra, env in variants:
        work = tempfile.mkdtemp(prefix="kgym-ll-")
        p = subprocess.run([sys.executable, "-c", CHILD, ROOT, work, extra, env], capture_output=True, text=True,
                           timeout=180)
        print(f"== {name}: exit {p.returncode}")
        print(p.stdout.strip())
        if p.returncode:
            print(p.stderr.strip()[-2500:])


if __name__ == "__main__":
    main()
