# expect: cpp_library_compute   (red team rt28: NNPACK's nnp_relu__avx2, exported by libtorch_cpu; strict passed)
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = r"""
#include <torch/extension.h>
extern "C" void nnp_relu__avx2(const float* input, float* output, size_t length, float negative_slope);
torch::Tensor relu_fwd(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* a = xc.data_ptr<float>();
  float* b = y.data_ptr<float>();
  int64_t n = xc.numel();
  int64_t bulk = n & ~int64_t(7);
  if (bulk) nnp_relu__avx2(a, b, (size_t)bulk, 0.0f);
  for (int64_t i = bulk; i < n; ++i) b[i] = a[i] > 0.f ? a[i] : 0.f;
  return y;
}
"""
ext = load_inline(name="rt28_a1_nnpack_relu", cpp_sources=cpp_src, functions=["relu_fwd"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu_fwd(x)
