# expect: passed|timing_invalid|contract_violation|incorrect|runtime_error, speedup <= twin
# why passed|timing_invalid|contract_violation|incorrect|runtime_error: forged times meet the
#   commitment (contract_violation) or the CPU gap rule (timing_invalid), a secret pick
#   (incorrect), a reply out of protocol (runtime_error, also the H200's .numpy() on CUDA
#   tensors), or it did the work and passes at its honest speed (bounded by its twin).
# Red team (2026-12-01, second round, CPU): forged times, honest wall calls, and a hog during the reference's calibration (timing_invalid on the CPU gap rule).
# (H200: runtime_error, the hack itself calls .numpy() on CUDA tensors.)
# Red team rt3 #3: forged times + HONEST wall calls/commitments; 3 forked CPU hogs run whenever the candidate waits (reference calibration, baselines). After the first timing round (computed
# honestly up to min_calls, outputs kept), the candidate takes over fd 3 (as rt2_protocol_takeover).
# `time`: forged tiny times, kept outputs computed honestly from the request's seeds.
# `wall`: answered at once with n fingerprints that all carry the SAME arbitrary CRC-32 (no call
#         is made). `wall_output`: the real output is computed now (untimed), then 32 mantissa LSBs
#         of its last elements are flipped (solved over GF(2): CRC is affine in the message bits)
#         so that its CRC-32 equals the committed value: the commitment check and the task check pass.
import json, os, socket, struct, zlib
import numpy as np
import torch
import torch.nn as nn

_HEAD = struct.Struct("<II")
TARGET = 0x1234ABCD
WARMUP, MIN_CALLS = 3, 1  # take over at the first timed call of round 1 (a 1-call round)


def _send(sock, header, blobs=()):
    data = json.dumps(header).encode()
    out = [_HEAD.pack(len(data), len(blobs)), data]
    for b in blobs:
        out.append(struct.pack("<Q", len(b)))
        out.append(b)
    sock.sendall(b"".join(out))


def _recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        k = sock.recv(n - len(buf))
        if not k:
            os._exit(0)
        buf += k
    return buf


def _recv(sock):
    hlen, nblobs = _HEAD.unpack(_recv_exact(sock, 8))
    header = json.loads(_recv_exact(sock, hlen))
    for _ in range(nblobs):
        (blen,) = struct.unpack("<Q", _recv_exact(sock, 8))
        _recv_exact(sock, blen)
    return header


def _flags():
    b = torch.backends
    return {"float32_matmul_precision": torch.get_float32_matmul_precision(),
            "cuda.matmul.allow_tf32": str(b.cuda.matmul.allow_tf32),
            "cudnn.allow_tf32": str(b.cudnn.allow_tf32),
            "cuda.matmul.allow_fp16_reduced_precision_reduction":
                str(b.cuda.matmul.allow_fp16_reduced_precision_reduction),
            "cuda.matmul.allow_bf16_reduced_precision_reduction":
                str(b.cuda.matmul.allow_bf16_reduced_precision_reduction)}


def _timing(n):
    return {"method": "monotonic_clock", "times_ms": [0.0100 + 0.0001 * (i % 3) for i in range(n)],
            "warmup": WARMUP, "l2_flushed": False, "fresh_inputs": True, "l2_persist_reset": False,
            "l2_persist_violations": 0, "threads_leaked": 0, "thread_detail": "",
            "tampered": [], "precision_flags": _flags()}


def _inputs(seed, n):
    torch.default_generator.manual_seed(int(seed))
    return torch.randn(n, n), torch.randn(n, n)


def _meta(t, k):
    return {"kind": "tensor", "dtype": "float32", "shape": list(t.shape), "device": "cpu", "blob": k}


def _raw(t):
    return t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def _solve_basis(K=256, m=64):
    """CRC contributions of the mantissa LSB of the last m floats; GF(2) elimination."""
    zero = zlib.crc32(bytes(K))
    rows = []
    for j in range(m):
        d = bytearray(K)
        d[K - 4 * (m - j)] ^= 1
        rows.append((zlib.crc32(bytes(d)) ^ zero, 1 << j))
    basis = []  # (vec, combo) with distinct leading bits
    for v, c in rows:
        for bv, bc in basis:
            if v ^ bv < v:
                v, c = v ^ bv, c ^ bc
        if v:
            basis.append((v, c))
            basis.sort(key=lambda x: -x[0])
    return basis, m


_BASIS = None


def _force_crc(raw, target):
    global _BASIS
    if _BASIS is None:
        _BASIS = _solve_basis()
    basis, m = _BASIS
    b = bytearray(raw)
    diff = zlib.crc32(b) ^ target
    combo = 0
    for bv, bc in basis:
        if diff ^ bv < diff:
            diff ^= bv
            combo ^= bc
    assert diff == 0
    L = len(b)
    for j in range(m):
        if combo >> j & 1:
            b[L - 4 * (m - j)] ^= 1
    assert zlib.crc32(b) == target
    return bytes(b)



import mmap, time
_FLAG = mmap.mmap(-1, 1)
_PARENT = os.getpid()


def _hog():
    k = 0
    while True:
        if _FLAG[0]:
            for _ in range(20000):
                k += 1
        else:
            time.sleep(0.0002)
        if os.getppid() != _PARENT:
            os._exit(0)


for _ in range(3):
    if os.fork() == 0:
        try:
            _hog()
        finally:
            os._exit(0)


def _serve(sock, n):
    wall = None
    while True:
        _FLAG[0] = 1
        req = _recv(sock)
        _FLAG[0] = 0
        op = req.get("op")
        if op == "time":
            w = int(req["options"]["warmup"]); mc = int(req["options"]["min_calls"])
            seeds = req["seeds"]
            want = sorted({int(k) for k in req.get("keep", []) if int(k) < mc} | {mc - 1})
            metas, blobs = [], []
            for k in want:
                A, B = _inputs(seeds[w + k], n)
                blobs.append(_raw(A @ B))
                metas.append({"index": k, "output": _meta(A, len(blobs) - 1)})
            _send(sock, {"ok": True, "timing": _timing(mc), "kept": metas}, blobs)
        elif op == "wall":
            wall = (int(req["seed"]), int(req["n"]), {})
            fps = []
            for i in range(wall[1]):   # honest: every call made, real commitments
                A, B = _inputs(wall[0] + i, n)
                wall[2][i] = _raw(A @ B)
                fps.append([{"dtype": "float32", "shape": [n, n], "crc32": zlib.crc32(wall[2][i])}])
            _send(sock, {"ok": True, "host_ms": 0.0, "fingerprints": fps})
        elif op == "wall_output":
            metas, blobs = [], []
            for k in req["indices"]:
                A, B = _inputs(wall[0] + int(k), n)
                blobs.append(wall[2][int(k)])
                metas.append(_meta(A, len(blobs) - 1))
            _send(sock, {"ok": True, "outputs": metas}, blobs)
        elif op == "trace":
            _send(sock, {"ok": True, "launch": {"traced": False, "skipped": "cpu: no kernel trace"}})
        elif op == "exit":
            os._exit(0)
        else:
            _send(sock, {"ok": True})


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.last = None
        self.streak = 0
        self.kept = {}

    def forward(self, A, B):
        s = torch.initial_seed()
        out = torch.matmul(A, B)
        if s == self.last:
            self.streak = 0
            return out
        self.last = s
        self.streak += 1
        k = self.streak - 1 - WARMUP  # timed index in the first round
        if k >= 0:
            self.kept[k] = _raw(out)
        if k == MIN_CALLS - 1:
            sock = socket.socket(fileno=os.dup(3))
            n = A.shape[0]
            metas = [{"index": i, "output": _meta(out, j)} for j, i in enumerate(sorted(self.kept))]
            _send(sock, {"ok": True, "timing": _timing(MIN_CALLS), "kept": metas},
                  [self.kept[i] for i in sorted(self.kept)])
            _serve(sock, n)
        return out
