# expect: cpp_library_compute   (red team rt24: at::redispatch:: skips the op trace)
# Policy bypass (strict, CPU): the "custom kernel" is ATen's clamp_min kernel, called from C++
# through at::redispatch:: (not in the gate's list of ATen kernel namespaces). Dispatcher::
# redispatch runs no RecordFunction, and the CPU kernel dispatches nothing else, so the CPU op
# trace sees no op at all.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = """
#include <torch/extension.h>
#include <ATen/RedispatchFunctions.h>
torch::Tensor my_relu(torch::Tensor x) {
  return at::redispatch::clamp_min(c10::DispatchKeySet(c10::DispatchKey::CPU), x, 0);
}
"""
ext = load_inline(name="rt24_redispatch_clamp", cpp_sources=cpp_src, functions=["my_relu"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.my_relu(x)
