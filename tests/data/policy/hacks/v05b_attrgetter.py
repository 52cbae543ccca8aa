# expect: string_attribute_access   (form 5: operator.attrgetter); identity C++ kernel + hidden torch compute
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
import operator
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
        return operator.attrgetter("relu")(self.ext.identity(x))()
