// Policy gate: every rule has one input that fires and one close honest input that must not.
#include "kgym/policy.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace kgym::policy {
namespace {

/// Parts of a candidate; the defaults make an honest load_inline ReLU (custom kernel, no fallback).
struct Parts {
  std::string prelude;         ///< extra module-level lines after the imports
  std::string cuda_extra;      ///< extra C++/CUDA appended to the CUDA source
  std::string init_extra = "";  ///< extra lines in ModelNew.__init__ (8-space indented)
  std::string forward = "        return self.ext.relu_cuda(x.contiguous())\n";
  std::string class_line = "class ModelNew(nn.Module):";
};

std::string candidate(const Parts& p) {
  std::string s = R"PY(import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
)PY";
  s += p.prelude;
  s += R"PY(
cuda_source = """
#include <torch/extension.h>
__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
)PY";
  s += p.cuda_extra;
  s += R"PY(
"""
cpp_source = "torch::Tensor relu_cuda(torch::Tensor x);"

relu_ext = load_inline(name="relu_ext", cpp_sources=cpp_source, cuda_sources=cuda_source,
                       functions=["relu_cuda"], verbose=False)

)PY";
  s += p.class_line + "\n";
  s += "    def __init__(self):\n        super().__init__()\n        self.ext = relu_ext\n" + p.init_extra;
  s += "\n    def forward(self, x):\n" + p.forward;
  return s;
}

PolicyReport check(const std::string& src, Profile profile = Profile::strict, std::string dtype = "float32") {
  PolicyContext ctx;
  ctx.profile = profile;
  ctx.task_dtype = std::move(dtype);
  return check_candidate(src, ctx);
}

bool fires(const PolicyReport& r, std::string_view rule) {
  for (const auto& f : r.findings)
    if (f.rule_id == rule) return true;
  return false;
}

std::string dump(const PolicyReport& r) {
  std::string s;
  for (const auto& f : r.findings)
    s += "  " + std::to_string(f.line) + ":" + std::to_string(f.column) + " " + f.rule_id + " " + f.message + "\n";
  return s;
}

TEST(Policy, HonestCandidatePassesStrictAndHybrid) {
  for (Profile p : {Profile::strict, Profile::hybrid, Profile::kernelbench}) {
    auto r = check(candidate({}), p);
    EXPECT_TRUE(r.parsed);
    EXPECT_FALSE(r.rejected()) << to_string(p) << "\n" << dump(r);
    EXPECT_TRUE(r.findings.empty()) << to_string(p) << "\n" << dump(r);
  }
}

struct RuleCase {
  std::string rule;
  Profile profile;
  Parts fire;
  Parts honest;
};

std::vector<RuleCase> rule_cases() {
  using P = Parts;
  const std::string f_default = Parts{}.forward;
  std::vector<RuleCase> c;
  P p, h;
  // model_new_missing
  p = {}; p.class_line = "class FastModel(nn.Module):";
  c.push_back({"model_new_missing", Profile::strict, p, P{}});
  // reference_fallback
  p = {}; p.prelude = "class Model(nn.Module):\n    def forward(self, x):\n        return x\n";
  p.forward = "        return Model()(x)\n";
  h = {}; h.prelude = p.prelude;
  c.push_back({"reference_fallback", Profile::strict, p, h});
  // reference_inherit
  p = {}; p.prelude = "class Model(nn.Module):\n    def forward(self, x):\n        return x\n";
  p.class_line = "class ModelNew(Model):";
  h = {}; h.prelude = p.prelude;
  c.push_back({"reference_inherit", Profile::strict, p, h});
  // try_except
  p = {}; p.forward = "        try:\n            return self.ext.relu_cuda(x)\n        except Exception:\n            return torch.relu(x)\n";
  h = {}; h.forward = "        try:\n            return self.ext.relu_cuda(x)\n        finally:\n            x = None\n";
  c.push_back({"try_except", Profile::strict, p, h});
  // bare_pass
  p = {}; p.forward = "        pass\n";
  h = {}; h.forward = "        if x.is_contiguous():\n            pass\n" + f_default;
  c.push_back({"bare_pass", Profile::strict, p, h});
  // pass_statement (KernelBench semantics)
  p = {}; p.forward = "        if x.is_contiguous():\n            pass\n" + f_default;
  c.push_back({"pass_statement", Profile::kernelbench, p, P{}});
  // array_interop: a numpy view of a torch buffer made in __init__ (red team rt30); constants by torch.tensor
  p = {}; p.init_extra = "        self.buf = torch.zeros(16)\n        self.arr = self.buf.numpy()\n";
  h = {}; h.init_extra = "        self.c = torch.tensor([1.0, 2.0])\n";
  c.push_back({"array_interop", Profile::strict, p, h});
  // torch_compute_in_forward
  p = {}; p.forward = "        return torch.relu(self.ext.relu_cuda(x))\n";
  h = {}; h.forward = "        return self.ext.relu_cuda(x).view(x.shape)\n";
  c.push_back({"torch_compute_in_forward", Profile::strict, p, h});
  p = {}; p.forward = "        y = self.ext.relu_cuda(x)\n        return y.sum(dim=1)\n";
  h = {}; h.forward = "        y = self.ext.relu_cuda(x)\n        return y.reshape(x.shape[0], -1)\n";
  c.push_back({"torch_compute_in_forward", Profile::strict, p, h});
  // ... names the compute list lacked (red team rt24: each passed strict)
  p = {}; p.forward = "        y = self.ext.relu_cuda(x)\n        return torch.chain_matmul(y, y)\n";
  c.push_back({"torch_compute_in_forward", Profile::strict, p, P{}});
  p = {}; p.forward = "        y = self.ext.relu_cuda(x)\n        return y.masked_fill(y > 1, 0.0)\n";
  c.push_back({"torch_compute_in_forward", Profile::strict, p, P{}});
  // ... numpy compute on a DLPack view of the input (red team rt24: a ReLU passed strict); numpy
  // dtype names and host arithmetic with math stay allowed
  p = {}; p.prelude = "import numpy as np\n";
  p.forward = "        y = self.ext.relu_cuda(x)\n        return torch.from_dlpack(np.maximum(np.from_dlpack(y), 0))\n";
  h = {}; h.prelude = "import numpy as np\nimport math\n";
  h.forward = "        n = math.prod(x.shape)\n        assert x.dtype == torch.float32 or np.float32\n" + f_default;
  c.push_back({"torch_compute_in_forward", Profile::strict, p, h});
  p = {}; p.forward = "        return torch.from_numpy(self.ext.relu_cuda(x).numpy())\n";
  c.push_back({"torch_compute_in_forward", Profile::strict, p, P{}});
  // nn_layer_in_forward
  p = {}; p.init_extra = "        self.act = nn.ReLU()\n"; p.forward = "        return self.act(self.ext.relu_cuda(x))\n";
  h = {}; h.init_extra = "        self.scale = nn.Parameter(torch.ones(1))\n";
  c.push_back({"nn_layer_in_forward", Profile::strict, p, h});
  // hybrid_library_call: one GEMM is allowed under hybrid
  p = {}; p.forward = "        return self.ext.relu_cuda(torch.matmul(x, x))\n";
  c.push_back({"hybrid_library_call", Profile::hybrid, p, P{}});
  // cpp_library_compute
  p = {}; p.cuda_extra = "torch::Tensor soft(torch::Tensor a) { return torch::softmax(a, 1); }\n";
  h = {}; h.cuda_extra = "torch::Tensor make(torch::Tensor a) { return torch::zeros_like(a); }\n";
  c.push_back({"cpp_library_compute", Profile::strict, p, h});
  // ... a CPU BLAS routine declared extern "C" (libtorch_cpu.so exports sgemm_; red team a11s)
  p = {}; p.cuda_extra = "extern \"C\" void sgemm_(const char*, const char*, const int*, const int*, const int*,"
                         " const float*, const float*, const int*, const float*, const int*, const float*, float*,"
                         " const int*);\nvoid mm(float* a, float* b, float* c, int n) { float one = 1, zero = 0;"
                         " sgemm_(\"N\", \"N\", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n); }\n";
  h = {}; h.cuda_extra = "void saxpy_like(float* y, const float* x, float s, int n) { for (int i = 0; i < n; ++i)"
                         " y[i] += s * x[i]; }\n";
  c.push_back({"cpp_library_compute", Profile::strict, p, h});
  p = {}; p.cuda_extra = "#include <cblas.h>\nvoid dotp(const float* a, const float* b, int n, float* out) {"
                         " *out = cblas_sdot(n, a, 1, b, 1); }\n";
  c.push_back({"cpp_library_compute", Profile::strict, p, h});
  // ... an ATen kernel through the dispatcher's redispatch entry (it skips the profiler's hook:
  // red team rt24, ReLU, softmax and LayerNorm passed strict), or by schema
  p = {}; p.cuda_extra = "torch::Tensor r(torch::Tensor a) { return at::redispatch::clamp_min("
                         "c10::DispatchKeySet(c10::DispatchKey::CPU), a, 0); }\n";
  c.push_back({"cpp_library_compute", Profile::strict, p, h});
  p = {}; p.cuda_extra = "torch::Tensor r(torch::Tensor a) { static auto op = c10::Dispatcher::singleton()"
                         ".findSchemaOrThrow(\"aten::relu\", \"\").typed<at::Tensor(const at::Tensor&)>();"
                         " return op.call(a); }\n";
  c.push_back({"cpp_library_compute", Profile::strict, p, h});
  // threads_processes_async: a raw clone system call (red team, 2026-12-01)
  p = {}; p.cuda_extra = "#include <sys/syscall.h>\n#include <unistd.h>\nlong spawn() { return syscall(SYS_clone, 17, 0, 0, 0, 0); }\n";
  h = {}; h.cuda_extra = "long twice(long x) { return 2 * x; }\n";
  c.push_back({"threads_processes_async", Profile::strict, p, h});
  // library_compiler
  p = {}; p.forward = "        return torch.compile(self.ext.relu_cuda)(x)\n";
  c.push_back({"library_compiler", Profile::strict, p, P{}});
  // private_torch_internals
  p = {}; p.forward = "        return torch.ops.aten.relu(self.ext.relu_cuda(x))\n";
  // (an operator namespace is the candidate's own only when its TORCH_LIBRARY defines it)
  h = {}; h.forward = "        return torch.ops.relu_ext.relu(self.ext.relu_cuda(x))\n";
  h.cuda_extra = "TORCH_LIBRARY(relu_ext, m) { m.def(\"relu\", relu_cuda); }\n";
  c.push_back({"private_torch_internals", Profile::strict, p, h});
  // ... torch's own namespaces other than aten (red team rt24: oneDNN's GEMM passed strict as
  // custom code); a FRAGMENT adds to a namespace and defines none
  p = {}; p.forward = "        return torch.ops.mkldnn._linear_pointwise(x, x, None, 'none', [], '')\n";
  p.cuda_extra = "TORCH_LIBRARY_FRAGMENT(mkldnn, m) { m.def(\"relu2\", relu_cuda); }\n";
  c.push_back({"private_torch_internals", Profile::strict, p, h});
  // ... and torch's private functions
  p = {}; p.forward = "        return torch._softmax(self.ext.relu_cuda(x), 1, False)\n";
  c.push_back({"private_torch_internals", Profile::strict, p, P{}});
  // kb_torch_compute_op
  p = {}; p.prelude = "def ref(x):\n    return torch.softmax(x, 1)\n";
  h = {}; h.prelude = "def ref(x):\n    return torch.empty_like(x)\n";
  c.push_back({"kb_torch_compute_op", Profile::kernelbench, p, h});
  // kb_nn_compute_layer
  p = {}; p.init_extra = "        self.lin = torch.nn.Linear(4, 4)\n";
  h = {}; h.init_extra = "        self.w = torch.nn.Parameter(torch.ones(4))\n";
  c.push_back({"kb_nn_compute_layer", Profile::kernelbench, p, h});
  // streams_events_graphs: Python, and C++ hidden by a token-pasting macro
  p = {}; p.forward = "        s = torch.cuda.Stream()\n        with torch.cuda.stream(s):\n            y = self.ext.relu_cuda(x)\n        return y\n";
  h = {}; h.forward = "        s = torch.cuda.current_stream()\n        return self.ext.relu_cuda(x)\n";
  c.push_back({"streams_events_graphs", Profile::strict, p, h});
  p = {}; p.cuda_extra = "#define GLUE(a, b) a##b\nvoid side() { cudaStream_t s; GLUE(cudaStream, Create)(&s); }\n";
  h = {}; h.cuda_extra = "#define GLUE(a, b) a##b\nvoid side() { auto s = at::cuda::getCurrentCUDAStream(); (void)s; }\n";
  c.push_back({"streams_events_graphs", Profile::strict, p, h});
  // l2_persistence
  p = {}; p.cuda_extra = "void warm() { cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 1 << 20); }\n";
  h = {}; h.cuda_extra = "void warm() { cudaDeviceSynchronize(); }\n";
  c.push_back({"l2_persistence", Profile::strict, p, h});
  // threads_processes_async
  p = {}; p.prelude = "import threading\n";
  h = {}; h.prelude = "import math\n";
  c.push_back({"threads_processes_async", Profile::strict, p, h});
  p = {}; p.cuda_extra = "void later() { std::thread t([]{}); t.detach(); }\n";
  h = {}; h.cuda_extra = "int later(int a, int b) { return std::max(a, b); }\n";
  c.push_back({"threads_processes_async", Profile::strict, p, h});
  // timer_harness_patch
  p = {}; p.prelude = "torch.cuda.Event.elapsed_time = lambda self, end: 0.001\n";
  h = {}; h.init_extra = "        self.elapsed_time = 0.001\n";
  c.push_back({"timer_harness_patch", Profile::strict, p, h});
  p = {}; p.prelude = "setattr(torch.cuda, 'synchronize', lambda: None)\n";
  h = {}; h.prelude = "value = getattr(torch.cuda, 'is_available')()\n";
  c.push_back({"timer_harness_patch", Profile::strict, p, h});
  // introspection
  p = {}; p.prelude = "import sys\ncaller = sys._getframe(1)\n";
  h = {}; h.prelude = "import math\nroot2 = math.sqrt(2)\n";
  c.push_back({"introspection", Profile::strict, p, h});
  p = {}; p.prelude = "def f():\n    return 1\ncode_object = f.__code__\n";
  h = {}; h.prelude = "def f():\n    return 1\nname = f.__name__\n";
  c.push_back({"introspection", Profile::strict, p, h});
  // tensor_subclass
  p = {}; p.prelude = "class Lazy(torch.Tensor):\n    @staticmethod\n    def __new__(cls, x):\n        return torch.Tensor._make_subclass(cls, x)\n";
  h = {}; h.prelude = "class Helper(nn.Module):\n    def forward(self, x):\n        return x\n";
  c.push_back({"tensor_subclass", Profile::strict, p, h});
  // dynamic_code
  p = {}; p.prelude = "exec('y = 1')\n";
  h = {}; h.prelude = "def execute(x):\n    return x\ny = execute(1)\n";
  c.push_back({"dynamic_code", Profile::strict, p, h});
  p = {}; p.cuda_extra = "void* load() { return dlopen(\"libcudart.so\", 2); }\n";
  h = {}; h.cuda_extra = "void* load() { return nullptr; }\n";
  c.push_back({"dynamic_code", Profile::strict, p, h});
  // file_network_env
  p = {}; p.forward = "        open('/dev/shm/out.pt', 'wb')\n" + f_default;
  h = {}; h.forward = "        opened = True\n" + f_default;
  c.push_back({"file_network_env", Profile::strict, p, h});
  p = {}; p.prelude = "import os\narch = os.environ.get('TORCH_CUDA_ARCH_LIST')\n";
  h = {}; h.prelude = "import math\narch = math.pi\n";
  c.push_back({"file_network_env", Profile::strict, p, h});
  // subprocess_system
  p = {}; p.prelude = "import subprocess\nsubprocess.run(['pip', 'install', 'x'])\n";
  h = {}; h.prelude = "import functools\n";
  c.push_back({"subprocess_system", Profile::strict, p, h});
  p = {}; p.cuda_extra = "void sh() { system(\"ls\"); }\n";
  h = {}; h.cuda_extra = "struct Sys { int system; }; int sh(Sys s) { return s.system; }\n";
  c.push_back({"subprocess_system", Profile::strict, p, h});
  // import_not_allowed
  p = {}; p.prelude = "import random\n";
  h = {}; h.prelude = "import math\nfrom typing import Optional\n";
  c.push_back({"import_not_allowed", Profile::strict, p, h});
  // precision_downgrade: Python cast, TF32 switch, and a CUDA intrinsic
  p = {}; p.forward = "        return self.ext.relu_cuda(x.half()).float()\n";
  h = {}; h.forward = "        return self.ext.relu_cuda(x.float())\n";
  c.push_back({"precision_downgrade", Profile::strict, p, h});
  p = {}; p.prelude = "torch.backends.cuda.matmul.allow_tf32 = True\n";
  h = {}; h.prelude = "torch.backends.cuda.matmul.allow_tf32 = False\n";
  c.push_back({"precision_downgrade", Profile::strict, p, h});
  p = {}; p.cuda_extra = "__device__ __half down(float v) { return __float2half(v); }\n";
  h = {}; h.cuda_extra = "__device__ float up(float v) { return __fmul_rn(v, 2.0f); }\n";
  c.push_back({"precision_downgrade", Profile::strict, p, h});
  // global_flag_change
  p = {}; p.prelude = "torch.backends.cudnn.benchmark = True\n";
  h = {}; h.prelude = "benchmark = True\n";
  c.push_back({"global_flag_change", Profile::strict, p, h});
  // output_cache
  p = {}; p.prelude = "_cache = {}\n";
  p.forward = "        k = (x.data_ptr(), x.shape)\n        if k in _cache:\n            return _cache[k]\n" + f_default;
  h = {}; h.forward = "        assert x.data_ptr() != 0\n" + f_default;
  c.push_back({"output_cache", Profile::strict, p, h});
  // forward_without_custom_call
  p = {}; p.forward = "        return x.contiguous()\n";
  c.push_back({"forward_without_custom_call", Profile::strict, p, P{}});
  // decoy_kernel
  p = {}; p.cuda_extra = "__global__ void decoy_kernel(float* y) { y[threadIdx.x] = 0.f; }\n";
  h = {}; h.cuda_extra = "__global__ void fill_kernel(float* y) { y[threadIdx.x] = 0.f; }\nvoid fill(float* y) { fill_kernel<<<1, 32>>>(y); }\n";
  c.push_back({"decoy_kernel", Profile::strict, p, h});
  // triton_dot_default_tf32 / explicit TF32 in Triton
  p = {}; p.prelude = "import triton.language as tl\ndef mm_tile(a, b):\n    return tl.dot(a, b)\n";
  h = {}; h.prelude = "import triton.language as tl\ndef mm_tile(a, b):\n    return tl.dot(a, b, input_precision=\"ieee\")\n";
  c.push_back({"triton_dot_default_tf32", Profile::strict, p, h});
  p = {}; p.prelude = "import triton.language as tl\ndef mm_tile(a, b):\n    return tl.dot(a, b, allow_tf32=True)\n";
  c.push_back({"precision_downgrade", Profile::strict, p, h});
  // cxx_preprocess_failed: an #error makes g++ -E fail
  p = {}; p.cuda_extra = "#error stop the preprocessor\n";
  h = {}; h.cuda_extra = "#if 0\n#error never reached\n#endif\n";
  c.push_back({"cxx_preprocess_failed", Profile::strict, p, h});
  // dynamic_code: a class built with type() and a name computed through getattr
  p = {}; p.prelude = "Lazy = type('Lazy', (object,), {})\n";
  h = {}; h.prelude = "kind = type(1)\n";
  c.push_back({"dynamic_code", Profile::strict, p, h});
  // torch_elementwise_in_forward
  p = {}; p.forward = "        return self.ext.relu_cuda(x * 2.0)\n";
  h = {}; h.forward = "        n = x.size(0) * 2\n        return self.ext.relu_cuda(x)\n";
  c.push_back({"torch_elementwise_in_forward", Profile::strict, p, h});
  // ... also in a plain helper reached from forward, but never in a @triton.jit body that happens
  // to name a value like forward's argument (device code: the kernel's own arithmetic).
  p = {}; p.prelude = "def twice(x):\n    return x * 2.0\n";
  p.forward = "        return self.ext.relu_cuda(twice(x))\n";
  h = {}; h.prelude = "import triton\nimport triton.language as tl\n@triton.jit\ndef scale_kernel(x_ptr, y_ptr):\n"
                      "    offs = tl.arange(0, 32)\n    x = tl.load(x_ptr + offs)\n    tl.store(y_ptr + offs, x * 2.0 - x)\n";
  h.forward = "        y = torch.empty_like(x)\n        scale_kernel[(1,)](x, y)\n        return y\n";
  c.push_back({"torch_elementwise_in_forward", Profile::strict, p, h});
  // nn_layer_in_forward through a container of library layers
  p = {}; p.init_extra = "        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])\n";
  p.forward = "        for layer in self.layers:\n            x = layer(x)\n" + f_default;
  h = {}; h.prelude = "class Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.w = nn.Parameter(torch.ones(4))\n    def forward(self, x):\n        return relu_ext.relu_cuda(x)\n";
  h.init_extra = "        self.layers = nn.ModuleList([Block() for _ in range(2)])\n";
  h.forward = p.forward;
  c.push_back({"nn_layer_in_forward", Profile::strict, p, h});
  // torch compute reached as a value (the identity-kernel + hidden torch compute kind)
  p = {}; p.forward = "        ops = [torch.relu]\n        return ops[0](self.ext.relu_cuda(x))\n";
  h = {}; h.forward = "        ops = [self.ext.relu_cuda]\n        return ops[0](x)\n";
  c.push_back({"torch_compute_as_value", Profile::strict, p, h});
  p = {}; p.init_extra = "        self.f = torch.nn.functional.gelu\n"; p.forward = "        return self.f(self.ext.relu_cuda(x))\n";
  h = {}; h.init_extra = "        self.f = self.ext.relu_cuda\n"; h.forward = "        return self.f(x)\n";
  c.push_back({"torch_compute_as_value", Profile::strict, p, h});
  p = {}; p.forward = "        y = self.ext.relu_cuda(x)\n        m = y.sigmoid\n        return m()\n";
  h = {}; h.forward = "        y = self.ext.relu_cuda(x)\n        m = y.view\n        return m(-1)\n";
  c.push_back({"torch_compute_as_value", Profile::strict, p, h});
  p = {}; p.forward = "        y = self.ext.relu_cuda(x)\n        return type(y).relu(y)\n";
  h = {}; h.forward = "        y = self.ext.relu_cuda(x)\n        assert type(y).__name__ == 'Tensor'\n        return y\n";
  c.push_back({"unbound_tensor_method", Profile::strict, p, h});
  p = {}; p.forward = "        return torch.Tensor.sigmoid(self.ext.relu_cuda(x))\n";
  h = {}; h.forward = "        return torch.Tensor.contiguous(self.ext.relu_cuda(x))\n";
  c.push_back({"unbound_tensor_method", Profile::strict, p, h});
  p = {}; p.forward = "        return getattr(self.ext.relu_cuda(x), 'sig' + 'moid')()\n";
  h = {}; h.forward = "        return getattr(self.ext, 'relu_' + 'cuda')(x)\n";
  c.push_back({"string_attribute_access", Profile::strict, p, h});
  p = {}; p.prelude = "import operator\n"; p.forward = "        return operator.methodcaller('relu')(self.ext.relu_cuda(x))\n";
  h = {}; h.prelude = "import operator\n"; h.forward = "        n = operator.index(x.dim())\n" + f_default;
  c.push_back({"string_attribute_access", Profile::strict, p, h});
  p = {}; p.init_extra = "        self.act = nn.ReLU()\n";
  h = {}; h.init_extra = "        self.lin = nn.Linear(4, 4)\n";
  c.push_back({"nn_compute_module", Profile::strict, p, h});
  // a layer called through an alias
  p = {}; p.init_extra = "        self.lin = nn.Linear(4, 4)\n        self.alias = self.lin\n";
  p.forward = "        g = self.alias\n        return self.ext.relu_cuda(g(x))\n";
  h = {}; h.init_extra = p.init_extra; h.forward = "        w = self.alias.weight\n        return self.ext.relu_cuda(x)\n";
  c.push_back({"nn_layer_in_forward", Profile::strict, p, h});
  return c;
}

TEST(Policy, EachRuleFiresOnItsInputAndNotOnTheHonestOne) {
  for (const auto& rc : rule_cases()) {
    SCOPED_TRACE(rc.rule);
    ASSERT_NE(find_rule(rc.rule), nullptr) << "unknown rule id in the test table";
    auto fired = check(candidate(rc.fire), rc.profile);
    EXPECT_TRUE(fires(fired, rc.rule)) << "did not fire:\n" << candidate(rc.fire) << "\nfindings:\n" << dump(fired);
    auto honest = check(candidate(rc.honest), rc.profile);
    EXPECT_FALSE(fires(honest, rc.rule)) << "fired on the honest input:\n" << candidate(rc.honest) << "\nfindings:\n" << dump(honest);
  }
}

TEST(Policy, EveryRuleHasAFiringTest) {
  std::set<std::string> tested = {"syntax_error", "kb_backend_impl"};  // tested below
  for (const auto& rc : rule_cases()) tested.insert(rc.rule);
  for (const auto& rule : rule_table()) EXPECT_TRUE(tested.count(std::string(rule.id))) << rule.id << " has no test";
}

TEST(Policy, SyntaxErrorIsReportedWithPosition) {
  auto r = check("import torch\n\nclass ModelNew:\n    def forward(self, x)\n        return x\n");
  EXPECT_FALSE(r.parsed);
  ASSERT_EQ(r.findings.size(), 1u) << dump(r);
  EXPECT_EQ(r.findings[0].rule_id, "syntax_error");
  EXPECT_EQ(r.findings[0].severity, Severity::reject);
  EXPECT_EQ(r.findings[0].line, 4);
  EXPECT_GT(r.findings[0].column, 0);
  EXPECT_TRUE(check(candidate({})).parsed);
  auto py2 = check("import torch\nprint 'hello'\n");
  EXPECT_FALSE(py2.parsed);
  ASSERT_FALSE(py2.findings.empty());
  EXPECT_EQ(py2.findings[0].rule_id, "syntax_error");
  EXPECT_EQ(py2.findings[0].line, 2);
}

TEST(Policy, ACxxFindingPointsAtTheLineThatHoldsTheName) {
  // Fresh-user run, session 17: a C++ finding pointed at the load_inline call, far from the name.
  Parts p;
  p.prelude = "# a comment above the source naming at::native::relu is passed over\n";
  p.cuda_extra = "torch::Tensor other(torch::Tensor x) { return at::native::relu(x); }\n";
  const std::string src = candidate(p);
  auto r = check(src);
  const Finding* f = nullptr;
  for (const auto& g : r.findings)
    if (g.rule_id == "cpp_library_compute") f = &g;
  ASSERT_NE(f, nullptr) << dump(r);
  const size_t pos = src.find("at::native::relu", src.find("cuda_source"));
  const int want_line = 1 + static_cast<int>(std::count(src.begin(), src.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
  EXPECT_EQ(f->line, want_line) << dump(r);
  EXPECT_EQ(f->column, static_cast<int>(pos - src.rfind('\n', pos)));
  // A name a macro builds is not in the file: the finding stays at the unit's Python node.
  Parts m;
  m.cuda_extra = "#define NS(a, b) a##b\ntorch::Tensor other(torch::Tensor x) { return at::native::NS(re, lu)(x); }\n";
  auto rm = check(candidate(m));
  bool found = false;
  for (const auto& g : rm.findings)
    if (g.rule_id == "cpp_library_compute") {
      found = true;
      EXPECT_GT(g.line, 0);
    }
  EXPECT_TRUE(found) << dump(rm);
}

TEST(Policy, PythonCalledFromCxxIsDynamicCodeButTensorAccessorsAreNot) {
  // Red team rt31: torch's operators through the C API or pybind11's accessor, called from C++.
  for (const char* body : {"  PyObject* r = PyNumber_Multiply(a, b);\n",
                           "  PyObject* m = PyObject_GetAttrString(o, name);\n",
                           "  auto r = obj.attr(\"relu\")();\n",
                           "  using Acc = py::detail::accessor<py::detail::accessor_policies::str_attr>;\n"}) {
    Parts p;
    p.cuda_extra = std::string("void helper(PyObject* a, PyObject* b, PyObject* o, const char* name, py::object obj) {\n") +
                   body + "}\n";
    auto r = check(candidate(p));
    EXPECT_TRUE(fires(r, "dynamic_code")) << body << dump(r);
  }
  // at::Tensor's accessors (the honest CPU idiom) and py::cast are not.
  Parts h;
  h.cuda_extra = "float first(torch::Tensor x) { auto a = x.accessor<float, 1>(); auto p = x.packed_accessor32<float, 1>();\n"
                 "  py::object o = py::cast(x); return a[0] + p[0]; }\n";
  auto honest = check(candidate(h));
  EXPECT_FALSE(fires(honest, "dynamic_code")) << dump(honest);
  EXPECT_FALSE(honest.rejected()) << dump(honest);
}

TEST(Policy, DeepNestingIsASyntaxErrorNotACrash) {
  std::string deep = "x = " + std::string(20000, '(') + "1" + std::string(20000, ')') + "\n";
  auto r = check(deep);
  EXPECT_FALSE(r.parsed);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].rule_id, "syntax_error");
}

TEST(Policy, QualifiedCxxNamesAreNotPosixCalls) {
  Parts p;
  p.cuda_extra = "#include <functional>\nint g(int a) { auto f = std::bind([](int v) { return v; }, a); return f(); }\n";
  EXPECT_FALSE(fires(check(candidate(p)), "file_network_env")) << dump(check(candidate(p)));
  Parts q;
  q.cuda_extra = "int h() { return ::open(\"/etc/hosts\", 0); }\n";
  EXPECT_TRUE(fires(check(candidate(q)), "file_network_env"));
}

TEST(Policy, KernelBenchBackendCheckNeedsAKernel) {
  std::string pure_torch = "import torch\nimport torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n";
  EXPECT_TRUE(fires(check(pure_torch, Profile::kernelbench), "kb_backend_impl"));
  EXPECT_TRUE(check(pure_torch, Profile::kernelbench).rejected());
  EXPECT_FALSE(fires(check(candidate({}), Profile::kernelbench), "kb_backend_impl"));
  std::string triton = R"PY(import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)

class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
)PY";
  for (Profile p : {Profile::strict, Profile::hybrid, Profile::kernelbench}) {
    auto r = check(triton, p);
    EXPECT_FALSE(r.rejected()) << to_string(p) << "\n" << dump(r);
  }
}

TEST(Policy, HybridAllowsOneLibraryOpKindButNotTwo) {
  Parts one;
  one.forward = "        if x.dim() == 2:\n            y = torch.matmul(x, x)\n        else:\n            y = torch.matmul(x, x)\n        return self.ext.relu_cuda(y)\n";
  EXPECT_FALSE(check(candidate(one), Profile::hybrid).rejected()) << dump(check(candidate(one), Profile::hybrid));
  EXPECT_TRUE(check(candidate(one), Profile::strict).rejected());
  Parts two;
  two.forward = "        y = torch.matmul(x, x)\n        z = torch.nn.functional.conv2d(y, y)\n        return self.ext.relu_cuda(z)\n";
  auto r = check(candidate(two), Profile::hybrid);
  EXPECT_TRUE(r.rejected()) << dump(r);
  EXPECT_TRUE(fires(r, "torch_compute_in_forward"));
}

TEST(Policy, ComputeValuesCountTowardTheHybridAllowance) {
  Parts one;
  one.forward = "        mm = [torch.matmul]\n        return self.ext.relu_cuda(mm[0](x, x))\n";
  auto h = check(candidate(one), Profile::hybrid);
  EXPECT_FALSE(h.rejected()) << dump(h);
  EXPECT_TRUE(fires(h, "hybrid_library_call")) << dump(h);
  auto s = check(candidate(one), Profile::strict);
  EXPECT_TRUE(fires(s, "torch_compute_as_value")) << dump(s);
  Parts two = one;
  two.forward = "        mm = [torch.matmul, torch.relu]\n        return self.ext.relu_cuda(mm[0](x, x))\n";
  EXPECT_TRUE(check(candidate(two), Profile::hybrid).rejected());
  // kernelbench and off do not run the value rules
  EXPECT_FALSE(fires(check(candidate(two), Profile::kernelbench), "torch_compute_as_value"));
}

TEST(Policy, RunTimeTraceSwitchesAreIntrospection) {
  Parts p;
  p.forward = "        if torch.autograd._profiler_enabled():\n            return self.ext.relu_cuda(x)\n" + Parts{}.forward;
  EXPECT_TRUE(fires(check(candidate(p)), "introspection")) << dump(check(candidate(p)));
  Parts q;
  q.cuda_extra = "torch::Tensor quiet(torch::Tensor a) { at::RecordFunctionGuard g(false); return a; }\n";
  EXPECT_TRUE(fires(check(candidate(q)), "introspection")) << dump(check(candidate(q)));
}

TEST(Policy, ComputedAttributeNamesAreResolved) {
  Parts p;
  p.forward = "        s = getattr(torch.cuda, 'Str' + 'eam')()\n" + Parts{}.forward;
  EXPECT_TRUE(fires(check(candidate(p)), "streams_events_graphs")) << dump(check(candidate(p)));
  Parts q;
  q.prelude = "from torch import cuda as c\nsync = c.synchronize\n";
  q.forward = "        c.synchronize = lambda: None\n" + Parts{}.forward;
  EXPECT_TRUE(fires(check(candidate(q)), "timer_harness_patch")) << dump(check(candidate(q)));
}

TEST(Policy, PythonStringSplitCannotHideCxxNames) {
  Parts p;
  p.prelude = "extra_src = '__global__ void k(float* y) { cudaStream' + 'Create(0); }'\n";
  auto r = check(candidate(p));
  EXPECT_TRUE(fires(r, "streams_events_graphs")) << dump(r);
}

TEST(Policy, ComputeReachedThroughHelpersAndReplacedForward) {
  Parts p;
  p.prelude = "def helper(x):\n    return torch.nn.functional.gelu(x)\n";
  p.init_extra = "        self.forward = self._impl\n";
  p.forward = "        pass\n\n    def _impl(self, x):\n        return helper(self.ext.relu_cuda(x))\n";
  auto r = check(candidate(p));
  EXPECT_TRUE(fires(r, "torch_compute_in_forward")) << dump(r);
  EXPECT_FALSE(fires(r, "bare_pass")) << dump(r);
  EXPECT_FALSE(fires(r, "forward_without_custom_call")) << dump(r);
}

TEST(Policy, PrecisionRulesOnlyForFp32Tasks) {
  Parts p;
  p.forward = "        return self.ext.relu_cuda(x.half())\n";
  EXPECT_TRUE(fires(check(candidate(p), Profile::strict, "float32"), "precision_downgrade"));
  EXPECT_FALSE(fires(check(candidate(p), Profile::strict, "float16"), "precision_downgrade"));
  EXPECT_EQ(infer_task_dtype("def get_inputs():\n    return [torch.randn(4).half()]\n"), "float16");
  EXPECT_EQ(infer_task_dtype("def get_inputs():\n    return [torch.randn(4)]\n"), "float32");
}

TEST(Policy, OffProfileRunsOnlyTheBasicContract) {
  Parts p;
  p.prelude = "import subprocess\n";
  auto r = check(candidate(p), Profile::off);
  EXPECT_TRUE(r.findings.empty());
  EXPECT_FALSE(r.rejected());
  // ... but no ModelNew, or no parse, is judged so under off too (eval rejects both)
  auto none = check("import torch\nclass Foo(torch.nn.Module):\n    pass\n", Profile::off);
  ASSERT_EQ(none.findings.size(), 1u);
  EXPECT_EQ(none.findings[0].rule_id, "model_new_missing");
  EXPECT_TRUE(none.rejected());
  auto bad = check("import torch\nclass ModelNew(:\n    pass\n", Profile::off);
  EXPECT_FALSE(bad.parsed);
  ASSERT_FALSE(bad.findings.empty());
  EXPECT_EQ(bad.findings[0].rule_id, "syntax_error");
}

TEST(Policy, ProfilesAndFindingJson) {
  for (Profile p : {Profile::strict, Profile::hybrid, Profile::kernelbench, Profile::off})
    EXPECT_EQ(profile_from_string(to_string(p)), p);
  EXPECT_FALSE(profile_from_string("lenient").has_value());
  Finding f{"try_except", Severity::reject, "msg", 3, 5, "try:"};
  nlohmann::json j = f;
  EXPECT_EQ(j["rule_id"], "try_except");
  EXPECT_EQ(j["severity"], "reject");
  EXPECT_EQ(j["line"], 3);
  EXPECT_EQ(j["column"], 5);
}

TEST(Policy, RuleTableIsWellFormed) {
  std::set<std::string> ids;
  for (const auto& r : rule_table()) {
    EXPECT_TRUE(ids.insert(std::string(r.id)).second) << "duplicate id " << r.id;
    EXPECT_FALSE(r.message.empty());
    EXPECT_EQ(r.message.find('\n'), std::string_view::npos);
    EXPECT_FALSE(r.source.empty());
    EXPECT_EQ(r.in(Profile::off).has_value(), r.id == "syntax_error" || r.id == "model_new_missing") << r.id;
  }
}

// The real CUDA-L1 rows (../shared/data): task 9 returns a lazy tensor subclass, task 40 has no
// custom kernel at all.
std::string cuda_l1_code(int task_id) {
  std::filesystem::path path = std::filesystem::path(KGYM_SHARED_DATA_DIR) / "cuda-l1" / "h100_level1.jsonl";
  std::ifstream in(path);
  if (!in) return {};
  std::string line;
  while (std::getline(in, line)) {
    auto row = nlohmann::json::parse(line);
    if (row["task_id"] == task_id && row["custom_code"].is_string()) return row["custom_code"];
  }
  return {};
}

TEST(PolicyCudaL1, Task9TensorSubclassIsRejected) {
  std::string code = cuda_l1_code(9);
  if (code.empty()) GTEST_SKIP() << "shared CUDA-L1 data not found";
  for (Profile p : {Profile::strict, Profile::hybrid, Profile::kernelbench}) {
    auto r = check(code, p);
    EXPECT_TRUE(r.rejected()) << to_string(p);
    EXPECT_TRUE(fires(r, "tensor_subclass")) << to_string(p) << dump(r);
  }
}

TEST(PolicyCudaL1, Task40WithoutCustomKernelIsRejectedUnderStrict) {
  std::string code = cuda_l1_code(40);
  if (code.empty()) GTEST_SKIP() << "shared CUDA-L1 data not found";
  auto r = check(code, Profile::strict);
  EXPECT_TRUE(r.rejected());
  EXPECT_TRUE(fires(r, "forward_without_custom_call")) << dump(r);
  EXPECT_TRUE(fires(check(code, Profile::kernelbench), "kb_backend_impl"));
}

}  // namespace
}  // namespace kgym::policy

namespace kgym::policy {
namespace {
TEST(Policy, DocsListEveryRule) {
  std::ifstream in(std::filesystem::path(KGYM_SOURCE_DIR) / "docs" / "policy_rules.md");
  ASSERT_TRUE(in) << "docs/policy_rules.md missing";
  std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& r : rule_table())
    EXPECT_NE(doc.find("| `" + std::string(r.id) + "` |"), std::string::npos) << r.id << " not in docs/policy_rules.md";
}
}  // namespace
}  // namespace kgym::policy

namespace kgym::policy {
namespace {
std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
std::vector<std::filesystem::path> corpus(const char* sub) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(KGYM_TEST_DATA_DIR) / "policy" / sub))
    if (e.path().extension() == ".py") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// Honest kernels in common idioms (tiled CUDA, warp shuffles, Triton autotune, autograd.Function,
// lazily built extensions, nn.Linear as a parameter holder) are not rejected.
TEST(PolicyCorpus, HonestCandidatesAreNotRejected) {
  auto files = corpus("honest");
  ASSERT_GE(files.size(), 4u);
  for (const auto& f : files) {
    std::string code = slurp(f);
    bool hybrid_only = f.filename().string().rfind("hybrid_", 0) == 0;
    auto strict = check(code, Profile::strict);
    auto hybrid = check(code, Profile::hybrid);
    EXPECT_FALSE(hybrid.rejected()) << f.filename() << "\n" << dump(hybrid);
    if (hybrid_only) {
      EXPECT_TRUE(strict.rejected()) << f.filename() << " uses a library conv: strict must reject";
    } else {
      EXPECT_FALSE(strict.rejected()) << f.filename() << "\n" << dump(strict);
    }
  }
}

// The catalog's cases that a source scan can see: each file names the rules that must fire.
TEST(PolicyCorpus, CatalogHacksFireTheirRules) {
  auto files = corpus("hacks");
  ASSERT_GE(files.size(), 15u);
  for (const auto& f : files) {
    std::string code = slurp(f);
    std::string first = code.substr(0, code.find('\n'));
    ASSERT_EQ(first.rfind("# expect: ", 0), 0u) << f.filename() << " lacks an '# expect:' line";
    std::istringstream words(first.substr(10, first.find("  ") - 10));
    auto r = check(code, Profile::strict);
    if (first.find("warn only") == std::string::npos) {
      EXPECT_TRUE(r.rejected()) << f.filename();
    }
    for (std::string rule; words >> rule;) {
      ASSERT_NE(find_rule(rule), nullptr) << f.filename() << ": unknown rule " << rule;
      EXPECT_TRUE(fires(r, rule)) << f.filename() << ": " << rule << " did not fire\n" << dump(r);
    }
  }
}
}  // namespace
}  // namespace kgym::policy

namespace kgym::policy {
namespace {
// Red team rt26: a declaration bound to another symbol (an asm label, #pragma redefine_extname,
// a weakref attribute, a mangled or C-API name in a string) reached a BLAS GEMM, ATen's kernels
// past the dispatcher and PyRun_SimpleString under innocent names. Inline PTX (asm statements)
// stays allowed.
TEST(PolicyCxx, SymbolBindingIsDynamicCodeButInlinePtxIsNot) {
  auto with = [](const std::string& cuda_extra) {
    Parts p;
    p.cuda_extra = cuda_extra;
    return check(candidate(p), Profile::strict);
  };
  for (const std::string bound : {
           "extern \"C\" void my_kernel(const char*, const char*, const int*) __asm__(\"sg\" \"emm_\");\n",
           "void helper(const float* x) noexcept asm(\"_ZN2at3cpu8_softmaxERKNS_6TensorElb\");\n",
           "extern int hook __asm(\"PyRun_SimpleString\");\n",
           "#pragma redefine_extname my_kernel innocent_name\n",
           "static void f() __attribute__((weakref(\"some_symbol\")));\n",
           "const char* name = \"_ZN2at6native\" \"4reluERKNS_6TensorE\";\n",
       }) {
    auto r = with(bound);
    EXPECT_TRUE(fires(r, "dynamic_code")) << bound << dump(r);
  }
  for (const std::string ptx : {
           "__device__ unsigned lane() { unsigned l; asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(l)); return l; }\n",
           "__device__ void fence() { asm(\"membar.gl;\"); __syncthreads(); }\n",
           "__device__ void pause(int k) { for (int i = 0; i < k; ++i) { asm volatile(\"nanosleep.u32 100;\"); } }\n",
       }) {
    auto r = with(ptx);
    EXPECT_FALSE(r.rejected()) << ptx << dump(r);
  }
}
}  // namespace
}  // namespace kgym::policy
