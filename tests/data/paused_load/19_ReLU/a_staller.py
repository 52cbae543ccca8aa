# expect: passed
# Red team rt13 (2026-12-01, session 9, CPU): correct ReLU that sleeps in its first call of the
# timing phase (an untimed warm-up call), while kgym keeps the other candidates' workers stopped
# so that nothing runs beside its timing (QuietDevice). It loses nothing itself; before the fix
# another candidate that was loading meanwhile lost the stop from its load time and was `timeout`.
import sys
import time

import torch
import torch.nn as nn

STALL_S = 30.0


def _in_timing():
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_name == "time_calls":
            return True
        f = f.f_back
    return False


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.stalled = False

    def forward(self, x):
        if not self.stalled and _in_timing():
            self.stalled = True
            time.sleep(STALL_S)
        return torch.relu(x)
