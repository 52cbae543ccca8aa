# expect: passed
# An honest candidate that writes a temporary file at import, as Triton and torch's extension
# builds do. Under the sandbox it may write only below its work folder, where TMPDIR points; the
# zygote had cached Python's temporary folder (/tmp) before forking, so on the H200 (session 11)
# every Triton candidate was runtime_error (PermissionError on /tmp/tmp...) until the worker
# re-read TMPDIR (zygote._child: tempfile.tempdir = None).
import os
import tempfile

import torch
import torch.nn as nn

with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
    f.write("kgym")
    f.flush()
    assert os.path.getsize(f.name) == 4

class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
