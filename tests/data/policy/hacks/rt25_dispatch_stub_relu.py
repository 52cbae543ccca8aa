# expect: cpp_library_compute   (red team rt25: ATen's CPU kernel through its dispatch stub passed strict)
# strict, CPU: ATen's clamp_min kernel (clamp_min_scalar_stub) over a TensorIterator.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = r"""
// ATen CPU kernels called through their DispatchStub objects (at::native::<name>_stub(kCPU, ...)):
// no dispatcher, so no RecordFunction and nothing in the CPU op trace; the static C++ rule matches
// at::native::<name> only when <name> is in the compute denylist (gemm_stub, softmax_lastdim_kernel,
// LayerNormKernel, clamp_min_scalar_stub are not). The two defines make the header declare
// DispatchStubImpl::get_call_ptr with the signature libtorch_cpu.so exports.
#define HAVE_AVX512_CPU_DEFINITION
#define HAVE_AVX2_CPU_DEFINITION
#include <torch/extension.h>
#include <ATen/TensorIterator.h>
#include <ATen/native/TensorCompare.h>
torch::Tensor relu_fwd(torch::Tensor x) {
  auto y = torch::empty_like(x);
  auto iter = at::TensorIterator::unary_op(y, x);
  at::native::clamp_min_scalar_stub(at::kCPU, iter, c10::Scalar(0.0f));
  return y;
}
"""
ext = load_inline(name="rt25_stub_relu", cpp_sources=cpp_src, functions=["relu_fwd"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_fwd(x)
