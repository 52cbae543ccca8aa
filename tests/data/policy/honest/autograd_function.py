# Honest: the kernel wrapped in a torch.autograd.Function and reached through .apply, with the
# extension handle kept on the module. Must pass strict and hybrid.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>
__global__ void scale_kernel(const float* x, float* y, float s, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = x[i] * s;
}
torch::Tensor scale(torch::Tensor x, double s) {
  auto y = torch::empty_like(x);
  int n = x.numel();
  scale_kernel<<<std::min((n + 255) / 256, 4096), 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), (float)s, n);
  return y;
}
"""

ext = load_inline("scale_ext", cpp_sources="torch::Tensor scale(torch::Tensor x, double s);",
                  cuda_sources=source, functions=["scale"])


class ScaleFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, s):
        ctx.s = s
        return ext.scale(x.contiguous(), s)

    @staticmethod
    def backward(ctx, grad):
        return ext.scale(grad.contiguous(), ctx.s), None


class ModelNew(nn.Module):
    def __init__(self, s: float = 2.0):
        super().__init__()
        self.s = s

    def forward(self, x):
        return ScaleFn.apply(x, self.s)
