# expect: passed
# Honest CPU candidate (the link check finds nothing to reject in its extension): the ReLU is a loop in a load_inline C++ extension; the output is made
# with torch::empty_like (ATen glue), so the strict CPU op trace sees no compute op.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = """
#include <torch/extension.h>
torch::Tensor relu_fwd(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* a = xc.data_ptr<float>();
  float* b = y.data_ptr<float>();
  const int64_t n = xc.numel();
  for (int64_t i = 0; i < n; ++i) b[i] = a[i] > 0.f ? a[i] : 0.f;
  return y;
}
"""
ext = load_inline(name="kgym_link_relu_honest", cpp_sources=cpp_src, functions=["relu_fwd"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu_fwd(x)
