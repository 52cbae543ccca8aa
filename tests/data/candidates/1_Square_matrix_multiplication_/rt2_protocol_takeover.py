# expect: contract_violation|incorrect|timing_invalid|runtime_error
# why contract_violation|incorrect|timing_invalid|runtime_error: which check meets the forged
#   replies first depends on where the timing phase is when it takes over: a reply out of protocol
#   (contract_violation or runtime_error), a missing recheck (incorrect) or uncommitted wall
#   requests (timing_invalid). Never passed.
# Red team (2026-12-01, helper on CPU): writes forged replies on the worker's socket (passed 2333x: empty kept list, instant wall replies). Missing rechecks and uncommitted wall requests now fail.
# Red team: takes over the worker's result channel from inside forward (fd 3 is the candidate
# process's own socket to the supervisor; frames carry no authentication). Once the timing phase
# starts (second fresh torch seed in a row: a warm-up call), forward never returns: it answers the
# pending `time` request with forged times and an EMPTY `kept` list (the supervisor rechecks only
# what the reply lists), then serves every later request itself: `time` forged again, `wall`
# answered at once (both the calibration and the timed request take ~0 ms, so the wall-clock
# floor is ~0), `trace`, `exit`. Correctness cases are computed honestly before that.
import json
import os
import socket
import struct

import torch
import torch.nn as nn

_HEAD = struct.Struct("<II")


def _send(sock, header):
    data = json.dumps(header).encode()
    sock.sendall(_HEAD.pack(len(data), 0) + data)


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


def _timing():
    return {"ok": True, "kept": [],
            "timing": {"method": "monotonic_clock", "times_ms": [0.0100, 0.0102, 0.0101, 0.0099, 0.0100],
                       "warmup": 3, "l2_flushed": False, "fresh_inputs": True, "l2_persist_reset": False,
                       "l2_persist_violations": 0, "threads_leaked": 0, "thread_detail": "",
                       "tampered": [], "precision_flags": _flags()}}


def _takeover():
    sock = socket.socket(fileno=os.dup(3))
    _send(sock, _timing())                  # the reply to the `time` request in progress
    while True:
        req = _recv(sock)
        op = req.get("op")
        if op == "time":
            _send(sock, _timing())
        elif op == "wall":
            _send(sock, {"ok": True, "host_ms": 0.0})
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

    def forward(self, A, B):
        s = torch.initial_seed()
        if s == self.last:
            self.streak = 0
        else:
            self.last = s
            self.streak += 1
            if self.streak >= 2:
                _takeover()
        return torch.matmul(A, B)
