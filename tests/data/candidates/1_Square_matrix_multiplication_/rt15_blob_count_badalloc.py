# expect: runtime_error
# Session 10: refused as a broken protocol (channel.cpp: at most 4096 blobs, JSON nested at most 64
# levels) or, for the forged task failure, blamed on the candidate once the reference loads the task.
# rt15: a reply frame on fd 3 that announces 2^32-1 blobs. channel.cpp does
# m.blobs.resize(head[1]) (4.29e9 x 56-byte Blob = 240 GB) before reading any: std::bad_alloc,
# which no handler in engine.cpp/cmd_eval.cpp catches except main's "internal error" (exit 3).
import json, os, struct, time
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, A, B):
        data = json.dumps({"ok": True}).encode()
        os.write(3, struct.pack("<II", len(data), 0xFFFFFFFF) + data)
        time.sleep(20)
        os._exit(0)
