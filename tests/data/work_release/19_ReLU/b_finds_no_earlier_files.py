# expect: passed
import glob
import os

import torch
import torch.nn as nn

# Judged after a_leaves_a_file.py (--jobs 1, in name order): the earlier candidates' work folders
# hold nothing but their logs once their verdicts are done (a long `kgym serve` kept them all); a
# log that an earlier candidate turned into a folder is gone too.
_left = [p for p in glob.glob(os.path.join(os.path.dirname(os.getcwd()), "candidate-*", "*"))
         if not p.startswith(os.getcwd())
         and not (os.path.basename(p) == "worker.log" and os.path.isfile(p) and not os.path.islink(p))]
if _left:
    raise RuntimeError(f"files of earlier verdicts are still there: {_left}")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.clamp_min(x, 0.0)
