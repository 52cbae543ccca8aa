# Honest: idioms close to the value rules (torch_compute_as_value, unbound_tensor_method,
# string_attribute_access, nn_compute_module) that must not fire: a Triton grid lambda,
# functools.reduce(operator.mul, shape), getattr on the extension handle, the kernel kept in a
# dict and as a default argument, type(x).__name__, isinstance, nn.Linear as a parameter holder.
import functools
import operator

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _bias_relu(x_ptr, b_ptr, y_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs % cols, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(x + b, 0.0), mask=mask)


def bias_relu(x, b, block=1024):
    y = torch.empty_like(x)
    n = functools.reduce(operator.mul, x.shape, 1)
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    _bias_relu[grid](x, b, y, n, x.shape[-1], BLOCK=block)
    return y


KERNELS = {"bias_relu": bias_relu}


class ModelNew(nn.Module):
    def __init__(self, features=64):
        super().__init__()
        self.proj = nn.Linear(features, features)  # holds the bias only
        self.impl = getattr(KERNELS, "get")("bias_relu")

    def forward(self, x, kernel=bias_relu):
        assert isinstance(x, torch.Tensor) and type(x).__name__ == "Tensor"
        x = x.contiguous().view(-1, x.shape[-1])
        return kernel(x, self.proj.bias)
