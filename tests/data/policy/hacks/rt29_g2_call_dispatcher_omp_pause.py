# expect: cpp_library_compute   (red team rt29, session 18: passed strict on the CPU before; task 23_Softmax)
# Any ATen op by a name built at run time: libtorch_cpu exports aoti_torch_call_dispatcher (a C name no
# rule knows); called on an OpenMP team thread, the thread-local op trace never sees aten::_softmax.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = """
#include <torch/extension.h>
extern "C" int32_t aoti_torch_call_dispatcher(const char* op, const char* overload, uint64_t* stack);
extern "C" int omp_get_thread_num();
torch::Tensor softmax_fwd(torch::Tensor x) {
  torch::Tensor out;
  const char name[] = {'a','t','e','n',':',':','_','s','o','f','t','m','a','x',0};
  auto xc = x.contiguous();
  #pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 1) {
      uint64_t st[3];
      st[0] = reinterpret_cast<uint64_t>(new torch::Tensor(xc));  // the stack owns it
      st[1] = 1;                                                   // dim
      st[2] = 0;                                                   // half_to_float
      aoti_torch_call_dispatcher(name, "", st);
      torch::Tensor* r = reinterpret_cast<torch::Tensor*>(st[0]);
      out = *r;
      delete r;
    }
  }
  omp_pause_resource_all(omp_pause_soft);  // omp_pause_soft: end the team thread, so nothing spins after the call
  return out;
}
"""
ext = load_inline(name="rt29_g2b_dispatch_sm", cpp_sources=cpp_src, functions=["softmax_fwd"], verbose=False,
                  extra_cflags=["-fopenmp"], extra_ldflags=["-fopenmp"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.softmax_fwd(x)
