# expect: passed
# Honest ReLU whose construction takes 8 s of CPU time (a stand-in for a load_inline or Triton
# build). Judged beside a_staller.py with --jobs 2 and --timeout-load 25: it is stopped for 30 s
# while a_staller is timed, and its load deadline moves by that time (runner::stopped_ms).
import time

import torch
import torch.nn as nn


def _build(cpu_seconds):
    t0, acc = time.process_time(), 0
    while time.process_time() - t0 < cpu_seconds:
        acc += sum(range(10000))
    return acc


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.built = _build(8.0)

    def forward(self, x):
        return torch.relu(x)
