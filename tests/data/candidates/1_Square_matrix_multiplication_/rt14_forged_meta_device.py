# expect: contract_violation
# Session 10: every output description is checked before the reference reads it
# (tensors.meta_problem: a failed case), and reply fields of the wrong type are the candidate's
# protocol breach (engine.cpp reply_field and the evaluation's catch); before: task_error, or kgym exited 3.
# Red team rt14: forges the run_case reply on fd 3 with an output meta whose "device" is not a
# device name. reference._compare calls torch.device(m["device"]) outside read_output:
# RuntimeError -> reference error -> task_error (the candidate is not blamed).
import json, os, socket, struct
import torch
import torch.nn as nn

_HEAD = struct.Struct("<II")
MODE = "device"

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

def _meta(A):
    n = A.shape[0]
    if MODE == "device":
        return {"kind": "tensor", "dtype": "float32", "shape": [n, n], "device": "bogus"}, []
    if MODE == "short_blob":  # 3 bytes for an n x n float32: view/reshape RuntimeError
        return {"kind": "tensor", "dtype": "float32", "shape": [n, n], "device": "cpu", "blob": 0}, [b"abc"]
    if MODE == "not_dict":
        return 5, []
    if MODE == "no_dtype":
        return {"kind": "tensor"}, []
    if MODE == "items_int":
        return {"kind": "list", "items": [7]}, []

def _takeover(A):
    sock = socket.socket(fileno=os.dup(3))
    meta, blobs = _meta(A)
    _send(sock, {"ok": True, "reruns": 2, "output_plain_tensor": True, "output": meta,
                 "inputs_unchanged": True, "output_stable": True, "output_aliases_input": False,
                 "rerun_tolerance_ratio": 0.0, "rerun_nonfinite_mismatches": 0, "tampered": []}, blobs)
    while True:
        req = _recv(sock)
        if req.get("op") == "exit":
            os._exit(0)
        _send(sock, {"ok": True})

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        _takeover(A)
