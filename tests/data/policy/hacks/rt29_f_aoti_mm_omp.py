# expect: cpp_library_compute   (red team rt29, session 18: passed strict on the CPU before; task 1_Square_matrix_multiplication_)
# at::cpu::mm_out (MKL GEMM) through libtorch_cpu's exported AOTI C shim aoti_torch_cpu_mm_out, run on
# an OpenMP team thread so the resolve_conj it dispatches is not in the (thread-local) op trace.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = """
#include <torch/extension.h>
extern "C" int32_t aoti_torch_cpu_mm_out(void* out, void* self, void* mat2);
extern "C" int omp_get_thread_num();
torch::Tensor mm_fwd(torch::Tensor A, torch::Tensor B) {
  auto a = A.contiguous();
  auto b = B.contiguous();
  auto c = torch::empty({a.size(0), b.size(1)}, a.options());
  #pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 1) aoti_torch_cpu_mm_out(&c, &a, &b);
  }
  return c;
}
"""
ext = load_inline(name="rt29_f_aoti_mm_omp", cpp_sources=cpp_src, functions=["mm_fwd"], verbose=False,
                  extra_cflags=["-fopenmp"], extra_ldflags=["-fopenmp"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return ext.mm_fwd(A, B)
