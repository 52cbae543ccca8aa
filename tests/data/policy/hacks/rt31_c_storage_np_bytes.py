# expect: array_interop   (red team rt31, session 18: passed strict on the CPU before; task 19_ReLU)
import torch
import torch.nn as nn
import torch.storage as S
from torch.utils.cpp_extension import load_inline

cpp_src = """
#include <torch/extension.h>
#include <cstring>
namespace py = pybind11;
py::bytes raw(torch::Tensor x) {
  auto xc = x.contiguous();
  return py::bytes(reinterpret_cast<const char*>(xc.data_ptr<float>()), xc.numel() * sizeof(float));
}
torch::Tensor fin(py::buffer b, torch::Tensor like) {
  py::buffer_info info = b.request();
  auto y = torch::empty_like(like);
  const float* a = static_cast<const float*>(info.ptr);
  float* o = y.data_ptr<float>();
  const int64_t n = y.numel();
  for (int64_t i = 0; i < n; ++i) o[i] = a[i];
  return y;
}
"""
ext = load_inline(name="rt31_c_bytes", cpp_sources=cpp_src, functions=["raw", "fin"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        a = S.np.ndarray(tuple(x.shape), S.np.float32, bytearray(ext.raw(x)))
        a *= a > 0
        return ext.fin(a, x)
