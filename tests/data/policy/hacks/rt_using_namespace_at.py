# expect: cpp_library_compute   (red team 2026-11-30: `using namespace at;` + unqualified clamp_min, switching to its own loop for the trace; passed strict before)
# profile: strict. The C++ calls ATen through the dispatcher, spelled so the static scan does not
# see it (`using namespace at;` then an unqualified clamp_min(...): the scan wants at::/torch::
# before the op). The run-time op trace would see it, but the trace is always the last phase, right
# after the wall-clock check, whose calls reuse one input tensor: once 5+ consecutive calls saw the
# same data pointer, later calls use a hand-written loop. Everything before that is ATen compute.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>
using namespace at;
static const void* g_last = nullptr;
static int g_same = 0;
static bool g_after_wall = false;
Tensor relu_fwd(Tensor x) {
    if (x.data_ptr() == g_last) { if (++g_same >= 4) g_after_wall = true; } else g_same = 0;
    g_last = x.data_ptr();
    if (!g_after_wall || x.data_ptr() == g_last && g_same > 0) {
        if (!g_after_wall) return clamp_min(x, 0);
    }
    auto xc = x.contiguous();
    auto y = empty_like(xc);
    const float* a = xc.data_ptr<float>();
    float* b = y.data_ptr<float>();
    for (int64_t i = 0, n = xc.numel(); i < n; ++i) b[i] = a[i] > 0.f ? a[i] : 0.f;
    return y;
}
"""
_ext = load_inline(name="rt_tracedodge", cpp_sources=[_src], functions=["relu_fwd"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_fwd(x)
