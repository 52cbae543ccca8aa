# Honest: a tiled fp32 GEMM in CUDA via load_inline, launched on the current stream, with the
# usual checks, dispatch and pybind module. Must pass strict and hybrid.
import math

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

matmul_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

#define TILE 32
#define CHECK_CUDA(x) TORCH_CHECK(x.is_cuda(), #x " must be a CUDA tensor")

template <typename scalar_t>
__global__ void __launch_bounds__(TILE * TILE) matmul_tiled_kernel(
    const scalar_t* __restrict__ A, const scalar_t* __restrict__ B, scalar_t* __restrict__ C,
    int M, int N, int K) {
  __shared__ scalar_t As[TILE][TILE];
  __shared__ scalar_t Bs[TILE][TILE + 1];
  int row = blockIdx.y * TILE + threadIdx.y;
  int col = blockIdx.x * TILE + threadIdx.x;
  scalar_t acc = 0;
  for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
    As[threadIdx.y][threadIdx.x] = (row < M && t * TILE + threadIdx.x < K) ? A[row * K + t * TILE + threadIdx.x] : 0;
    Bs[threadIdx.y][threadIdx.x] = (col < N && t * TILE + threadIdx.y < K) ? B[(t * TILE + threadIdx.y) * N + col] : 0;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

torch::Tensor matmul_cuda(torch::Tensor A, torch::Tensor B) {
  CHECK_CUDA(A); CHECK_CUDA(B);
  auto M = A.size(0), K = A.size(1), N = B.size(1);
  auto C = torch::empty({M, N}, A.options());
  dim3 block(TILE, TILE);
  dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES(A.scalar_type(), "matmul_cuda", ([&] {
    matmul_tiled_kernel<scalar_t><<<grid, block, 0, stream>>>(
        A.data_ptr<scalar_t>(), B.data_ptr<scalar_t>(), C.data_ptr<scalar_t>(), M, N, K);
  }));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return C;
}
"""

matmul_cpp = "torch::Tensor matmul_cuda(torch::Tensor A, torch::Tensor B);"

matmul_ext = load_inline(
    name="matmul_tiled",
    cpp_sources=matmul_cpp,
    cuda_sources=matmul_source,
    functions=["matmul_cuda"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class ModelNew(nn.Module):
    """C = A @ B with a shared-memory tiled kernel."""

    def __init__(self):
        super(ModelNew, self).__init__()
        self.scale = math.sqrt(1.0)

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        A = A.contiguous()
        B = B.contiguous()
        assert A.shape[1] == B.shape[0], "inner dimensions must match"
        return matmul_ext.matmul_cuda(A, B)
