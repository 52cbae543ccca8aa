# expect: incorrect
import torch
import torch.nn as nn

# H21 (silent precision downgrade), CPU-visible form: the result keeps only 14 mantissa bits
# (relative error ~3e-5: inside rtol=1e-4). The float64 cross-check sees an error far above the
# float32 reference's own (which is exact for ReLU).


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        bits = y.view(torch.int32) & ~((1 << 9) - 1)
        return bits.view(torch.float32)
