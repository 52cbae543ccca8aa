# expect: passed
import torch
import torch.nn as nn

# H01: the work goes to a side stream the default-stream events do not wait for. kgym's window
# ends with a device-wide synchronize(), so the side-stream work is inside it and the time is
# honest (the trace shows the kernel inside the call's window): no fake speedup, so this is a
# correct, honestly timed candidate under the "off" profile (strict rejects streams statically).
_side = None


class ModelNew(nn.Module):
    def forward(self, x):
        global _side
        if _side is None:
            _side = torch.cuda.Stream()
        _side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(_side):
            y = torch.relu(x)
        return y
