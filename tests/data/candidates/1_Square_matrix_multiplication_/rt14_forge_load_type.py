# expect: runtime_error
# Session 10: every output description is checked before the reference reads it
# (tensors.meta_problem: a failed case), and reply fields of the wrong type are the candidate's
# protocol breach (engine.cpp reply_field and the evaluation's catch); before: task_error, or kgym exited 3.
# Red team rt14: at import, writes a `load` reply on fd 3 whose "parsed" is a string:
# r.header.get_to(m.load) throws nlohmann type_error, which engine.cpp does not catch there.
import json, os, socket, struct
import torch
import torch.nn as nn

_s = socket.socket(fileno=os.dup(3))
_d = json.dumps({"ok": True, "parsed": "yes", "model_new_defined": True}).encode()
_s.sendall(struct.pack("<II", len(_d), 0) + _d)

class ModelNew(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)
