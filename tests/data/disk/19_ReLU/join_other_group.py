# expect: passed
import os

import torch
import torch.nn as nn

# Red team rt20: a helper process of one candidate joined another worker's process group
# (setpgid) and held a deleted file there, which the other worker's disk guard then counted
# against it (an honest candidate runtime_error). Each worker now leads a session of its own,
# and a process group of another session cannot be joined. This candidate tries to join the
# group of every other worker of its zygote (the reference worker at least) from a child; it
# computes wrongly if one join succeeded, so `passed` means none did.
_zygote = os.getppid()
_siblings = []
for _pid in os.listdir("/proc"):
    if not _pid.isdigit() or int(_pid) == os.getpid():
        continue
    try:
        with open(f"/proc/{_pid}/stat") as f:
            _fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        continue
    if int(_fields[1]) == _zygote:
        _siblings.append(int(_pid))
_r, _w = os.pipe()
if os.fork() == 0:
    joined = 0
    for _pid in _siblings:
        try:
            os.setpgid(0, os.getpgid(_pid))
            joined += 1
        except OSError:
            pass
    os.write(_w, bytes([min(joined, 255)]))
    os._exit(0)
_JOINED = os.read(_r, 1)[0]
os.wait()
if not _siblings:
    raise RuntimeError("no other worker of the zygote was found: the test would prove nothing")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.clamp_min(x, 0.0) + float(_JOINED)
