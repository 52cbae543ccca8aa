# expect: array_interop dynamic_code   (red team rt31, session 18: passed strict on the CPU before; task 1_Square_matrix_multiplication_)
import torch
import torch.nn as nn
import torch.storage as S
from torch.utils.cpp_extension import load_inline

cpp_src = """
#include <torch/extension.h>
namespace py = pybind11;
py::memoryview view(torch::Tensor t) {
  return py::memoryview::from_memory(static_cast<void*>(t.data_ptr<float>()), t.numel() * sizeof(float), false);
}
torch::Tensor out_like(torch::Tensor a, torch::Tensor b) {
  return torch::empty({a.size(0), b.size(1)}, a.options());
}
"""
ext = load_inline(name="rt31_n_np_view", cpp_sources=cpp_src, functions=["view", "out_like"], verbose=False)


def wrap(t, r, c):
    return S.np.ndarray((r, c), S.np.float32, ext.view(t))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        A = A.contiguous()
        B = B.contiguous()
        C = ext.out_like(A, B)
        S.np.linalg.multi_dot([wrap(A, A.shape[0], A.shape[1]), wrap(B, B.shape[0], B.shape[1])],
                              out=wrap(C, C.shape[0], C.shape[1]))
        return C
