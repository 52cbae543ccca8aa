# expect: contract_violation
import threading
import time

import torch
import torch.nn as nn

# H02: forward returns at once; a background thread fills the output later. The thread census
# (D8) sees a thread the call started still running after it returned.


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)

        def fill():
            time.sleep(0.2)
            y.copy_(torch.relu(x))

        threading.Thread(target=fill, daemon=True).start()
        return y
