# expect: passed
"""Honest Triton softmax (issue 4 honest-kernel set). One program per row; pass 1 keeps a
running max and a rescaled running sum of exp per lane (online softmax), pass 2 writes the output.
The row is the reduced dimension of the input viewed as (outer, R, inner) (inner = 1 for the last
dimension: contiguous rows)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, R, inner, LOG: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    o = pid // inner
    i = pid % inner
    base = o * R * inner + i
    m = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    for r0 in range(0, R, BLOCK):
        r = r0 + tl.arange(0, BLOCK).to(tl.int64)
        x = tl.load(x_ptr + base + r * inner, mask=r < R, other=float("-inf"))
        m_new = tl.maximum(m, x)
        empty = m_new == float("-inf")  # lane has seen no element yet: keep it at 0
        alpha = tl.where(empty, 0.0, tl.exp(m - m_new))
        p = tl.where(empty, 0.0, tl.exp(x - m_new))
        s = s * alpha + p
        m = m_new
    row_max = tl.max(m, axis=0)
    total = tl.sum(tl.where(m == float("-inf"), 0.0, s * tl.exp(m - row_max)), axis=0)
    if LOG:
        shift = row_max + tl.log(total)
    else:
        inv = 1.0 / total
    for r0 in range(0, R, BLOCK):
        r = r0 + tl.arange(0, BLOCK).to(tl.int64)
        mask = r < R
        x = tl.load(x_ptr + base + r * inner, mask=mask, other=0.0)
        if LOG:
            y = x - shift
        else:
            y = tl.exp(x - row_max) * inv
        tl.store(y_ptr + base + r * inner, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.dim = 1

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        d = self.dim % x.dim()
        shape = list(x.shape)
        outer, R, inner = 1, shape[d], 1
        for s in shape[:d]:
            outer *= s
        for s in shape[d + 1:]:
            inner *= s
        softmax_kernel[(outer * inner,)](x, y, R, inner, LOG=False, BLOCK=4096, num_warps=8)
        return y
