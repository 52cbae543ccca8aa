# Honest under hybrid: the convolution is the one library op (F.conv2d, hybrid's allowed call),
# ReLU and the per-channel bias add are one Triton kernel (on the CPU: TRITON_INTERPRET=1). The
# parameters are made in the reference's order (nn.Conv2d, then the bias), so the same init seed
# gives the same values. Under strict it is rejected: the library convolution is not allowed there.
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def relu_bias_kernel(y_ptr, b_ptr, out_ptr, n, hw, channels, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.maximum(tl.load(y_ptr + offs, mask=mask, other=0.0), 0.0)
    c = (offs // hw) % channels
    tl.store(out_ptr + offs, v + tl.load(b_ptr + c, mask=mask, other=0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = F.conv2d(x, self.conv.weight, self.conv.bias).contiguous()
        out = torch.empty_like(y)
        n = y.numel()
        relu_bias_kernel[(triton.cdiv(n, 1024),)](y, self.bias.contiguous(), out, n, y.shape[2] * y.shape[3],
                                                  y.shape[1], BLOCK=1024)
        return out
