# expect: contract_violation
# Session 10: every output description is checked before the reference reads it
# (tensors.meta_problem: a failed case), and reply fields of the wrong type are the candidate's
# protocol breach (engine.cpp reply_field and the evaluation's catch); before: task_error, or kgym exited 3.
# Red team rt14: correctness cases honest; when timing starts, forged `time` reply on fd 3 whose
# kept outputs carry metas the reference cannot read (device "bogus") -> recheck raises in the
# reference -> task_error. MODE index_str: kept entry with a string index (nlohmann type_error).
import json, os, socket, struct
import torch
import torch.nn as nn

_HEAD = struct.Struct("<II")
MODE = "recheck_device"

def _send(sock, header, blobs=()):
    data = json.dumps(header).encode()
    sock.sendall(_HEAD.pack(len(data), len(blobs)) + data)
    for b in blobs:
        sock.sendall(struct.pack("<Q", len(b)) + b)

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
        _recv_exact(sock, blen & ((1 << 63) - 1))
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
    if MODE == "index_str":
        kept = [{"index": "x", "output": {}}]
    else:
        kept = [{"index": i, "output": {"kind": "tensor", "dtype": "float32", "shape": [n, n], "device": "bogus"}}
                for i in range(100)]
    return {"ok": True, "kept": kept,
            "timing": {"method": "monotonic_clock", "times_ms": [0.0100, 0.0102, 0.0101, 0.0099, 0.0100],
                       "warmup": 3, "l2_flushed": False, "fresh_inputs": True, "l2_persist_reset": False,
                       "l2_persist_violations": 0, "threads_leaked": 0, "thread_detail": "",
                       "tampered": [], "precision_flags": _flags()}}

def _takeover(n):
    sock = socket.socket(fileno=os.dup(3))
    _send(sock, _timing(n))
    while True:
        req = _recv(sock)
        op = req.get("op")
        if op == "exit":
            os._exit(0)
        elif op == "time":
            _send(sock, _timing(n))
        else:
            _send(sock, {"ok": True, "host_ms": 0.0})

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.last = None
        self.streak = 0

    def forward(self, A, B):
        s = torch.initial_seed()
        if s == self.last:
            self.streak = 0
        else:
            self.last = s
            self.streak += 1
            if self.streak >= 2:
                _takeover(A.shape[0])
        return torch.matmul(A, B)
