# expect: introspection   (red team rt28: an at::ThreadLocalStateGuard restored a state saved outside the trace, and clamp_min ran unseen by the CPU op trace; strict passed)
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = r"""
#include <torch/extension.h>
#include <ATen/ThreadLocalState.h>
// captured when the extension is loaded (no profiler running then)
static at::ThreadLocalState g_clean_state;
torch::Tensor relu_fwd(torch::Tensor x) {
  at::ThreadLocalStateGuard g(g_clean_state);
  return x.clamp_min(0);
}
"""
ext = load_inline(name="rt28_a2_tls_guard_clamp", cpp_sources=cpp_src, functions=["relu_fwd"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu_fwd(x)
