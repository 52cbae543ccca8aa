// The policy gate's name lists (data): the Python names, torch ops and C++ identifiers the
// matchers look for, and the predicates over CPU-library and AOTInductor entry points. Python
// names are fully resolved dotted names ("torch.cuda.Stream").
#include <algorithm>
#include <cctype>

#include "analysis.hpp"

namespace kgym::policy::detail {

/// True for the names of CPU math-library entry points: Fortran BLAS/LAPACK level 1-3 routines
/// (`sgemm_`, `dgemv`, `saxpy_`, ...), CBLAS (`cblas_*`), LAPACKE, MKL, oneDNN and OpenBLAS.
bool is_cpu_library_compute(const std::string& w) {
  // (nnp_/xnn_/qnnp: NNPACK, XNNPACK and QNNPACK, exported by libtorch_cpu: red team rt28 ran
  // nnp_relu__avx2 and xnn_run_unary_elementwise_nc under strict; fbgemm likewise)
  for (const char* prefix : {"cblas_", "LAPACKE_", "lapack_", "mkl_", "MKL_", "dnnl_", "openblas_", "bli_", "nnp_",
                             "xnn_", "qnnp_", "pytorch_qnnp_", "fbgemm", "mkldnn_", "libxsmm_", "goto_", "flexiblas_",
                             // MKL's FFT (DFTI)
                             "Dfti"})
    if (w.rfind(prefix, 0) == 0) return true;
  // (MKL's batched, packed and 3m GEMMs and LAPACK's solvers too: red team rt35 ran sgemm_batch,
  // exported by libtorch_cpu, under strict)
  static const std::set<std::string> kRoutines = {
      "gemm", "gemmt", "gemv", "symm", "symv", "syrk", "syr2k", "trmm", "trsm", "trmv", "trsv", "hemm",
      "herk", "dot", "dotc", "dotu", "axpy", "scal", "ger", "nrm2", "asum", "gesv", "getrf", "potrf",
      "gemm_batch", "gemm_batch_strided", "gemm3m", "gemm3m_batch", "gemm3m_batch_strided", "gemm_compute",
      "gemm_pack", "gemm_pack_get_size", "gemm_alloc", "gemmt_batch", "gemv_batch", "gemv_batch_strided",
      "trsm_batch", "trsm_batch_strided", "axpy_batch", "axpy_batch_strided", "dgmm_batch", "omatcopy",
      "imatcopy", "omatcopy2", "omatadd", "omatcopy_batch", "imatcopy_batch", "omatadd_batch", "gels", "gelsd",
      "gelss", "gelsy", "gesvd", "gesdd", "syev", "syevd", "heev", "heevd", "geqrf", "orgqr", "ungqr", "getri",
      "getrs", "potri", "potrs", "trtrs", "geev"};
  // Other spellings of the same entry points (red team rt29): MKL's upper-case Fortran aliases
  // (SGEMM, exported by libtorch_cpu), ILP64 suffixes (sgemm_64, sgemm64_), and a vendor's prefix
  // before the C interface (numpy's bundled OpenBLAS: scipy_cblas_sgemm64_).
  std::string lower = w;
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const char* part : {"cblas_", "lapacke_", "openblas", "_blas_", "mkl_"})
    if (lower.find(part) != std::string::npos) return true;
  const bool all_upper = std::none_of(w.begin(), w.end(), [](char ch) { return std::islower(static_cast<unsigned char>(ch)); });
  std::string rest = all_upper ? lower : w;
  if (rest.size() < 4 || std::string("sdcz").find(rest[0]) == std::string::npos) return false;
  rest = rest.substr(1);
  while (!rest.empty() && rest.back() == '_') rest.pop_back();
  if (rest.size() > 2 && rest.compare(rest.size() - 2, 2, "64") == 0) rest.resize(rest.size() - 2);
  while (!rest.empty() && rest.back() == '_') rest.pop_back();
  return kRoutines.count(rest) > 0;
}

/// AOTInductor's C shim (`aoti_torch_*`, exported by libtorch): `aoti_torch_cpu_<op>` and
/// `aoti_torch_cuda_<op>` run ATen's kernels past the dispatcher, and `aoti_torch_call_dispatcher`
/// (`torch_call_dispatcher`) runs any operator by a name built at run time (red team rt29). The
/// tensor-handle plumbing (get, delete, new/create, empty, dtype/device/layout queries) is not
/// compute.
bool is_aoti_compute(const std::string& w) {
  if (w == "torch_call_dispatcher" || w.rfind("torch_call_dispatcher", 0) == 0) return true;
  if (w.rfind("aoti_", 0) != 0) return false;
  for (const char* plumbing : {"aoti_torch_get_", "aoti_torch_delete_", "aoti_torch_new_", "aoti_torch_create_",
                               "aoti_torch_empty_strided", "aoti_torch_dtype_", "aoti_torch_device_type_",
                               "aoti_torch_layout_", "aoti_torch_memory_format_", "aoti_torch_grad_mode_",
                               "aoti_torch_is_", "aoti_torch_tensor_copy_", "aoti_torch_copy_", "aoti_torch_zero_",
                               "aoti_torch_clone", "aoti_torch_assign_tensors", "aoti_torch_as_strided"})
    if (w.rfind(plumbing, 0) == 0) return false;
  return true;
}


/// numpy/cupy names that compute nothing (dtypes, type queries, CuPy's own-kernel API).
const Names kNumpyNonCompute = {"float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64",
                                "uint8", "bool_", "dtype", "finfo", "iinfo", "ndarray", "issubdtype", "isscalar",
                                "integer", "floating", "uint16", "uint32", "uint64", "float_", "complex64", "complex128",
                                "intp", "uintp", "bool", "half", "single", "double", "longlong", "ulonglong", "int_",
                                "number", "generic", "signedinteger", "unsignedinteger", "inexact", "complexfloating",
                                "pi", "e", "inf", "nan", "newaxis", "euler_gamma", "random", "linalg", "fft",
                                // CuPy's own-kernel API (the candidate's code)
                                "RawKernel", "RawModule", "ElementwiseKernel", "ReductionKernel"};

/// torch ops that compute (torch.X, Tensor.X methods, F.X); allocation, views and casts are not here.
const Names kComputeOps = {
    "mm", "bmm", "matmul", "einsum", "addmm", "addbmm", "baddbmm", "addmv", "mv", "dot", "vdot", "inner",
    "outer", "tensordot", "linear", "bilinear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "convolution", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "max_pool1d", "max_pool2d", "max_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d", "lp_pool1d",
    "lp_pool2d", "relu", "relu_", "relu6", "gelu", "elu", "selu", "celu", "silu", "mish", "sigmoid",
    "sigmoid_", "tanh", "tanh_", "hardtanh", "hardtanh_", "hardsigmoid", "hardswish", "leaky_relu",
    "leaky_relu_", "prelu", "rrelu", "softplus", "softsign", "softmax", "log_softmax", "softmin", "logsigmoid",
    "threshold", "clamp", "clamp_", "clamp_min", "clamp_max", "clip", "sum", "nansum", "mean", "nanmean",
    "prod", "std", "var", "norm", "max", "min", "amax", "amin", "argmax", "argmin", "cumsum", "cumprod",
    "cummax", "cummin", "logsumexp", "logcumsumexp", "layer_norm", "batch_norm", "group_norm",
    "instance_norm", "rms_norm", "local_response_norm", "normalize", "dropout", "cross_entropy", "nll_loss",
    "kl_div", "mse_loss", "l1_loss", "huber_loss", "smooth_l1_loss", "triplet_margin_loss",
    "cosine_similarity", "pairwise_distance", "cdist", "hinge_embedding_loss", "margin_ranking_loss",
    "cosine_embedding_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "exp", "exp_",
    "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "abs", "pow", "sin", "cos", "erf", "square",
    "reciprocal", "sign", "where", "sort", "argsort", "topk", "kthvalue", "median", "mode", "diag", "tril",
    "triu", "matrix_power", "inverse", "det", "add", "sub", "mul", "div", "add_", "sub_", "mul_", "div_",
    "addcmul", "addcdiv", "lerp", "scaled_dot_product_attention", "embedding", "interpolate", "unfold",
    "fold", "pixel_shuffle", "grid_sample", "any", "all", "count_nonzero", "cumulative_trapezoid", "trace",
    "frobenius_norm", "nuclear_norm", "dist", "renorm", "minimum", "maximum", "fmax", "fmin", "floor",
    "ceil", "round", "trunc", "sigmoid", "erfinv", "logit", "xlogy", "hypot", "atan2", "remainder", "fmod",
    "glu", "hardshrink", "softshrink", "tanhshrink", "multi_head_attention_forward", "ctc_loss",
    "poisson_nll_loss", "gaussian_nll_loss", "soft_margin_loss", "multilabel_margin_loss",
    "multi_margin_loss", "multilabel_soft_margin_loss", "nll_loss2d", "one_hot", "bucketize", "histc",
    // red team rt24: each passed strict with 0 findings
    "chain_matmul", "native_layer_norm", "native_batch_norm", "native_group_norm", "native_norm", "kron", "addr",
    "heaviside", "logaddexp", "logaddexp2", "masked_fill", "masked_fill_", "masked_scatter", "cartesian_prod",
    "trapezoid", "trapz", "cross", "nan_to_num", "float_power", "floor_divide", "true_divide", "isclose",
    // red team rt25: each passed strict with 0 findings (the op trace saw them unless detected)
    "exp2", "aminmax", "var_mean", "std_mean", "multiply", "subtract", "divide", "rsub", "neg", "negative",
    "sinh", "cosh", "tan", "asin", "acos", "atan", "asinh", "acosh", "atanh", "ger", "smm", "hspmm", "nanmedian",
    "quantile", "nanquantile", "copysign", "ldexp", "frexp", "batch_norm_elemt", "block_diag", "diff",
    "logical_and", "logical_or", "logical_xor", "logical_not", "absolute", "sgn", "signbit", "bitwise_and",
    "bitwise_or", "bitwise_xor", "bitwise_not", "eq", "ne", "lt", "le", "gt", "ge", "greater", "less",
    "greater_equal", "less_equal", "frac", "fix", "sinc", "i0", "lgamma", "digamma", "polygamma", "erfc",
    "deg2rad", "rad2deg", "angle", "conj_physical", "positive"};
/// A compute op by name, its in-place form (`threshold_`, `baddbmm_`: red team rt25) included, and
/// torch.fbgemm_* (FBGEMM's GEMMs).
bool is_compute_op(const std::string& attr) {
  if (kComputeOps.count(attr) || attr.rfind("fbgemm_", 0) == 0) return true;
  return attr.size() > 1 && attr.back() == '_' && attr[attr.size() - 2] != '_' &&
         kComputeOps.count(attr.substr(0, attr.size() - 1)) > 0;
}
/// The library GEMM/convolution ops (hybrid allows one of them).
const Names kGemmConvOps = {"mm", "bmm", "matmul", "einsum", "addmm", "addbmm", "baddbmm", "addmv", "chain_matmul", "addr",
                            "mv", "tensordot", "linear", "bilinear", "conv1d", "conv2d", "conv3d",
                            "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "convolution",
                            "Linear", "Bilinear", "LazyLinear", "Conv1d", "Conv2d", "Conv3d",
                            "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "@"};
/// torch.nn attributes that hold structure, not compute.
const Names kNnContainers = {"Module", "ModuleList", "ModuleDict", "Parameter", "ParameterList",
                             "ParameterDict", "parameter", "init", "Buffer", "Identity"};
/// KernelBench's TORCH_COMPUTATION_OPS (names after "torch.").
const Names kKernelBenchTorchOps = {
    "mm", "bmm", "matmul", "einsum", "conv1d", "conv2d", "conv3d", "conv", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d",
    "max_pool2d", "max_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d", "relu", "hardtanh", "elu", "selu",
    "leaky_relu", "gelu", "softsign", "softplus", "softmax", "log_softmax", "tanh", "sigmoid", "hardsigmoid",
    "silu", "mish", "batch_norm", "group_norm", "layer_norm", "instance_norm", "rms_norm", "normalize",
    "linear", "cross_entropy", "kl_div", "mse_loss", "huber_loss", "triplet_margin_loss",
    "cosine_similarity", "logsumexp", "clamp", "dropout"};
/// Tensor operator dunders: `x.__mul__(y)` or `torch.Tensor.__matmul__` is the operator's compute.
const Names kComputeDunders = {"__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__",
                               "__rmul__", "__imul__", "__truediv__", "__rtruediv__", "__itruediv__", "__div__",
                               "__floordiv__", "__rfloordiv__", "__ifloordiv__", "__mod__", "__rmod__", "__pow__",
                               "__rpow__", "__ipow__", "__matmul__", "__rmatmul__", "__imatmul__", "__neg__",
                               "__abs__", "__and__", "__or__", "__xor__", "__invert__", "__lt__", "__le__",
                               "__gt__", "__ge__", "__lshift__", "__rshift__"};
/// torch.nn modules that hold no parameters: instantiating one only makes sense to call it (the
/// library computes). Names ending in "Loss" count too.
const Names kNnParamFree = {
    "ReLU", "ReLU6", "LeakyReLU", "RReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh",
    "Hardtanh", "Hardsigmoid", "Hardswish", "Softplus", "Softsign", "Softshrink", "Hardshrink", "Tanhshrink",
    "Threshold", "GLU", "LogSigmoid", "Softmax", "Softmax2d", "LogSoftmax", "Softmin", "MaxPool1d", "MaxPool2d",
    "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "LPPool1d", "LPPool2d",
    "LPPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
    "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout", "CosineSimilarity",
    "PairwiseDistance", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle",
    "PixelUnshuffle", "ChannelShuffle", "Fold", "Unfold", "LocalResponseNorm", "CrossMapLRN2d"};
/// Attributes of a class object that are only names, not methods.
const Names kClassNameAttrs = {"__name__", "__qualname__", "__module__", "__doc__"};
/// Method names that are never torch compute when the receiver is unknown but clearly not a tensor.
const Names kHarmlessReceivers = {"math", "triton", "tl", "np", "numpy", "cupy", "cp", "typing", "str",
                                  "functools", "itertools", "operator", "collections"};

/// Import allowlist (top-level module names) of the strict and hybrid profiles.
const Names kImportAllowlist = {"torch", "triton", "math", "typing", "__future__", "functools", "itertools",
                                "operator", "collections", "dataclasses", "enum", "numbers", "abc",
                                "numpy", "cupy", "warnings", "typing_extensions"};

/// Python names (modules, functions, attributes), resolved through imports, per rule.
const std::vector<NameRule> kNameRules = {
    {"streams_events_graphs",
     {"torch.cuda.Stream", "torch.cuda.stream", "torch.cuda.Event", "torch.cuda.graph", "torch.cuda.graphs",
      "torch.cuda.CUDAGraph", "torch.cuda.make_graphed_callables", "torch.cuda.set_stream",
      "torch.cuda.ExternalStream", "torch.cuda.streams", "torch.cuda.StreamContext", "torch.Stream",
      "torch.Event", "torch.cuda.graph_pool_handle", "cupy.cuda.Stream", "cupy.cuda.Event", "cupy.cuda.graph",
      ".wait_stream", ".record_stream", ".wait_event", ".record_event", ".elapsed_time"}},
    {"threads_processes_async",
     {"threading", "_thread", "multiprocessing", "concurrent", "asyncio", "signal", "sched",
      "torch.multiprocessing", "os.fork", "os.forkpty", "os.kill", "os.register_at_fork", "torch.jit.fork",
      "torch.jit._fork", "torch.jit.wait", "torch.futures", "queue"}},
    {"introspection",
     {"sys", "inspect", "gc", "builtins", "__builtins__", "__main__", "atexit", "time", "timeit",
      "traceback", "tracemalloc", "cProfile", "profile", "pstats", "torch.profiler", "torch.autograd.profiler",
      "torch.utils.benchmark", "torch.cuda.nvtx", "torch.cuda.profiler", "torch.cuda.memory._record_memory_history",
      "globals", "locals", "vars", ".__code__", ".__globals__", ".__closure__", ".__builtins__", ".f_globals",
      ".f_locals", ".f_back", ".f_code", ".gi_frame", ".tb_frame", ".__defaults__", ".__kwdefaults__",
      ".__subclasses__", ".__self__", ".__dict__", "weakref", "torch.autograd._profiler_enabled",
      "torch.autograd.profiler_util", "torch.autograd.profiler_legacy", "torch.autograd._disable_profiler",
      "torch.autograd._enable_profiler", "torch.autograd._prepare_profiler", "torch.autograd.kineto_available"}},
    {"tensor_subclass",
     {"torch.Tensor._make_subclass", "torch.Tensor.__new__", "torch._C._TensorBase", "torch.overrides",
      "torch.utils._python_dispatch", "torch._subclasses", ".as_subclass", "._make_subclass",
      ".__torch_function__", ".__torch_dispatch__"}},
    {"dynamic_code",
     {"exec", "eval", "compile", "__import__", "importlib", "ctypes", "cffi", "marshal", "pickle", "dill",
      "types", "code", "codeop", "runpy", "imp", "zipimport", "pkgutil", "torch.utils.cpp_extension.load_inline.__wrapped__"}},
    {"file_network_env",
     {"open", "io", "os", "pathlib", "shutil", "tempfile", "glob", "socket", "ssl", "http", "urllib",
      "urllib3", "requests", "ftplib", "smtplib", "mmap", "fcntl", "torch.save", "torch.load", "torch.hub",
      "numpy.load", "numpy.save", "numpy.savez", "numpy.fromfile", "numpy.memmap", "json", "shelve",
      "sqlite3", "dbm", "input"}},
    {"subprocess_system",
     {"subprocess", "os.system", "os.popen", "os.execv", "os.execve", "os.execvp", "os.execvpe", "os.execl",
      "os.execle", "os.execlp", "os.execlpe", "os.spawnv", "os.spawnve", "os.spawnl", "os.spawnlp",
      "os.posix_spawn", "os.posix_spawnp", "pty", "pip", "commands"}},
    {"library_compiler",
     {"torch.compile", "torch.jit.script", "torch.jit.trace", "torch.jit.trace_module", "torch.jit.freeze",
      "torch._dynamo", "torch._inductor", "torch.export", "torch.fx", "torch.cuda.jiterator", "torch.library"}},
    {"private_torch_internals",
     {"torch._C", "torch.ops.aten", "torch.ops.prims", "torch._ops", "torch._prims", "torch._refs", "torch._decomp",
      "torch._higher_order_ops", "torch._functorch", "torch._VF", "torch._vmap_internals",
      "torch._tensor", "torch._utils"}},
};

/// Builtin names that rules look at (bare identifiers count only when imported or one of these).
const Names kBuiltinsOfInterest = {"exec", "eval", "compile", "__import__", "open", "input", "globals",
                                   "locals", "vars", "__builtins__", "breakpoint"};

/// True when `name` starts with `prefix` on a component boundary ("torch.cuda.Stream" matches
/// "torch.cuda.Stream" and "torch.cuda.Stream.x", not "torch.cuda.Streams"). A prefix starting with
/// "." matches that attribute anywhere in the chain.
bool matches_prefix(std::string_view name, std::string_view prefix) {
  if (prefix.front() == '.') {
    std::string_view attr = prefix.substr(1);
    size_t pos = 0;
    while ((pos = name.find(attr, pos)) != std::string_view::npos) {
      bool left = pos > 0 && name[pos - 1] == '.';
      size_t end = pos + attr.size();
      bool right = end == name.size() || name[end] == '.';
      if (left && right) return true;
      pos = end;
    }
    return false;
  }
  if (name.size() < prefix.size() || name.substr(0, prefix.size()) != prefix) return false;
  return name.size() == prefix.size() || name[prefix.size()] == '.';
}

// C++ identifiers per rule (after preprocessing).
const std::vector<std::pair<std::string_view, Names>> kCxxNameRules = {
    {"streams_events_graphs",
     {"cudaStreamCreate", "cudaStreamCreateWithFlags", "cudaStreamCreateWithPriority", "getStreamFromPool",
      "cublasSetStream", "cublasSetStream_v2", "cudaEventCreate", "cudaEventCreateWithFlags", "cudaEventRecord",
      "cudaEventElapsedTime", "cudaEventSynchronize", "cudaStreamBeginCapture", "cudaStreamEndCapture",
      "cudaGraphLaunch", "cudaGraphInstantiate", "cudaGraphCreate", "cudaLaunchHostFunc",
      "cudaStreamAddCallback", "cuStreamCreate", "cuEventRecord", "cuEventCreate", "cuGraphLaunch",
      "setCurrentCUDAStream", "cudaStreamNonBlocking", "CUDAStreamGuard", "CUDAGraph", "cudaStreamWaitEvent"}},
    {"l2_persistence",
     {"cudaLimitPersistingL2CacheSize", "accessPolicyWindow", "cudaAccessPropertyPersisting",
      "cudaStreamAttributeAccessPolicyWindow", "cudaCtxResetPersistingL2Cache", "annotated_ptr",
      "apply_access_policy", "cudaStreamSetAttribute", "cudaKernelNodeAttributeAccessPolicyWindow",
      "cudaLaunchAttributeAccessPolicyWindow", "CU_LIMIT_PERSISTING_L2_CACHE_SIZE", "cudaDeviceSetLimit"}},
    {"threads_processes_async",
     {"pthread_create", "fork", "vfork", "clone", "sigaction", "signal", "jthread", "thrd_create", "kill",
      "raise", "alarm", "setitimer",
      // raw system calls: syscall(SYS_clone, ...) forked a process that passed strict (red team
      // 2026-12-01), and raw calls reach anything the named wrappers do
      "syscall", "SYS_clone", "SYS_clone3", "SYS_fork", "SYS_vfork", "SYS_kill", "SYS_tgkill", "SYS_write",
      "SYS_sendmsg", "__NR_clone", "__NR_fork", "clone3"}},
    {"subprocess_system",
     {"system", "popen", "execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp", "posix_spawn",
      "posix_spawnp"}},
    {"file_network_env",
     {"fopen", "freopen", "fdopen", "open", "openat", "creat", "ofstream", "ifstream", "fstream", "getenv",
      "setenv", "putenv", "unsetenv", "secure_getenv", "socket", "connect", "bind", "mmap", "shm_open",
      "unlink", "opendir", "readlink"}},
    {"introspection",  // turning off or probing the run-time op trace (RecordFunction) from C++
     {"RecordFunctionGuard", "DisableRecordFunctionGuard", "enableRecordFunction", "isRecordFunctionEnabled",
      "clearCallbacks", "removeCallback", "addGlobalCallback", "addThreadLocalCallback", "hasCallbacks",
      "hasGlobalCallbacks", "hasThreadLocalCallbacks", "clearGlobalCallbacks", "clearThreadLocalCallbacks",
      "RecordFunctionCallback", "profilerEnabled",
      // a callback switched off by its handle (red team rt35: at::disableCallback(1..63) blinded
      // kgym's op watch and the profiler, then ATen computed the ReLU under strict)
      "disableCallback", "reenableCallback", "getStepCallbacks", "getStepCallbacksUnlessEmpty",
      "set_record_function_seed_for_testing", "RecordFunctionCallbacksEntry", "CallbackHandle"}},
    {"dynamic_code", {"dlopen", "dlsym", "dlmopen", "mprotect", "process_vm_writev", "ptrace"}},
    // torch's allocator replaced: its allocate and free then run inside kgym's own work (making
    // the next input set, freeing the last), which the CPU wall check counts as the harness's
    // (docs/timing.md, "Wall check, CPU"), and see every tensor the harness makes
    {"private_torch_internals", {"SetCPUAllocator", "SetAllocator", "SetCPUCachingAllocator"}},
    {"precision_downgrade",
     {"__float2half", "__float2half_rn", "__float2half_rz", "__float2half_rd", "__float2half_ru",
      "__floats2half2_rn", "__float22half2_rn", "__float2half2_rn", "__float2bfloat16",
      "__float2bfloat16_rn", "__float2bfloat16_rz", "__float2bfloat16_rd", "__float2bfloat16_ru",
      "__floats2bfloat162_rn", "__float22bfloat162_rn", "__float2bfloat162_rn", "__float_to_tf32",
      "__nv_cvt_float_to_fp8", "__nv_cvt_float2_to_fp8x2", "__float2half_rn_sat"}},
};
/// C++ identifiers that need a following "(" to count (common words otherwise).
const Names kCxxCallOnly = {"system", "open", "signal", "kill", "raise", "clone", "bind", "connect",
                            "socket", "fork", "unlink", "popen", "alarm", "syscall", "clone3"};
/// CPython's interpreter internals in a candidate's C++ (dynamic_code): thread and interpreter
/// state, frames and code objects, the way from an extension to the harness's Python objects.
const Names kCPythonInternals = {"PyThreadState", "PyInterpreterState", "_PyRuntime", "_PyRuntimeState",
                                 "_PyInterpreterFrame", "_PyCFrame", "cframe", "current_frame", "PyFrameObject",
                                 "PyCodeObject", "co_localsplusnames", "co_localspluskinds", "localsplus",
                                 "co_varnames", "co_cellvars", "co_freevars", "f_locals", "f_globals", "f_builtins",
                                 "f_back", "f_code", "f_executable", "f_frame", "f_localsplus", "frame_obj",
                                 "PyGen_GetCode", "_PyThreadState_GET", "_PyThreadState_GetCurrent"};
const Names kHalfTypes = {"half", "__half", "half2", "__half2", "__nv_bfloat16", "__nv_bfloat162",
                          "nv_bfloat16", "nv_bfloat162", "bfloat16", "tf32", "half_t", "bfloat16_t", "tfloat32_t"};

}  // namespace kgym::policy::detail
