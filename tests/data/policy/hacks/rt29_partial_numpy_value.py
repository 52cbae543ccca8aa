# expect: torch_compute_as_value   (session 18, rt29's kind: numpy's compute passed as a value into a hook, not called on any path)
import functools

import numpy as np
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = """
#include <torch/extension.h>
torch::Tensor copy_fwd(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* a = xc.data_ptr<float>();
  float* b = y.data_ptr<float>();
  for (int64_t i = 0; i < xc.numel(); ++i) b[i] = a[i];
  return y;
}
"""
ext = load_inline(name="rt29_partial", cpp_sources=cpp_src, functions=["copy_fwd"], verbose=False)


def _apply(module, inputs, output, op=None):
    return torch.from_dlpack(op(np.from_dlpack(output), np.float32(0)))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_forward_hook(functools.partial(_apply, op=np.maximum))

    def forward(self, x):
        return ext.copy_fwd(x)
