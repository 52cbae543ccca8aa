# expect: passed
"""Honest Triton 1D convolution (issue 4 honest-kernel set), as an implicit GEMM in fp32:
out[b, co, l] = bias[co] + sum_{ci, k} w[co, ci, k] * x[b, ci, l * stride + k * dilation - padding]
per group. Each program computes a BLOCK_CO x BLOCK_L output tile of one batch element and group;
the reduction walks the kernel taps and BLOCK_C input channels at a time with tl.dot in IEEE fp32
(no TF32). Zero padding by masks. The weights are drawn exactly as nn.Conv1d draws them."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def conv1d_kernel(x_ptr, w_ptr, bias_ptr, y_ptr, C_in_g, L, C_out_g, L_out, KS, stride, padding, dilation,
                  G, HAS_BIAS: tl.constexpr, BLOCK_CO: tl.constexpr, BLOCK_L: tl.constexpr,
                  BLOCK_C: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    n_lt = tl.cdiv(L_out, BLOCK_L)
    n_ct = tl.cdiv(C_out_g, BLOCK_CO)
    lt = pid % n_lt
    rest = pid // n_lt
    ct = rest % n_ct
    rest = rest // n_ct
    g = rest % G
    b = rest // G
    co = ct * BLOCK_CO + tl.arange(0, BLOCK_CO)       # within the group
    lo = lt * BLOCK_L + tl.arange(0, BLOCK_L)
    co_mask = co < C_out_g
    lo_mask = lo < L_out
    co_glob = g * C_out_g + co
    x_base = x_ptr + (b * G + g) * C_in_g * L
    acc = tl.zeros((BLOCK_CO, BLOCK_L), dtype=tl.float32)
    for k in range(0, KS):
        pos = lo * stride + k * dilation - padding
        pos_mask = lo_mask & (pos >= 0) & (pos < L)
        for c0 in range(0, C_in_g, BLOCK_C):
            ci = c0 + tl.arange(0, BLOCK_C)
            ci_mask = ci < C_in_g
            w = tl.load(w_ptr + (co_glob[:, None] * C_in_g + ci[None, :]) * KS + k,
                        mask=co_mask[:, None] & ci_mask[None, :], other=0.0)
            xv = tl.load(x_base + ci[:, None] * L + pos[None, :], mask=ci_mask[:, None] & pos_mask[None, :],
                         other=0.0)
            acc = tl.dot(w, xv, acc, input_precision="ieee")
    if HAS_BIAS:
        acc += tl.load(bias_ptr + co_glob, mask=co_mask, other=0.0)[:, None]
    y_off = ((b * G * C_out_g + co_glob[:, None]) * L_out + lo[None, :])
    tl.store(y_ptr + y_off, acc, mask=co_mask[:, None] & lo_mask[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 dilation: int = 1, groups: int = 1, bias: bool = False):
        super().__init__()
        # Same constructor and RNG draws as the reference's nn.Conv1d; only its parameters are kept.
        conv = nn.Conv1d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                         dilation=dilation, groups=groups, bias=bias)
        self.weight = conv.weight
        self.bias = conv.bias
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        self.kernel_size = kernel_size

    def forward(self, x):
        x = x.contiguous()
        w = self.weight.contiguous()
        B, C_in, L = x.shape
        C_out = w.shape[0]
        G = self.groups
        KS = self.kernel_size
        L_out = (L + 2 * self.padding - self.dilation * (KS - 1) - 1) // self.stride + 1
        y = torch.empty((B, C_out, L_out), dtype=x.dtype, device=x.device)
        has_bias = self.bias is not None
        bias = self.bias if has_bias else w
        BLOCK_CO, BLOCK_L, BLOCK_C = 64, 128, 32
        C_out_g, C_in_g = C_out // G, C_in // G
        grid = (B * G * triton.cdiv(C_out_g, BLOCK_CO) * triton.cdiv(L_out, BLOCK_L),)
        conv1d_kernel[grid](x, w, bias, y, C_in_g, L, C_out_g, L_out, KS, self.stride, self.padding,
                            self.dilation, G, HAS_BIAS=has_bias, BLOCK_CO=BLOCK_CO, BLOCK_L=BLOCK_L,
                            BLOCK_C=BLOCK_C, num_warps=4, num_stages=3)
        return y
