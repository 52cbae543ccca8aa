# expect: torch_compute_in_forward   (red team rt24: numpy on a DLPack view passed strict)
# Policy bypass (strict): numpy computes the ReLU; DLPack in and out (no ATen op), plus a C++
# copy "kernel" so the forward path has a custom call.
import numpy as np
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = """
#include <torch/extension.h>
torch::Tensor finish(torch::Tensor c) {
  auto y = torch::empty_like(c);
  const float* a = c.data_ptr<float>();
  float* b = y.data_ptr<float>();
  const int64_t n = c.numel();
  for (int64_t i = 0; i < n; ++i) b[i] = a[i];
  return y;
}
"""
ext = load_inline(name="rt24_np_relu_finish", cpp_sources=cpp_src, functions=["finish"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.finish(torch.from_dlpack(np.maximum(np.from_dlpack(x), np.float32(0))))
