# expect: passed
"""Honest Triton RMSNorm over dim 1 (issue 4 honest-kernel set): x / sqrt(mean(x^2, dim=1) + eps).
The input is viewed as (batch, features, inner); each program takes BLOCK_I consecutive inner
positions of one batch element (coalesced), sums squares over the features in fp32, then writes."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, y_ptr, F, inner, eps, BLOCK_I: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    n_ib = tl.cdiv(inner, BLOCK_I)
    b = pid // n_ib
    i = (pid % n_ib) * BLOCK_I + tl.arange(0, BLOCK_I)
    mask = i < inner
    base = b * F * inner
    acc = tl.zeros((BLOCK_I,), dtype=tl.float32)
    for f in range(0, F):
        x = tl.load(x_ptr + base + f * inner + i, mask=mask, other=0.0)
        acc += x * x
    rms = tl.sqrt_rn(acc / F + eps)
    for f in range(0, F):
        off = base + f * inner + i
        x = tl.load(x_ptr + off, mask=mask, other=0.0)
        tl.store(y_ptr + off, x / rms, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        shape = list(x.shape)
        F, inner = shape[1], 1
        for s in shape[2:]:
            inner *= s
        BLOCK_I = 512
        rmsnorm_kernel[(shape[0] * triton.cdiv(inner, BLOCK_I),)](x, y, F, inner, self.eps, BLOCK_I=BLOCK_I,
                                                                  num_warps=4)
        return y
