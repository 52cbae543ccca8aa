# expect: passed
# The honest counterpart of own_context.py: the same ReLU kernel on the current stream, with c10's
# device guard and the CUDA helpers an extension uses, and no driver API. It must pass strict:
# the link check reads its imports (nm -D) and its linked libraries (readelf -d: c10, torch,
# torch_cuda, the CUDA runtime; since session 18 a library outside these is rejected), and
# neither may reject an honest CUDA build on the H200.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.f);
}

torch::Tensor relu_fwd(torch::Tensor x) {
  const c10::cuda::CUDAGuard guard(x.device());
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const int64_t n = xc.numel();
  const int threads = 256;
  const int blocks = (int)((n + threads - 1) / threads);
  relu_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""
cpp_src = "torch::Tensor relu_fwd(torch::Tensor x);"
ext = load_inline(name="kgym_link_honest_cuda", cpp_sources=cpp_src, cuda_sources=cuda_src, functions=["relu_fwd"],
                  verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu_fwd(x)
