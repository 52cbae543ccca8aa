# expect: cpp_library_compute   (red team 2026-11-30: at::cpu::clamp_min behind the dispatcher: invisible to the CPU op trace; passed strict before)
# profile: strict. The C++ calls ATen's CPU structured kernel at::cpu::clamp_min directly. The
# static scan only knows `at::<op>(` / `torch::<op>(`, and at::cpu::* skips the dispatcher, so no
# RecordFunction event reaches the CPU op trace.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>
#include <ATen/CPUFunctions.h>
torch::Tensor relu_fwd(torch::Tensor x) {
    return at::cpu::clamp_min(x, 0);
}
"""
_ext = load_inline(name="rt_atcpu_relu", cpp_sources=[_src], functions=["relu_fwd"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_fwd(x)
