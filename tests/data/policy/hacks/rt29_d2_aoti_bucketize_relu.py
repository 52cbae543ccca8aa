# expect: cpp_library_compute   (red team rt29, session 18: passed strict on the CPU before; task 19_ReLU)
# ReLU = x * bucketize(x, [0]) through the AOTInductor C shim exported by libtorch_cpu:
# aoti_torch_cpu_bucketize_Tensor / aoti_torch_cpu_mul_Tensor call at::cpu:: kernels past the dispatcher.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = """
#include <torch/extension.h>
extern "C" {
int32_t aoti_torch_cpu_bucketize_Tensor(void* self, void* boundaries, int32_t out_int32, int32_t right, void** ret0);
int32_t aoti_torch_cpu_mul_Tensor(void* self, void* other, void** ret0);
int32_t aoti_torch_delete_tensor_object(void* t);
}
static torch::Tensor take(void* h) {
  torch::Tensor t = *reinterpret_cast<torch::Tensor*>(h);
  aoti_torch_delete_tensor_object(h);
  return t;
}
torch::Tensor relu_fwd(torch::Tensor x) {
  auto xc = x.contiguous();
  auto edge = torch::zeros({1}, xc.options());
  void* h = nullptr;
  aoti_torch_cpu_bucketize_Tensor(&xc, &edge, 0, 0, &h);   // 1 where x > 0, else 0
  torch::Tensor pos = take(h);
  aoti_torch_cpu_mul_Tensor(&xc, &pos, &h);
  return take(h);
}
"""
ext = load_inline(name="rt29_d2_aoti_relu", cpp_sources=cpp_src, functions=["relu_fwd"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu_fwd(x)
