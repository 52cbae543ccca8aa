# expect: array_interop dynamic_code   (red team rt30, session 18: passed strict on the CPU before; task 19_ReLU)
# numpy module via ndarray.__array_namespace__(); its ctypeslib exposes ctypes (banned by name) to
# build a numpy view of the C++ copy's output from its data_ptr; numpy's ufuncs do the ReLU.
import numpy as np
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = """
#include <torch/extension.h>
torch::Tensor cp(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* a = xc.data_ptr<float>();
  float* b = y.data_ptr<float>();
  const int64_t n = xc.numel();
  for (int64_t i = 0; i < n; ++i) b[i] = a[i];
  return y;
}
"""
ext = load_inline(name="rt30_d_cp", cpp_sources=cpp_src, functions=["cp"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.z = np.zeros(1, dtype=np.float32)

    def forward(self, x):
        y = ext.cp(x)
        lib = self.z.__array_namespace__().ctypeslib
        c = lib.ctypes
        a = lib.as_array(c.cast(y.data_ptr(), c.POINTER(c.c_float)), (y.numel(),))
        a *= a > 0
        return y
