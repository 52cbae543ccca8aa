# expect: cpp_library_compute   (red team rt28: XNNPACK's clamp, exported by libtorch_cpu; strict passed)
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = r"""
#include <torch/extension.h>
#include <xnnpack.h>
#include <limits>
torch::Tensor relu_fwd(torch::Tensor x) {
  static bool init = (xnn_initialize(nullptr) == xnn_status_success);
  (void)init;
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  union xnn_unary_params p;
  p.clamp.min = 0.0f;
  p.clamp.max = std::numeric_limits<float>::infinity();
  size_t n = xc.numel();
  xnn_run_unary_elementwise_nc(xnn_unary_clamp, xnn_datatype_fp32, xnn_datatype_fp32, &p, nullptr, nullptr, 0,
                               1, n, n, n, nullptr, xc.data_ptr<float>(), y.data_ptr<float>());
  return y;
}
"""
ext = load_inline(name="rt28_a1b_xnnpack_clamp", cpp_sources=cpp_src, functions=["relu_fwd"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu_fwd(x)
