// The task prompt (KernelBench one-shot style, written for kgym) and code extraction.
#include <string>

#include "kgym/episode.hpp"

namespace kgym {
namespace {

constexpr const char* kExampleReference = R"py(import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a + b

def get_inputs():
    return [torch.randn(4096), torch.randn(4096)]

def get_init_inputs():
    return []
)py";

constexpr const char* kExampleCuda = R"py(import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>

__global__ void add_kernel(const float* a, const float* b, float* out, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty_like(a);
    int64_t n = a.numel();
    int threads = 256;
    int blocks = (int)((n + threads - 1) / threads);
    add_kernel<<<blocks, threads>>>(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""
cpp_source = "torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b);"

add = load_inline(name="add", cpp_sources=cpp_source, cuda_sources=source,
                  functions=["add_cuda"], verbose=False)

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return add.add_cuda(a.contiguous(), b.contiguous())
)py";

constexpr const char* kExampleTriton = R"py(import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, a + b, mask=mask)

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        a, b = a.contiguous(), b.contiguous()
        out = torch.empty_like(a)
        n = a.numel()
        add_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)
        return out
)py";

constexpr const char* kExampleCpu = R"py(import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>

torch::Tensor add_cpu(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty_like(a);
    const float* pa = a.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* po = out.data_ptr<float>();
    int64_t n = a.numel();
    for (int64_t i = 0; i < n; ++i) po[i] = pa[i] + pb[i];
    return out;
}
"""

add = load_inline(name="add_cpu", cpp_sources=cpp_source, functions=["add_cpu"], verbose=False)

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return add.add_cpu(a.contiguous(), b.contiguous())
)py";

std::string backend_phrase(const std::string& backend) {
  if (backend == "cuda") return "custom CUDA kernels (compiled with torch.utils.cpp_extension.load_inline)";
  if (backend == "triton") return "custom Triton kernels (@triton.jit)";
  if (backend == "cpu") return "custom C++ CPU kernels (compiled with torch.utils.cpp_extension.load_inline)";
  throw Error(ErrorKind::usage, "unknown backend `" + backend + "`; use cuda, triton or cpu");
}

std::string profile_rules(policy::Profile profile) {
  if (profile == policy::Profile::kernelbench) {
    return "- You may replace some operators and keep others; operator fusion and algorithmic "
           "changes are welcome.\n";
  }
  if (profile == policy::Profile::hybrid) {
    return "- Library calls are allowed only for the main GEMM or convolution; every other "
           "operator must be your own kernel.\n";
  }
  if (profile == policy::Profile::strict) {
    return "- Every computation must run in your own kernels: no torch compute operators in "
           "forward().\n";
  }
  return "";  // off
}

}  // namespace

std::string build_prompt(const Task& task, const PromptOptions& o) {
  const std::string kernels = backend_phrase(o.backend);
  const std::string profile = profile_rules(o.policy_profile);
  if (o.style != "one_shot" && o.style != "zero_shot") {
    throw Error(ErrorKind::usage, "unknown prompt style `" + o.style + "`; use one_shot or zero_shot");
  }
  std::string p;
  p += "You write " + kernels + " that replace the PyTorch operators in the given architecture "
       "to make it faster while computing the same function.\n\n";
  p += "Rules (policy profile `" + std::string(policy::to_string(o.policy_profile)) + "`):\n";
  p += profile;
  p += "- Keep the outputs in " + o.precision + ": same dtype, shape and device as the reference; "
       "no lower-precision shortcuts.\n";
  p += "- Forbidden: calling the reference Model or falling back to it, try/except around the kernel "
       "path, CUDA streams, threads or subprocesses, file or network I/O, private torch internals, "
       "patching timers or the harness, tensor subclasses or lazy outputs, modifying the inputs.\n";
  p += "- Your code is checked on several inputs it has never seen (new seeds, scaled and negated "
       "values) and timed against eager PyTorch and torch.compile.\n";
  if (o.max_turns > 1) {
    p += "- You have " + std::to_string(o.max_turns) + " submissions; after each you get the "
         "verdict (outcome, failing case, errors, timings) and may revise. The best correct one counts.\n";
  }
  p += "\nOutput format: one Python code block defining `class ModelNew(nn.Module)` with the same "
       "constructor arguments and forward() signature as `Model`, plus all imports and kernel "
       "sources it needs. Real, complete code only: no pseudocode, no tests, no text outside the block.\n\n";
  if (o.style == "one_shot") {
    const char* example = o.backend == "cuda" ? kExampleCuda : o.backend == "triton" ? kExampleTriton : kExampleCpu;
    p += "Example. Given this architecture:\n```python\n";
    p += kExampleReference;
    p += "```\nan answer with " + kernels + " looks like this:\n```python\n";
    p += example;
    p += "```\n\n";
  }
  p += "Your task (" + task.id + "). Optimize this architecture named `Model`:\n```python\n";
  p += task.source;
  if (!task.source.empty() && task.source.back() != '\n') p += "\n";
  p += "```\nAnswer with the code block of `ModelNew` only.\n";
  return p;
}

std::string extract_code(const std::string& submission) {
  // The last fenced block: find the last closing fence, then the opening fence before it.
  std::size_t close = submission.rfind("```");
  if (close == std::string::npos || close == 0) return submission;
  std::size_t open = submission.rfind("```", close - 1);
  if (open == std::string::npos) return submission;
  std::size_t body = submission.find('\n', open);
  if (body == std::string::npos || body > close) return submission;
  return submission.substr(body + 1, close - body - 1);
}

}  // namespace kgym
