# Honest: a CuPy RawKernel launched on PyTorch's current stream, and a Triton kernel made with
# triton.jit(...) by assignment. Must pass strict and hybrid.
import cupy as cp
import torch
import torch.nn as nn
import triton
import triton.language as tl

_code = r"""
extern "C" __global__ void add_one(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + 1.0f;
}
"""
add_one = cp.RawKernel(_code, "add_one")


def _double(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


double_kernel = triton.jit(_double)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            add_one(((n + 255) // 256,), (256,), (x.data_ptr(), y.data_ptr(), cp.int32(n)))
        z = torch.empty_like(y)
        double_kernel[(triton.cdiv(n, 1024),)](y, z, n, BLOCK=1024)
        return z
