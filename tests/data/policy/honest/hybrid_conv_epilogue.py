# Honest under hybrid only: the convolution is the one allowed library op; bias + GELU-tanh is a
# custom kernel. Must pass hybrid and be rejected under strict (torch conv on the forward path).
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

epilogue = """
#include <torch/extension.h>
__global__ void bias_gelu_kernel(float* y, const float* b, int n, int hw, int c) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = y[i] + b[(i / hw) % c];
  y[i] = 0.5f * v * (1.f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
}
void bias_gelu_(torch::Tensor y, torch::Tensor b) {
  int n = y.numel();
  bias_gelu_kernel<<<(n + 255) / 256, 256>>>(y.data_ptr<float>(), b.data_ptr<float>(), n,
                                              y.size(2) * y.size(3), y.size(1));
}
"""

ext = load_inline(name="bias_gelu", cpp_sources="void bias_gelu_(torch::Tensor y, torch::Tensor b);",
                  cuda_sources=epilogue, functions=["bias_gelu_"])


class ModelNew(nn.Module):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(cout, cin, k, k) * 0.02)
        self.bias = nn.Parameter(torch.zeros(cout))

    def forward(self, x):
        y = F.conv2d(x, self.weight)
        ext.bias_gelu_(y, self.bias)
        return y
