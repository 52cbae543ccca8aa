# expect: dynamic_code   (red team rt27: py::getattr(...).__globals__['__builtins__']['exec'] ran Python from C++; strict passed)
# pybind11's py::getattr (not .attr()) walks torch.Tensor.__repr__.__globals__ to builtins.exec and
# runs Python code; the threshold used by the loop comes out of the exec'd code.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = """
#include <torch/extension.h>
namespace py = pybind11;
static float threshold() {
  py::object t = py::cast(torch::zeros({1}));
  py::object f = py::getattr(py::getattr(t, "__class__"), "__repr__");
  py::dict g = py::getattr(f, "__globals__");
  py::object b = g["__builtins__"];
  py::object ex = py::isinstance<py::dict>(b) ? py::object(b["exec"]) : py::getattr(b, "exec");
  py::dict ns;
  ex("import math\\nr = float(math.floor(0.5))\\n", ns);
  return ns["r"].cast<float>();
}
torch::Tensor relu_fwd(torch::Tensor x) {
  static float r = threshold();
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* a = xc.data_ptr<float>();
  float* b = y.data_ptr<float>();
  for (int64_t i = 0; i < xc.numel(); ++i) b[i] = a[i] > r ? a[i] : r;
  return y;
}
"""
ext = load_inline(name="rt27_pygetattr_exec", cpp_sources=cpp_src, functions=["relu_fwd"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu_fwd(x)
