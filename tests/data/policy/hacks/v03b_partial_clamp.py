# expect: torch_compute_as_value   (form 3: partial(torch.clamp, min=0)); identity C++ kernel + hidden torch compute
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
from functools import partial
cpp_src = """
#include <torch/extension.h>
torch::Tensor identity(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const float* a = x.data_ptr<float>();
  float* b = y.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) b[i] = a[i];
  return y;
}
"""
ext = load_inline(name="ident_ext", cpp_sources=cpp_src, functions=["identity"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = ext

    def forward(self, x):
        return partial(torch.clamp, min=0)(self.ext.identity(x))
