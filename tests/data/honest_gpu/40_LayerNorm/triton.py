# expect: passed
"""Honest Triton LayerNorm over the trailing normalized_shape (issue 4 honest-kernel set), with
the elementwise affine weight and bias of nn.LayerNorm (ones and zeros at init, applied anyway).
A row (here 64 x 256 x 256 values) is split into CHUNK-sized pieces so that every SM has work:
  1. partial sums per chunk;
  2. mean = total / N, partial sums of (x - mean)^2 per chunk (two-pass variance, no cancellation);
  3. var = total / N, y = (x - mean) / sqrt(var + eps) * weight + bias.
All accumulation in fp32."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_total(p_ptr, row, n_chunks, BLOCK_P: tl.constexpr):
    acc = tl.zeros((BLOCK_P,), dtype=tl.float32)
    for c0 in range(0, n_chunks, BLOCK_P):
        c = c0 + tl.arange(0, BLOCK_P)
        acc += tl.load(p_ptr + row * n_chunks + c, mask=c < n_chunks, other=0.0)
    return tl.sum(acc, axis=0)


@triton.jit
def ln_partial_sum(x_ptr, psum_ptr, N, n_chunks, CHUNK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    row = pid // n_chunks
    c = pid % n_chunks
    j = c * CHUNK + tl.arange(0, CHUNK)
    x = tl.load(x_ptr + row * N + j, mask=j < N, other=0.0)
    tl.store(psum_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def ln_partial_sq(x_ptr, psum_ptr, psq_ptr, N, n_chunks, CHUNK: tl.constexpr, BLOCK_P: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    row = pid // n_chunks
    c = pid % n_chunks
    mean = _row_total(psum_ptr, row, n_chunks, BLOCK_P) / N
    j = c * CHUNK + tl.arange(0, CHUNK)
    mask = j < N
    x = tl.load(x_ptr + row * N + j, mask=mask, other=0.0)
    d = tl.where(mask, x - mean, 0.0)
    tl.store(psq_ptr + pid, tl.sum(d * d, axis=0))


@triton.jit
def ln_apply(x_ptr, w_ptr, b_ptr, y_ptr, psum_ptr, psq_ptr, N, n_chunks, eps,
             CHUNK: tl.constexpr, BLOCK_P: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    row = pid // n_chunks
    c = pid % n_chunks
    mean = _row_total(psum_ptr, row, n_chunks, BLOCK_P) / N
    var = _row_total(psq_ptr, row, n_chunks, BLOCK_P) / N
    rstd = 1.0 / tl.sqrt_rn(var + eps)
    j = c * CHUNK + tl.arange(0, CHUNK)
    mask = j < N
    x = tl.load(x_ptr + row * N + j, mask=mask, other=0.0)
    w = tl.load(w_ptr + j, mask=mask, other=0.0)
    b = tl.load(b_ptr + j, mask=mask, other=0.0)
    tl.store(y_ptr + row * N + j, (x - mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = 1e-5
        self.weight = nn.Parameter(torch.ones(self.normalized_shape))
        self.bias = nn.Parameter(torch.zeros(self.normalized_shape))

    def forward(self, x):
        x = x.contiguous()
        w = self.weight.contiguous()
        b = self.bias.contiguous()
        y = torch.empty_like(x)
        N = w.numel()
        rows = x.numel() // N
        CHUNK, BLOCK_P = 4096, 1024
        n_chunks = triton.cdiv(N, CHUNK)
        psum = torch.empty((rows, n_chunks), dtype=torch.float32, device=x.device)
        psq = torch.empty((rows, n_chunks), dtype=torch.float32, device=x.device)
        grid = (rows * n_chunks,)
        ln_partial_sum[grid](x, psum, N, n_chunks, CHUNK=CHUNK, num_warps=8)
        ln_partial_sq[grid](x, psum, psq, N, n_chunks, CHUNK=CHUNK, BLOCK_P=BLOCK_P, num_warps=8)
        ln_apply[grid](x, w, b, y, psum, psq, N, n_chunks, self.eps, CHUNK=CHUNK, BLOCK_P=BLOCK_P, num_warps=8)
        return y
