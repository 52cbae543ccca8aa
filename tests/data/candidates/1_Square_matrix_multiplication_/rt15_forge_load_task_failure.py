# expect: runtime_error
# Session 10: refused as a broken protocol (channel.cpp: at most 4096 blobs, JSON nested at most 64
# levels) or, for the forged task failure, blamed on the candidate once the reference loads the task.
# rt15: at import, a forged load reply whose failure has stage "task": engine.cpp sets
# m.task_failure from it ("the task failed inside the candidate process") -> task_error, with
# no check by the reference (whose load_task is then never asked).
import json, os, struct
import torch
import torch.nn as nn

_reply = {"ok": False, "parsed": True, "model_new_defined": True,
          "failure": {"stage": "task", "type": "RuntimeError", "message": "forged by the candidate",
                      "traceback": ""}}
_data = json.dumps(_reply).encode()
os.write(3, struct.pack("<II", len(_data), 0) + _data)
os._exit(0)

class ModelNew(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)
