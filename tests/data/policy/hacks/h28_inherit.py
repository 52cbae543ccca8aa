# expect: reference_inherit bare_pass torch_compute_in_forward   (H28 inheritance bypass; since session 18 the base class's forward is on the path)
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

src = """
__global__ void relu_kernel(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.f);
}
torch::Tensor relu(torch::Tensor x) {
  auto y = torch::empty_like(x);
  relu_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
  return y;
}
"""
ext = load_inline(name="relu_ext", cpp_sources="torch::Tensor relu(torch::Tensor x);", cuda_sources=src, functions=["relu"])

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)

class ModelNew(Model):
    pass
