# expect: runtime_error
# Session 10: every output description is checked before the reference reads it
# (tensors.meta_problem: a failed case), and reply fields of the wrong type are the candidate's
# protocol breach (engine.cpp reply_field and the evaluation's catch); before: task_error, or kgym exited 3.
# Red team rt14: in the first case, writes a run_case reply on fd 3 with "harness_error": 5;
# engine.cpp reads it with value("harness_error", std::string()) -> uncaught type_error.
import json, os, socket, struct, time
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, A, B):
        s = socket.socket(fileno=os.dup(3))
        d = json.dumps({"ok": True, "harness_error": 5}).encode()
        s.sendall(struct.pack("<II", len(d), 0) + d)
        time.sleep(30)
        return torch.matmul(A, B)
