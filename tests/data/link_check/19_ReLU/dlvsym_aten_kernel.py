# expect: policy_rejected
# A reach for ATen's CPU ReLU kernel (at::cpu::clamp_min, past the dispatcher, so the op trace
# would not see it) through dlvsym, a loader call the source scan does not list, by a mangled name
# put together at run time. In torch 2.11's CPU build the lookup finds nothing (libtorch is not in
# the extension's RTLD_NEXT scope) and the loop computes the ReLU, so the candidate is correct: only
# the link check, which reads what the built extension imports (dlvsym), rejects it, before any
# case runs, whatever the lookup would have found.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = """
#include <torch/extension.h>
#include <dlfcn.h>
#include <string>
using Kernel = at::Tensor (*)(const at::Tensor&, const c10::Scalar&);
static Kernel find_kernel() {
  const std::string name = std::string(1, '_') + "ZN2at3cpu9clamp_minERKNS_6TensorERKN3c106ScalarE";
  return reinterpret_cast<Kernel>(dlvsym(RTLD_NEXT, name.c_str(), "GLIBC_2.2.5"));
}
torch::Tensor relu_fwd(torch::Tensor x) {
  static Kernel k = find_kernel();
  if (k) return k(x, 0);
  auto y = torch::empty_like(x);
  const float* a = x.data_ptr<float>();
  float* b = y.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) b[i] = a[i] > 0.f ? a[i] : 0.f;
  return y;
}
"""
ext = load_inline(name="kgym_link_dlvsym_relu", cpp_sources=cpp_src, functions=["relu_fwd"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu_fwd(x)
