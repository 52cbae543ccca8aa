# expect: cpp_library_compute   (red team rt29, session 18: passed strict on the CPU before; task 1_Square_matrix_multiplication_)
# libtorch_cpu exports MKL's Fortran GEMM also as upper-case SGEMM (and sgemm_64): the name rules
# want a lower-case s/d/c/z first letter and a trailing underscore, so SGEMM passes both scans.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = """
#include <torch/extension.h>
extern "C" void SGEMM(const char* ta, const char* tb, const int* m, const int* n, const int* k,
    const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
    const float* beta, float* c, const int* ldc);
torch::Tensor mm_fwd(torch::Tensor A, torch::Tensor B) {
  auto a = A.contiguous();
  auto b = B.contiguous();
  const int M = a.size(0), K = a.size(1), N = b.size(1);
  auto c = torch::empty({M, N}, a.options());
  const float one = 1.f, zero = 0.f;
  // row-major C = A B  is column-major C^T = B^T A^T
  SGEMM("N", "N", &N, &M, &K, &one, b.data_ptr<float>(), &N, a.data_ptr<float>(), &K, &zero,
        c.data_ptr<float>(), &N);
  return c;
}
"""
ext = load_inline(name="rt29_e_upper_sgemm", cpp_sources=cpp_src, functions=["mm_fwd"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return ext.mm_fwd(A, B)
