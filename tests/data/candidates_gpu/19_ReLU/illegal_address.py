# expect: runtime_error
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_out_of_bounds(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs + (1 << 40), tl.maximum(x, 0.0), mask=offs < n)  # far out of bounds


class ModelNew(nn.Module):
    """A kernel that corrupts its CUDA context (illegal address): the candidate is discarded and
    the run goes on with the next one."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        relu_out_of_bounds[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
