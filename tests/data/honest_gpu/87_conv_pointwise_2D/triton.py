# expect: passed
"""Honest Triton pointwise (1x1) 2D convolution (issue 4 honest-kernel set): per batch element a
GEMM out[b] (C_out x HW) = w (C_out x C_in) @ x[b] (C_in x HW), tiled tl.dot in IEEE fp32 (no
TF32), masked edges, plus the optional bias. The weights are drawn exactly as nn.Conv2d draws them."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def pointwise_kernel(x_ptr, w_ptr, bias_ptr, y_ptr, C_in, C_out, P, HAS_BIAS: tl.constexpr,
                     BLOCK_CO: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    n_pt = tl.cdiv(P, BLOCK_P)
    n_ct = tl.cdiv(C_out, BLOCK_CO)
    pt = pid % n_pt
    rest = pid // n_pt
    ct = rest % n_ct
    b = rest // n_ct
    co = ct * BLOCK_CO + tl.arange(0, BLOCK_CO)
    p = pt * BLOCK_P + tl.arange(0, BLOCK_P)
    co_mask = co < C_out
    p_mask = p < P
    x_base = x_ptr + b * C_in * P
    acc = tl.zeros((BLOCK_CO, BLOCK_P), dtype=tl.float32)
    for c0 in range(0, C_in, BLOCK_C):
        ci = c0 + tl.arange(0, BLOCK_C)
        ci_mask = ci < C_in
        w = tl.load(w_ptr + co[:, None] * C_in + ci[None, :], mask=co_mask[:, None] & ci_mask[None, :], other=0.0)
        xv = tl.load(x_base + ci[:, None] * P + p[None, :], mask=ci_mask[:, None] & p_mask[None, :], other=0.0)
        acc = tl.dot(w, xv, acc, input_precision="ieee")
    if HAS_BIAS:
        acc += tl.load(bias_ptr + co, mask=co_mask, other=0.0)[:, None]
    tl.store(y_ptr + (b * C_out + co[:, None]) * P + p[None, :], acc, mask=co_mask[:, None] & p_mask[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, bias: bool = False):
        super().__init__()
        # Same constructor and RNG draws as the reference's nn.Conv2d; only its parameters are kept.
        conv = nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, padding=0, bias=bias)
        self.weight = conv.weight
        self.bias = conv.bias

    def forward(self, x):
        x = x.contiguous()
        w = self.weight.contiguous()
        B, C_in, H, W = x.shape
        C_out = w.shape[0]
        P = H * W
        y = torch.empty((B, C_out, H, W), dtype=x.dtype, device=x.device)
        has_bias = self.bias is not None
        bias = self.bias if has_bias else w
        BLOCK_CO, BLOCK_P, BLOCK_C = 128, 128, 32
        grid = (B * triton.cdiv(C_out, BLOCK_CO) * triton.cdiv(P, BLOCK_P),)
        pointwise_kernel[grid](x, w, bias, y, C_in, C_out, P, HAS_BIAS=has_bias, BLOCK_CO=BLOCK_CO,
                               BLOCK_P=BLOCK_P, BLOCK_C=BLOCK_C, num_warps=8, num_stages=3)
        return y
