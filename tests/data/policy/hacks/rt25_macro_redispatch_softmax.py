# expect: cpp_library_compute   (red team rt25: at::redispatch spelled with C10_CONCATENATE passed strict)
# strict, CPU: ATen _softmax through at::redispatch, spelled with a header macro.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = r"""
// The gate preprocesses the C++ with every #include blanked (cxx_scan.cpp:25 stub_includes), so macros
// from torch headers stay unexpanded in both its raw and preprocessed token streams. torch's own
// C10_CONCATENATE (c10/macros/Macros.h) builds at::redispatch:: from two tokens no rule knows;
// the compiler, with the headers, sees at::redispatch::X, which skips RecordFunction (rt24 P5).
#include <torch/extension.h>
#include <ATen/RedispatchFunctions.h>
#define KS c10::DispatchKeySet(c10::DispatchKey::CPU)
torch::Tensor sm_fwd(torch::Tensor x) {
  return at::C10_CONCATENATE(redis, patch)::_softmax(KS, x, 1, false);
}
"""
ext = load_inline(name="rt25_macro_softmax", cpp_sources=cpp_src, functions=["sm_fwd"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.sm_fwd(x)
