# expect: passed
"""Honest Triton sum over one dimension (issue 4 honest-kernel set). The input is viewed as
(outer, R, inner) with R the reduced size; each program reduces R for BLOCK_I consecutive inner
positions (coalesced loads), accumulating a BLOCK_R x BLOCK_I tile in fp32."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def reduce_kernel(x_ptr, y_ptr, R, inner, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)  # one flat grid: (outer x inner blocks) can exceed 65535
    n_ib = tl.cdiv(inner, BLOCK_I)
    o = pid // n_ib
    i = (pid % n_ib) * BLOCK_I + tl.arange(0, BLOCK_I)
    imask = i < inner
    base = x_ptr + o * R * inner
    acc = tl.zeros((BLOCK_R, BLOCK_I), dtype=tl.float32)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R).to(tl.int64)
        m = (r < R)[:, None] & imask[None, :]
        acc += tl.load(base + r[:, None] * inner + i[None, :], mask=m, other=0.0)
    total = tl.sum(acc, axis=0)
    tl.store(y_ptr + o * inner + i, total, mask=imask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        x = x.contiguous()
        d = self.dim % x.dim()
        shape = list(x.shape)
        outer, R, inner = 1, shape[d], 1
        for s in shape[:d]:
            outer *= s
        for s in shape[d + 1:]:
            inner *= s
        out_shape = shape[:d] + [1] + shape[d + 1:]
        y = torch.empty(out_shape, dtype=x.dtype, device=x.device)
        BLOCK_R, BLOCK_I = 32, 256
        reduce_kernel[(outer * triton.cdiv(inner, BLOCK_I),)](x, y, R, inner, BLOCK_R=BLOCK_R, BLOCK_I=BLOCK_I,
                                                             num_warps=8)
        return y
