# Honest (red team rt25): the candidate's own TORCH_LIBRARY op may be named like a torch op (relu).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = r"""
#include <torch/extension.h>
torch::Tensor relu_fwd(const torch::Tensor& x) {
  auto xc = x.contiguous(); auto y = torch::empty_like(xc);
  const float* a = xc.data_ptr<float>(); float* b = y.data_ptr<float>();
  for (int64_t i = 0; i < xc.numel(); ++i) b[i] = a[i] > 0.f ? a[i] : 0.f;
  return y;
}
TORCH_LIBRARY(rt25own, m) { m.def("relu(Tensor x) -> Tensor"); m.impl("relu", torch::kCPU, &relu_fwd); }
"""
load_inline(name="rt25_own_ns", cpp_sources=cpp_src, is_python_module=False, verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.ops.rt25own.relu(x)
