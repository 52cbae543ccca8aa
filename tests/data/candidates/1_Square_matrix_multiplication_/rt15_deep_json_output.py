# expect: runtime_error
# Session 10: refused as a broken protocol (channel.cpp: at most 4096 blobs, JSON nested at most 64
# levels) or, for the forged task failure, blamed on the candidate once the reference loads the task.
# rt15: variant of rt15_deep_json_dump without harness_error: the run_case reply's "output" is
# [[[...]]] 3,000,000 deep; engine.cpp forwards it to the reference inside the compare request,
# whose serialisation (json::dump, recursive) overflows the supervisor's stack.
import os, struct, time
import torch
import torch.nn as nn

DEPTH = 3_000_000

class ModelNew(nn.Module):
    def forward(self, A, B):
        data = (b'{"ok": true, "reruns": 2, "output_plain_tensor": true, "output": ' + b"[" * DEPTH +
                b"]" * DEPTH + b"}")
        frame = struct.pack("<II", len(data), 0) + data
        view = memoryview(frame)
        while view:
            view = view[os.write(3, view):]
        time.sleep(20)
        os._exit(0)
