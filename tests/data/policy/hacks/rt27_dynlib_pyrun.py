# expect: dynamic_code   (red team rt27: at::DynamicLibrary reached PyRun_SimpleString; strict passed)
# at::DynamicLibrary(nullptr) = dlopen(NULL): the process's global scope; PyRun_SimpleString by a
# name assembled at run time runs Python code the policy never read. Throws if it did not run.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = """
#include <torch/extension.h>
#include <ATen/DynamicLibrary.h>
#include <string>
using Run = int (*)(const char*);
static int run_once() {
  static at::DynamicLibrary lib(nullptr, nullptr, true);
  const std::string name = std::string("Py") + "Run_SimpleString";
  Run r = reinterpret_cast<Run>(lib.sym(name.c_str()));
  return r("import os\\nos.environ['RT27_RAN'] = '1'\\n");
}
torch::Tensor relu_fwd(torch::Tensor x) {
  static int rc = run_once();
  TORCH_CHECK(rc == 0, "python did not run");
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* a = xc.data_ptr<float>();
  float* b = y.data_ptr<float>();
  for (int64_t i = 0; i < xc.numel(); ++i) b[i] = a[i] > 0.f ? a[i] : 0.f;
  return y;
}
"""
ext = load_inline(name="rt27_dynlib_pyrun", cpp_sources=cpp_src, functions=["relu_fwd"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu_fwd(x)
