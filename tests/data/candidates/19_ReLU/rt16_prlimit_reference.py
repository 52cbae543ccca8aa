# expect: build_failed|runtime_error|incorrect
# why build_failed|runtime_error|incorrect: prlimit on another process raises PermissionError at
#   import (build_failed while loading, runtime_error when met later); were it to run, its zeros
#   are incorrect. Never passed, never task_error.
# Red team rt16 (CPU, session 11): a wrong candidate (zeros) that sets the reference worker's
# address-space limit to 1 MiB (prlimit: same user, no capability needed). The reference failed
# to allocate: task_error ("the task is broken") instead of incorrect, and the honest candidate
# judged after it got task_error too. Now prlimit64 may name only the caller (seccomp): the call
# raises PermissionError at import.
import os, resource
import torch
import torch.nn as nn

me, zyg = os.getpid(), os.getppid()
kids = set()
for tid in os.listdir(f"/proc/{zyg}/task"):
    kids.update(int(x) for x in open(f"/proc/{zyg}/task/{tid}/children").read().split())
for pid in kids - {me}:
    resource.prlimit(pid, resource.RLIMIT_AS, (1 << 20, 1 << 20))


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)  # wrong
