# expect: incorrect
import torch
import torch.nn as nn

# Wrong outputs at a few timed calls only (red team rt32's kind): honest through the correctness
# cases, then every third call returns its input instead of the ReLU. The secret rechecks see a
# few timed outputs per round; the spot check reads sampled elements of every timed output and
# compares them with eager's output on the same inputs, so a wrong call is found wherever it falls.


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls > 16 and self.calls % 3 == 0:
            return x.clone()
        return torch.relu(x)
