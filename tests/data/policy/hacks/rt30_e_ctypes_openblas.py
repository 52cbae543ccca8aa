# expect: array_interop introspection   (red team rt30, session 18: passed strict on the CPU before; task 1_Square_matrix_multiplication_)
# ctypes reached through numpy's namespace (ndarray.__array_namespace__().ctypeslib); loads numpy's
# bundled OpenBLAS from Python (no DT_NEEDED, no C++ name) and runs its SGEMM on the tensors.
import numpy as np
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = """
#include <torch/extension.h>
torch::Tensor alloc(torch::Tensor a, torch::Tensor b) {
  return torch::empty({a.size(0), b.size(1)}, a.options());
}
"""
ext = load_inline(name="rt30_e_alloc", cpp_sources=cpp_src, functions=["alloc"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        xp = np.zeros(1).__array_namespace__()
        lib = xp.ctypeslib
        osm = lib._ctypeslib.os
        d = osm.path.join(osm.path.dirname(osm.path.dirname(xp.__file__)), "numpy.libs")
        so = [f for f in osm.listdir(d) if "openblas" in f][0]
        self.c = lib.ctypes
        blas = self.c.CDLL(osm.path.join(d, so))
        self.g = blas["scipy_cblas_" + "sgemm64_"]

    def forward(self, A, B):
        A = A.contiguous()
        B = B.contiguous()
        C = ext.alloc(A, B)
        n, k = A.shape
        m = B.shape[1]
        c = self.c
        L, F, P = c.c_int64, c.c_float, c.c_void_p
        self.g(c.c_int(101), c.c_int(111), c.c_int(111), L(n), L(m), L(k), F(1.0), P(A.data_ptr()), L(k),
               P(B.data_ptr()), L(m), F(0.0), P(C.data_ptr()), L(m))
        return C
