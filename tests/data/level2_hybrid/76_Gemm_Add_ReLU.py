# Honest under hybrid: the GEMM is the one library op (F.linear, hybrid's allowed call), the bias
# add and ReLU are one Triton kernel (on the CPU: TRITON_INTERPRET=1). The parameters are made in
# the reference's order (nn.Linear, then the bias), so the same init seed gives the same values.
# Under strict it is rejected: the library GEMM is not allowed there.
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def bias_relu_kernel(y_ptr, b_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(y_ptr + offs, mask=mask, other=0.0) + tl.load(b_ptr + offs % cols, mask=mask, other=0.0)
    tl.store(out_ptr + offs, tl.maximum(v, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = F.linear(x, self.gemm.weight).contiguous()
        out = torch.empty_like(y)
        n = y.numel()
        bias_relu_kernel[(triton.cdiv(n, 1024),)](y, self.bias.contiguous(), out, n, y.shape[-1], BLOCK=1024)
        return out
