# expect: contract_violation
import threading
import time

import torch
import torch.nn as nn

# H02 on the GPU: returns an empty buffer; a thread launches the kernel that fills it after the
# call returned. Thread census (D8) and the trace (kernels outside the call's window) see it.


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)

        def fill():
            time.sleep(0.05)
            y.copy_(torch.relu(x))

        threading.Thread(target=fill, daemon=True).start()
        return y
