# expect: dynamic_code   (red team rt27: at::DynamicLibrary found at::cpu::clamp_min by a name built at run time; strict passed, the op trace saw nothing)
# at::DynamicLibrary (ATen's own dlopen/dlsym wrapper) finds at::cpu::clamp_min in libtorch_cpu
# and calls it past the dispatcher. No fallback: a failed lookup throws.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = """
#include <torch/extension.h>
#include <ATen/DynamicLibrary.h>
#include <string>
using Kernel = at::Tensor (*)(const at::Tensor&, const c10::Scalar&);
static Kernel find_kernel() {
  static at::DynamicLibrary lib("libtorch_cpu.so", nullptr, true);
  const std::string name = std::string(1, '_') + "ZN2at3cpu9clamp_minERKNS_6TensorERKN3c106ScalarE";
  return reinterpret_cast<Kernel>(lib.sym(name.c_str()));
}
torch::Tensor relu_fwd(torch::Tensor x) {
  static Kernel k = find_kernel();
  return k(x, c10::Scalar(0.0));
}
"""
ext = load_inline(name="rt27_dynlib_atcpu", cpp_sources=cpp_src, functions=["relu_fwd"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu_fwd(x)
