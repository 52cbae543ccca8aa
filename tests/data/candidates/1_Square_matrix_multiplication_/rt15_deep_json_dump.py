# expect: runtime_error
# Session 10: refused as a broken protocol (channel.cpp: at most 4096 blobs, JSON nested at most 64
# levels) or, for the forged task failure, blamed on the candidate once the reference loads the task.
# rt15: a run_case reply {"harness_error": [[[[...]]]]} nested 3,000,000 deep (6 MB < 64 MB frame
# cap). nlohmann parses it iteratively, but engine.cpp evaluates the fallback
# out.header["harness_error"].dump() eagerly, and dump() recurses once per level: stack overflow.
import os, struct, time
import torch
import torch.nn as nn

DEPTH = 3_000_000

class ModelNew(nn.Module):
    def forward(self, A, B):
        data = b'{"harness_error": ' + b"[" * DEPTH + b"]" * DEPTH + b"}"
        frame = struct.pack("<II", len(data), 0) + data
        view = memoryview(frame)
        while view:
            k = os.write(3, view)
            view = view[k:]
        time.sleep(20)
        os._exit(0)
