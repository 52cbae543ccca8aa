// The policy gate's rules as data: id, what each catches, the message for the model, the source of
// the idea, and its severity per profile (nullopt: the rule does not run in that profile).
// docs/policy_rules.md is this table in prose; keep them in step.
#include <algorithm>

#include "kgym/policy.hpp"

namespace kgym::policy {
namespace {
constexpr auto R = Severity::reject;
constexpr auto W = Severity::warn;
constexpr std::optional<Severity> X = std::nullopt;
}  // namespace

std::optional<Severity> Rule::in(Profile profile) const {
  switch (profile) {
    case Profile::strict: return strict;
    case Profile::hybrid: return hybrid;
    case Profile::kernelbench: return kernelbench;
    // The basic contract holds under every profile: a candidate that does not parse or has no
    // ModelNew is judged so under `off` too (before, the engine and `kgym check` each added
    // model_new_missing under off in their own way).
    case Profile::off: return id == "syntax_error" || id == "model_new_missing" ? strict : std::nullopt;
  }
  return std::nullopt;
}

const std::vector<Rule>& rule_table() {
  static const std::vector<Rule> rules = {
      // --- the candidate's shape ---
      {"syntax_error", "Python source that does not parse",
       "the Python source has a syntax error; fix it so the module imports", "basic contract", R, R, R},
      {"model_new_missing", "no top-level `class ModelNew`",
       "define a top-level class ModelNew(nn.Module) with a forward method", "KernelBench contract", R, R, R},
      // --- falling back to or reusing the reference (H27, H28) ---
      {"reference_fallback", "`ModelNew` code that calls or holds the reference `Model`",
       "do not call or wrap the reference Model; compute the result with your own kernel",
       "H28; Makora KernelHacks \"Baseline Kernel\"", R, R, X},
      {"reference_inherit", "a class inheriting from the reference `Model`",
       "do not inherit from the reference Model; ModelNew must subclass nn.Module and run your kernel",
       "H28; Kevin (arXiv 2507.11948) via KernelBench checker", R, R, X},
      {"try_except", "a try/except (any handler), the usual way to fall back to PyTorch when the kernel fails",
       "remove try/except: a failing kernel must fail, not fall back to PyTorch",
       "H27; Kevin paper; KernelBench checker code_bypass", R, R, R},
      {"bare_pass", "ModelNew, its forward, or a function on the forward path whose body is only `pass`",
       "a body that is only `pass` skips the work; implement it with your kernel",
       "H28; KernelBench checker PASS_PATTERN", R, R, X},
      {"pass_statement", "any `pass` statement (KernelBench's inheritance-bypass check)",
       "KernelBench rejects any `pass` statement; remove it", "KernelBench checker code_bypass", X, X, R},
      // --- torch compute where custom kernels are demanded (H29) ---
      {"torch_compute_in_forward",
       "torch compute ops (torch.*/F.*/Tensor methods such as matmul, conv, relu, softmax, sum, `@`) on the forward path",
       "replace this torch compute op on the forward path with your own kernel",
       "H29; KernelBench TORCH_COMPUTATION_OPS; seed gym post-mortem", R, R, X},
      {"nn_layer_in_forward", "an nn compute layer (nn.Linear, nn.Conv2d, nn.ReLU, ...) called on the forward path, also through an alias, a container, getattr, .forward or passed as a value",
       "do not call nn layers in forward; keep their parameters and run your own kernel on them",
       "H29; KernelBench check_pytorch_wrap", R, R, X},
      {"torch_compute_as_value",
       "a torch compute callable used as a value anywhere (stored in a list/dict, aliased, passed to partial/map, a default argument), or a bound Tensor compute method kept on the forward path",
       "a torch compute op is reached as a value (alias, container, argument, default); compute it with your own kernel",
       "red-team forms 1-4, 7, 11 (identity kernel + hidden torch compute)", R, R, X},
      {"array_interop",
       "anywhere in the candidate, a tensor's memory shared with another array library or a view of an array library's memory as a tensor: `.numpy()`, `torch.from_numpy`, DLPack (`from_dlpack`, `to_dlpack`, `__dlpack__`), the array protocols (`__array__`, `__array_interface__`, `__cuda_array_interface__`, `__array_namespace__`), `asarray`/`asanyarray`/`ascontiguousarray`/`frombuffer`, `ctypeslib`",
       "do not share a tensor's memory with numpy/cupy or another library (its operators then compute unseen); copy constants with torch.tensor and compute with your own kernel",
       "red team rt30: a numpy view made in __init__ computed the ReLU by operators on the forward path; rt24 (DLPack)", R, R, X},
      {"unbound_tensor_method", "torch.Tensor.<op>, type(x).<op>, x.__class__.<op>, or type(x)/x.__class__ kept as a value",
       "do not call Tensor methods through the class (torch.Tensor.relu, type(x).relu); use your own kernel",
       "red-team form 9", R, R, X},
      {"string_attribute_access", "getattr on a non-module with a computed name or a compute op's name, __getattribute__/__getattr__, operator.methodcaller/attrgetter",
       "do not look methods up by string (getattr, __getattribute__, operator.methodcaller); call your kernel directly",
       "red-team forms 5, 10", R, R, X},
      {"nn_compute_module", "a parameter-free torch.nn compute module (nn.ReLU, nn.Softmax, nn.MaxPool2d, nn.Dropout, *Loss, ...) built or referenced anywhere",
       "nn.ReLU/nn.Softmax and other parameter-free nn modules only compute in PyTorch; use your own kernel",
       "red-team form 6; KernelBench check_pytorch_wrap", R, R, X},
      {"torch_elementwise_in_forward", "elementwise torch arithmetic (+ - * / ...) on forward's tensor arguments",
       "this elementwise op runs in PyTorch; fold it into your kernel",
       "H29 (partial replacement); issue 3 strict profile", W, W, X},
      {"hybrid_library_call", "the one library GEMM/convolution the hybrid profile allows (recorded, not rejected)",
       "the one allowed library GEMM/convolution; everything else must be your own kernel",
       "seed gym post-mortem (hybrid policy for KernelBench level 2)", X, W, X},
      {"cpp_library_compute", "ATen/torch compute, cuBLAS or cuDNN calls inside the embedded C++/CUDA",
       "the C++ calls a library compute op (ATen/cuBLAS/cuDNN); write the kernel yourself",
       "H29; KernelGuard detect_scaled_mm_ref", R, R, X},
      {"library_compiler", "torch.compile, TorchScript, dynamo/inductor: the library writes the kernel",
       "do not use torch.compile/torch.jit; write the kernel yourself", "H29 (Inductor kernels)", R, R, X},
      {"private_torch_internals", "torch._C, torch.ops.aten, torch._prims and other private torch internals",
       "do not call private torch internals (torch._C, torch.ops.aten, ...)", "ARCHITECTURE gate 1", R, R, X},
      {"kb_torch_compute_op", "KernelBench's TORCH_COMPUTATION_OPS / torch.nn.functional anywhere in the code",
       "uses a torch computation op (KernelBench warning)", "KernelBench checker torch_computation_ops", X, X, W},
      {"kb_nn_compute_layer", "a torch.nn attribute other than the containers, Parameter and init, anywhere",
       "uses a torch.nn compute layer (KernelBench warning)", "KernelBench checker pytorch_wrap", X, X, W},
      {"kb_backend_impl", "neither a CUDA kernel (__global__, load_inline, thread indexing) nor a Triton kernel (@triton.jit, tl.load/store, tl.program_id)",
       "no custom CUDA or Triton kernel implementation found", "KernelBench checker cuda_impl/triton_impl", X, X, R},
      // --- custom code actually used ---
      {"forward_without_custom_call", "a ModelNew.forward whose call graph never reaches a custom kernel",
       "forward never calls your custom kernel; launch it from forward", "H28/H29; D14 ghost replay as static proxy", R, R, X},
      {"decoy_kernel", "a custom kernel defined (exported, __global__ or @triton.jit) but never used on the forward path",
       "this kernel is defined but never used on the forward path; remove it or call it",
       "issue 3 (decoy kernels); Makora KernelHacks", W, W, X},
      // --- timing manipulation (H01, H02, H06) ---
      {"streams_events_graphs", "CUDA streams, events or graphs created or switched (Python or C++)",
       "do not create or switch CUDA streams, events or graphs; launch on the current stream",
       "H01, H37; KernelBench STREAM_PATTERNS; kernelbot PR #374", R, R, W},
      {"l2_persistence", "persisting-L2 carve-outs and access-policy windows",
       "do not set persisting-L2 limits or access policy windows", "H06", R, R, X},
      {"threads_processes_async", "threads, processes, thread pools, asyncio or signals (Python or C++)",
       "do not use threads, processes, asyncio or signals; do the work inside forward",
       "H02; KernelBench THREAD_PATTERNS; KernelGuard detect_thread_injection", R, R, R},
      // --- tampering (H03, H04, H05, H33) ---
      {"timer_harness_patch", "assignment, setattr or delattr on attributes of modules or torch classes (monkey-patching)",
       "do not reassign attributes of torch, time, sys or other modules (monkey-patching)",
       "H04, H33; KernelBench TIMING_EVENT_PATCH_PATTERNS", R, R, R},
      {"introspection", "frames, gc, inspect, sys.modules, builtins, __code__/__globals__, profilers and timers",
       "do not use frames, gc, inspect, sys.modules, builtins, __code__/__globals__ or profilers",
       "H33; KernelGuard detect_introspection_exploit", R, R, X},
      {"tensor_subclass", "torch.Tensor subclasses, _make_subclass, as_subclass, __torch_function__/__torch_dispatch__",
       "return a plain torch.Tensor computed by your kernel; no tensor subclasses or torch function hooks",
       "H03; KernelBench LAZY_TENSOR_PATTERNS; CUDA-L1 task 9", R, R, R},
      {"dynamic_code", "exec/eval/compile/__import__, importlib, ctypes, cffi, dlopen, Python C-API in C++",
       "do not run dynamic code (exec, eval, importlib, ctypes, dlopen, Python C-API)", "H05, H33", R, R, X},
      // --- sandbox (H35) ---
      {"file_network_env", "file, network or environment access (open, os.*, pathlib, socket, getenv, fopen, /dev/shm)",
       "do not read or write files, the network or environment variables", "H35, H07 (/dev/shm replay)", R, R, X},
      {"subprocess_system", "subprocess, os.system, popen, exec*, fork",
       "do not start processes (subprocess, os.system, popen, exec, fork)", "H35", R, R, X},
      {"import_not_allowed", "an import outside the allowlist (torch, triton, math, typing, ...)",
       "import only torch, triton, math, typing and small standard helpers", "issue 3; KernelGenBench whitelist", R, R, X},
      // --- precision (H21, H40) ---
      {"precision_downgrade", "fp16/bf16/TF32 casts, intrinsics, tensor-core types or switches in an fp32 task",
       "the task is fp32: compute in fp32 (no half/bfloat16/TF32 casts, intrinsics or flags)",
       "H21, H40; KernelBench FP32_TO_FP16_PATTERNS; KernelBench issue #155", R, R, W},
      {"triton_dot_default_tf32", "tl.dot in an fp32 task without input_precision=\"ieee\" (Triton then uses TF32 on fp32 inputs)",
       "tl.dot on fp32 inputs uses TF32 by default; pass input_precision=\"ieee\" in an fp32 task",
       "H21; Triton tl.dot input_precision default", W, W, X},
      {"global_flag_change", "changes to global torch backend flags other than TF32 (cudnn.benchmark, deterministic)",
       "do not change global torch backend flags", "H40", W, W, X},
      {"cxx_preprocess_failed", "embedded C++ that the preprocessor rejects (e.g. an #error), so only raw tokens were scanned",
       "the embedded C++ does not preprocess; fix it so the gate (and the build) can read it",
       "issue 3 (names must be read after preprocessing)", W, W, X},
      // --- caching (H07) ---
      {"output_cache", "data_ptr(), id() or _version used as a key or compared on the forward path",
       "do not key results on data_ptr/id/_version; compute the output on every call", "H07", W, W, X},
  };
  return rules;
}

const Rule* find_rule(std::string_view id) {
  const auto& rules = rule_table();
  auto it = std::find_if(rules.begin(), rules.end(), [&](const Rule& r) { return r.id == id; });
  return it == rules.end() ? nullptr : &*it;
}

}  // namespace kgym::policy
