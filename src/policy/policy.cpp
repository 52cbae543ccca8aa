// The policy gate (gate 1): facts about a candidate from its parsed Python and preprocessed C++,
// then small matchers, one per rule of rules.cpp, that turn facts into findings.
#include "kgym/policy.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>

#include "cxx_scan.hpp"
#include "python_syntax.hpp"

namespace kgym::policy {

using detail::CxxToken;
using detail::field;
using detail::named_children;
using detail::PythonSyntax;
using detail::type;
using detail::valid;

std::string_view to_string(Severity severity) { return severity == Severity::reject ? "reject" : "warn"; }

void to_json(nlohmann::json& j, const Finding& f) {
  j = nlohmann::json{{"rule_id", f.rule_id}, {"severity", to_string(f.severity)}, {"message", f.message},
                     {"line", f.line},       {"column", f.column},                {"snippet", f.snippet}};
}

bool PolicyReport::rejected() const {
  return std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.severity == Severity::reject; });
}

std::string infer_task_dtype(std::string_view ref) {
  auto has = [&](std::string_view s) { return ref.find(s) != std::string_view::npos; };
  if (has("bfloat16")) return "bfloat16";
  if (has(".half()") || has("float16") || has("torch.half")) return "float16";
  return "float32";
}

namespace {

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


using Names = std::set<std::string, std::less<>>;

/// numpy/cupy names that compute nothing (dtypes, type queries, CuPy's own-kernel API).
const Names kNumpyNonCompute = {"float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64",
                                "uint8", "bool_", "dtype", "finfo", "iinfo", "ndarray", "issubdtype", "isscalar",
                                "integer", "floating", "uint16", "uint32", "uint64", "float_", "complex64", "complex128",
                                "intp", "uintp", "bool", "half", "single", "double", "longlong", "ulonglong", "int_",
                                "number", "generic", "signedinteger", "unsignedinteger", "inexact", "complexfloating",
                                "pi", "e", "inf", "nan", "newaxis", "euler_gamma", "random", "linalg", "fft",
                                // CuPy's own-kernel API (the candidate's code)
                                "RawKernel", "RawModule", "ElementwiseKernel", "ReductionKernel"};

// ---------------------------------------------------------------------------------------------
// Name lists (data). Python names are fully resolved dotted names ("torch.cuda.Stream").

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

struct NameRule {
  std::string_view rule_id;
  std::vector<std::string_view> prefixes;  ///< dotted-name prefixes (component boundary)
};
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

/// One embedded C++/CUDA source and where it sits in the Python file.
struct CxxUnit {
  TSNode at;
  std::string text;
  std::vector<CxxToken> tokens;  ///< raw tokens followed by preprocessed tokens
  size_t raw_count = 0;          ///< tokens[0, raw_count) are the raw (unpreprocessed) tokens
  bool preprocessed = false;
};

class Analysis {
 public:
  Analysis(std::string_view source, const PolicyContext& ctx) : syntax_(source), ctx_(ctx) {}
  PolicyReport run();

 private:
  // --- facts ---
  struct Function {
    TSNode node;
    std::string cls;  ///< enclosing class, "" for module-level
  };
  struct ClassInfo {
    TSNode node;
    std::vector<std::string> bases;  ///< resolved dotted names
    std::vector<TSNode> base_nodes;
    bool top_level = false;
  };
  PythonSyntax syntax_;
  const PolicyContext& ctx_;
  PolicyReport report_;
  std::map<std::string, Function> functions_;        ///< "f", "Cls.m"
  std::vector<std::pair<std::string, Function>> defs_;  ///< every definition, in order; a key defined twice (two nested `wrapper`s) twice
  std::map<std::string, ClassInfo> classes_;
  std::map<std::string, std::string, std::less<>> aliases_;  ///< local name -> dotted name
  std::vector<std::pair<TSNode, std::string>> imports_;      ///< import node, module dotted name
  std::map<std::string, std::vector<TSNode>> assigns_;       ///< "x" / "self.x" -> assigned values
  std::vector<TSNode> ext_calls_;                            ///< load_inline(...) and friends
  Names ext_factories_;                                      ///< functions that build an extension
  Names ext_handles_;                                        ///< names holding an extension or kernel
  Names exported_;                                           ///< functions exported by extensions
  Names own_op_namespaces_;  ///< operator namespaces the candidate's C++ defines (TORCH_LIBRARY(ns, m))
  Names triton_kernels_;
  std::vector<CxxUnit> cxx_;
  std::set<std::string> reachable_;                          ///< function keys on the forward path
  std::vector<TSNode> reachable_nodes_;
  bool has_model_new_ = false;
  bool forward_replaced_ = false;  ///< ModelNew assigns self.forward / self.__call__

  // --- helpers ---
  std::string text(TSNode n) const { return std::string(syntax_.text(n)); }
  std::string resolve(TSNode expr) const;
  std::string resolve_name(std::string_view dotted) const;
  /// The resolved name of a decorator node (`@triton.jit(...)` -> "triton.jit").
  std::string decorator_name(TSNode decorator) const {
    std::string dec = text(decorator);
    return resolve_name(dec.substr(1, dec.find('(') == std::string::npos ? std::string::npos : dec.find('(') - 1));
  }
  std::optional<std::string> eval_string(TSNode n, int depth = 0) const;
  std::string string_value(TSNode string_node) const;
  void add(std::string_view rule_id, TSNode at, std::string detail = {}, std::string snippet = {});
  /// A finding in embedded C++ `u`: at the first line of the candidate's file that holds `key`
  /// (default `what`: the name as written; quotes stripped), else at the unit's Python node (its load_inline call
  /// or string), where a macro or a computed string hides the name.
  void add_cxx(std::string_view rule_id, const CxxUnit& u, std::string detail, const std::string& what,
               std::string_view key = {});
  void add_at(std::string_view rule_id, int line, int column, std::string detail, std::string snippet);
  template <class F>
  void walk(TSNode n, F&& f) const;
  bool is_ext_call(TSNode call) const;

  // --- passes ---
  void collect(TSNode n, const std::string& cls, const std::string& func, int depth);
  void collect_import(TSNode n);
  void resolve_extensions();
  void collect_cxx();
  void compute_reachable();

  // --- matchers ---
  void match_syntax_error();
  void match_model_new();
  void match_reference();
  void match_try_pass();
  void match_names();
  void match_patching();
  void match_tensor_subclass();
  void match_imports();
  void match_forward_compute();
  void match_custom_calls();
  void match_precision();
  void match_cxx();
  void match_kernelbench();
  void match_output_cache();
  void match_module_containers_and_elementwise();

  struct GemmSite {
    TSNode node;
    std::string what;
    std::string rule = {};  ///< the rule it rejects under (empty: derived from `what`)
  };
  std::vector<GemmSite> gemm_sites_;                           ///< hybrid allowance candidates
  Names nn_holders_;                                           ///< names holding a torch.nn layer instance
  void match_compute_values();
  bool receiver_harmless(TSNode obj) const;
  bool torch_compute_name(const std::string& name, bool* gemm) const;
  /// True when `name` is "torch.ops.<ns>..." with <ns> a namespace the candidate's own C++
  /// defines (own_op_namespaces_).
  bool own_op_namespace(const std::string& name) const {
    if (name.rfind("torch.ops.", 0) != 0) return false;
    const std::string rest = name.substr(10);
    return own_op_namespaces_.count(rest.substr(0, rest.find('.'))) > 0;
  }
  std::vector<std::tuple<TSNode, std::string, std::string>> compute_sites_;  ///< node, rule, detail
};

template <class F>
void Analysis::walk(TSNode n, F&& f) const {
  if (!f(n)) return;
  uint32_t count = ts_node_named_child_count(n);
  for (uint32_t i = 0; i < count; ++i) walk(ts_node_named_child(n, i), f);
}

std::string Analysis::resolve_name(std::string_view dotted) const {
  size_t dot = dotted.find('.');
  std::string_view head = dotted.substr(0, dot);
  auto it = aliases_.find(head);
  if (it == aliases_.end()) return std::string(dotted);
  return it->second + (dot == std::string_view::npos ? "" : std::string(dotted.substr(dot)));
}

/// Dotted name of an identifier/attribute chain, resolved through imports ("F.relu" ->
/// "torch.nn.functional.relu"); a chain on a non-name receiver gives ".attr1.attr2".
std::string Analysis::resolve(TSNode expr) const {
  std::vector<std::string> parts;
  TSNode n = expr;
  while (valid(n) && type(n) == "attribute") {
    parts.push_back(text(field(n, "attribute")));
    n = field(n, "object");
  }
  std::string head;
  if (valid(n) && type(n) == "identifier") head = text(n);
  else if (valid(n) && type(n) == "call") {
    // getattr(X, "name") -> X.name
    TSNode fn = field(n, "function");
    TSNode args = field(n, "arguments");
    auto argv = valid(args) ? named_children(args) : std::vector<TSNode>{};
    if (valid(fn) && text(fn) == "getattr" && argv.size() >= 2) {
      if (auto s = eval_string(argv[1])) head = resolve(argv[0]) + "." + *s;
    }
  }
  std::string out = head;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) out += "." + *it;
  if (!head.empty()) return resolve_name(out);
  return out;  // starts with "."
}

std::string Analysis::string_value(TSNode s) const {
  std::string out;
  bool raw = false;
  for (TSNode c : named_children(s)) {
    std::string_view t = type(c);
    if (t == "string_start") {
      std::string p = text(c);
      raw = p.find('r') != std::string::npos || p.find('R') != std::string::npos;
    } else if (t == "string_content") {
      std::string body = text(c);
      if (raw) { out += body; continue; }
      for (size_t i = 0; i < body.size(); ++i) {
        if (body[i] == '\\' && i + 1 < body.size()) {
          char e = body[++i];
          switch (e) {
            case 'n': out += '\n'; break;
            case 't': out += '\t'; break;
            case '\n': break;
            default: out += e;
          }
        } else {
          out += body[i];
        }
      }
    } else if (t == "escape_sequence") {
      std::string e = text(c);
      out += e == "\\n" ? "\n" : e == "\\t" ? "\t" : e.size() > 1 ? e.substr(1) : e;
    }
  }
  return out;
}

/// The value of a string expression: literals, implicit and `+` concatenation, names bound to
/// strings, "".join([...]) and parentheses. nullopt when not a constant string.
std::optional<std::string> Analysis::eval_string(TSNode n, int depth) const {
  if (!valid(n) || depth > 12) return std::nullopt;
  std::string_view t = type(n);
  if (t == "string") return string_value(n);
  if (t == "concatenated_string") {
    std::string out;
    for (TSNode c : named_children(n)) out += string_value(c);
    return out;
  }
  if (t == "parenthesized_expression") {
    auto kids = named_children(n);
    return kids.size() == 1 ? eval_string(kids[0], depth + 1) : std::nullopt;
  }
  if (t == "binary_operator") {
    TSNode op = ts_node_child_by_field_name(n, "operator", 8);
    if (!valid(op) || text(op) != "+") return std::nullopt;
    auto l = eval_string(field(n, "left"), depth + 1);
    auto r = eval_string(field(n, "right"), depth + 1);
    if (l && r) return *l + *r;
    return std::nullopt;
  }
  if (t == "identifier") {
    auto it = assigns_.find(text(n));
    if (it == assigns_.end()) return std::nullopt;
    for (auto v = it->second.rbegin(); v != it->second.rend(); ++v)
      if (ts_node_start_byte(*v) != ts_node_start_byte(n))
        if (auto s = eval_string(*v, depth + 1)) return s;
    return std::nullopt;
  }
  if (t == "call") {
    TSNode fn = field(n, "function");
    if (valid(fn) && type(fn) == "attribute" && text(field(fn, "attribute")) == "join") {
      auto sep = eval_string(field(fn, "object"), depth + 1);
      auto args = named_children(field(n, "arguments"));
      if (sep && args.size() == 1 && (type(args[0]) == "list" || type(args[0]) == "tuple")) {
        std::string out;
        bool first = true;
        for (TSNode e : named_children(args[0])) {
          auto s = eval_string(e, depth + 1);
          if (!s) return std::nullopt;
          if (!first) out += *sep;
          out += *s;
          first = false;
        }
        return out;
      }
    }
  }
  return std::nullopt;
}

void Analysis::add_at(std::string_view rule_id, int line, int column, std::string detail, std::string snippet) {
  const Rule* rule = find_rule(rule_id);
  if (!rule) return;
  auto severity = rule->in(ctx_.profile);
  if (!severity) return;
  for (const auto& f : report_.findings)
    if (f.rule_id == rule_id && f.line == line && f.column == column) return;
  Finding f;
  f.rule_id = std::string(rule_id);
  f.severity = *severity;
  f.message = std::string(rule->message);
  if (!detail.empty()) f.message += " (" + detail + ")";
  f.line = line;
  f.column = column;
  f.snippet = std::move(snippet);
  report_.findings.push_back(std::move(f));
}

void Analysis::add(std::string_view rule_id, TSNode at, std::string detail, std::string snippet) {
  add_at(rule_id, PythonSyntax::line(at), PythonSyntax::column(at), std::move(detail),
         snippet.empty() ? syntax_.snippet(at) : std::move(snippet));
}

void Analysis::add_cxx(std::string_view rule_id, const CxxUnit& u, std::string detail, const std::string& what,
                       std::string_view key) {
  if (key.empty()) key = what;
  if (key.size() >= 2 && key.front() == '"' && key.back() == '"') key = key.substr(1, key.size() - 2);
  const std::string_view file = syntax_.source();
  // Search from where the unit's text begins in the file (its first line of 8+ characters, as
  // written), so that a comment above it naming the same thing is passed over.
  size_t from = 0;
  for (size_t b = 0; b < u.text.size();) {
    size_t e = u.text.find('\n', b);
    if (e == std::string::npos) e = u.text.size();
    std::string_view l(u.text.data() + b, e - b);
    while (!l.empty() && (l.front() == ' ' || l.front() == '\t')) l.remove_prefix(1);
    while (!l.empty() && (l.back() == ' ' || l.back() == '\t' || l.back() == '\r')) l.remove_suffix(1);
    if (l.size() >= 8) {
      if (size_t at = file.find(l); at != std::string_view::npos) from = at;
      break;
    }
    b = e + 1;
  }
  size_t pos = key.empty() ? std::string_view::npos : file.find(key, from);
  if (pos == std::string_view::npos && from > 0) pos = file.find(key);
  if (pos == std::string_view::npos) return add(rule_id, u.at, std::move(detail), what);
  const size_t line_start = file.rfind('\n', pos == 0 ? 0 : pos - 1);
  const int line = 1 + static_cast<int>(std::count(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
  const int column = 1 + static_cast<int>(line_start == std::string_view::npos || pos == 0 ? pos : pos - line_start - 1);
  add_at(rule_id, line, column, std::move(detail), what);
}

bool Analysis::is_ext_call(TSNode call) const {
  std::string name = resolve(field(call, "function"));
  auto ends = [&](std::string_view s) {
    return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  return ends("load_inline") || name == "torch.utils.cpp_extension.load" || name == "cpp_extension.load" ||
         ends("RawKernel") || ends("RawModule") || ends("ElementwiseKernel") || ends("ReductionKernel") ||
         ends(".get_function");
}

// ---------------------------------------------------------------------------------------------
// Fact collection

void Analysis::collect_import(TSNode n) {
  std::string_view t = type(n);
  if (t == "import_statement") {
    for (TSNode c : named_children(n)) {
      if (type(c) == "dotted_name") {
        std::string mod = text(c);
        aliases_[mod.substr(0, mod.find('.'))] = mod.substr(0, mod.find('.'));
        imports_.push_back({c, mod});
      } else if (type(c) == "aliased_import") {
        std::string mod = text(field(c, "name"));
        aliases_[text(field(c, "alias"))] = mod;
        imports_.push_back({c, mod});
      }
    }
  } else if (t == "import_from_statement" || t == "future_import_statement") {
    TSNode m = field(n, "module_name");
    std::string mod = valid(m) ? text(m) : "__future__";
    bool any = false;
    for (TSNode c : named_children(n)) {
      if (valid(m) && ts_node_eq(c, m)) continue;
      if (type(c) == "dotted_name") {
        std::string name = text(c);
        aliases_[name] = mod + "." + name;
        imports_.push_back({c, mod + "." + name});
        any = true;
      } else if (type(c) == "aliased_import") {
        std::string name = text(field(c, "name"));
        aliases_[text(field(c, "alias"))] = mod + "." + name;
        imports_.push_back({c, mod + "." + name});
        any = true;
      }
    }
    if (!any) imports_.push_back({n, mod});  // wildcard
  }
}

void Analysis::collect(TSNode n, const std::string& cls, const std::string& func, int depth) {
  std::string_view t = type(n);
  if (t == "import_statement" || t == "import_from_statement" || t == "future_import_statement") {
    collect_import(n);
    return;
  }
  if (t == "class_definition") {
    std::string name = text(field(n, "name"));
    ClassInfo info{n, {}, {}, func.empty() && cls.empty()};
    TSNode supers = field(n, "superclasses");
    if (valid(supers))
      for (TSNode b : named_children(supers))
        if (type(b) != "keyword_argument") {
          info.bases.push_back(resolve(b));
          info.base_nodes.push_back(b);
        }
    if (name == "ModelNew" && info.top_level) has_model_new_ = true;
    classes_[name] = info;
    TSNode body = field(n, "body");
    if (valid(body)) collect(body, name, "", depth + 1);
    return;
  }
  if (t == "function_definition") {
    std::string name = text(field(n, "name"));
    std::string key = (!cls.empty() && func.empty()) ? cls + "." + name : name;
    functions_[key] = {n, cls};
    defs_.push_back({key, {n, cls}});
    TSNode parent = ts_node_parent(n);
    if (valid(parent) && type(parent) == "decorated_definition")
      for (TSNode d : named_children(parent))
        if (type(d) == "decorator") {
          std::string resolved = decorator_name(d);
          if (resolved.rfind("triton.", 0) == 0 || resolved == "jit" || resolved.find("triton.jit") != std::string::npos)
            triton_kernels_.insert(name);
        }
    TSNode body = field(n, "body");
    if (valid(body)) collect(body, cls, key, depth + 1);
    return;
  }
  if (t == "assignment") {
    TSNode left = field(n, "left"), right = field(n, "right");
    if (valid(left) && valid(right)) {
      std::string target = text(left);
      assigns_[target].push_back(right);
      // k = triton.jit(f) / triton.autotune(...)(f): a Triton kernel by assignment
      if (type(right) == "call") {
        TSNode f = field(right, "function");
        while (valid(f) && type(f) == "call") f = field(f, "function");
        std::string r = valid(f) ? resolve(f) : "";
        if (r == "triton.jit" || r == "triton.autotune" || r == "triton.heuristics") triton_kernels_.insert(target);
      }
      // `x = torch.cuda` makes x an alias of a module-level name.
      if (type(left) == "identifier" && (type(right) == "attribute" || type(right) == "identifier")) {
        std::string r = resolve(right);
        std::string head = r.substr(0, r.find('.'));
        if (!r.empty() && r[0] != '.' && aliases_.count(text(right).substr(0, text(right).find('.'))) &&
            !head.empty())
          aliases_[target] = r;
      }
    }
  }
  if (t == "call") {  // list.append(v) / extend / insert: v flows into the list's name
    TSNode fn = field(n, "function");
    if (valid(fn) && type(fn) == "attribute") {
      std::string m = text(field(fn, "attribute"));
      TSNode obj = field(fn, "object");
      if ((m == "append" || m == "extend" || m == "insert" || m == "add_module") && valid(obj) &&
          (type(obj) == "identifier" || type(obj) == "attribute")) {
        auto args = named_children(field(n, "arguments"));
        if (!args.empty()) assigns_[text(obj)].push_back(args.back());
      }
    }
  }
  if (t == "call" && is_ext_call(n)) {
    ext_calls_.push_back(n);
    if (!func.empty()) ext_factories_.insert(func.substr(func.find('.') == std::string::npos ? 0 : func.find('.') + 1));
    TSNode args = field(n, "arguments");
    if (valid(args))
      for (TSNode a : named_children(args))
        if (type(a) == "keyword_argument" && text(field(a, "name")) == "functions") {
          TSNode v = field(a, "value");
          if (type(v) == "identifier") {
            auto it = assigns_.find(text(v));
            if (it != assigns_.end() && !it->second.empty()) v = it->second.back();
          }
          if (auto s = eval_string(v)) exported_.insert(*s);
          else
            for (TSNode e : named_children(v))
              if (auto s2 = eval_string(e)) exported_.insert(*s2);
        }
  }
  uint32_t count = ts_node_named_child_count(n);
  for (uint32_t i = 0; i < count; ++i) collect(ts_node_named_child(n, i), cls, func, depth + 1);
}

/// Names bound to an extension or kernel object: the results of load_inline & co, of functions
/// that build one, and names copied from those (`self.ext = ext`, `fn = ext.relu`).
void Analysis::resolve_extensions() {
  for (int round = 0; round < 4; ++round) {
    size_t before = ext_handles_.size() + ext_factories_.size();
    for (const auto& [target, values] : assigns_) {
      for (TSNode v : values) {
        bool handle = false;
        if (type(v) == "call") {
          TSNode fn = field(v, "function");
          std::string fname = text(fn);
          if (is_ext_call(v)) handle = true;
          std::string base = fname.rfind("self.", 0) == 0 ? fname.substr(5) : fname;
          if (ext_factories_.count(base)) handle = true;
          // ext.get_function("k") on a handle gives a kernel handle (a call of an exported
          // function gives a tensor, not a handle)
          std::string root = fname.substr(0, fname.rfind('.'));
          std::string method = fname.substr(fname.rfind('.') + 1);
          if (fname.find('.') != std::string::npos && ext_handles_.count(root) &&
              (method == "get_function" || method == "get_kernel"))
            handle = true;
        } else if (type(v) == "identifier" || type(v) == "attribute") {
          std::string vt = text(v);
          if (ext_handles_.count(vt)) handle = true;
          std::string root = vt.substr(0, vt.rfind('.'));
          if (vt.find('.') != std::string::npos && ext_handles_.count(root)) handle = true;
          if (triton_kernels_.count(vt)) handle = true;
        }
        if (handle) {
          ext_handles_.insert(target);
          if (target.rfind("self.", 0) == 0) ext_handles_.insert(target);
        }
      }
    }
    // a function returning a handle is a factory
    for (const auto& [key, fn] : functions_) {
      bool returns_handle = false;
      walk(field(fn.node, "body"), [&](TSNode x) {
        if (type(x) == "return_statement")
          for (TSNode r : named_children(x))
            if (ext_handles_.count(text(r)) || (type(r) == "call" && is_ext_call(r))) returns_handle = true;
        return !returns_handle;
      });
      if (returns_handle) ext_factories_.insert(key.substr(key.find('.') == std::string::npos ? 0 : key.find('.') + 1));
    }
    if (ext_handles_.size() + ext_factories_.size() == before) break;
  }
}

void Analysis::collect_cxx() {
  std::set<uint32_t> seen;  // start bytes of nodes already taken
  std::vector<std::pair<TSNode, std::string>> sources;
  auto take = [&](TSNode at, const std::string& s) {
    for (const auto& [node, text] : sources)
      if (text == s) return;
    sources.push_back({at, s});
  };
  // 1. load_inline(cpp_sources=..., cuda_sources=...), positional 2nd/3rd argument, and lists.
  for (TSNode call : ext_calls_) {
    TSNode args = field(call, "arguments");
    if (!valid(args)) continue;
    int positional = 0;
    for (TSNode a : named_children(args)) {
      TSNode value{};
      if (type(a) == "keyword_argument") {
        std::string k = text(field(a, "name"));
        if (k == "cpp_sources" || k == "cuda_sources" || k == "code" || k == "source" || k == "sources" ||
            k == "cuda_source" || k == "cpp_source")
          value = field(a, "value");
      } else {
        ++positional;
        if (positional >= 1 && positional <= 3) value = a;
      }
      if (!valid(value)) continue;
      if (type(value) == "identifier") {
        auto it = assigns_.find(text(value));
        if (it != assigns_.end() && !it->second.empty() &&
            (type(it->second.back()) == "list" || type(it->second.back()) == "tuple"))
          value = it->second.back();
      }
      if (type(value) == "list" || type(value) == "tuple") {
        for (TSNode e : named_children(value))
          if (auto s = eval_string(e)) take(call, *s);
      } else if (auto s = eval_string(value)) {
        take(call, *s);
      }
    }
  }
  // 2. Any string expression whose value looks like C/C++/CUDA.
  auto looks_cxx = [](const std::string& s) {
    for (std::string_view m : {"__global__", "#include", "torch::", "at::Tensor", "extern \"C\"", "<<<",
                               "PYBIND11_MODULE", "__device__", "#define", "TORCH_LIBRARY", "cuda_runtime"})
      if (s.find(m) != std::string::npos) return true;
    return false;
  };
  walk(syntax_.root(), [&](TSNode n) {
    std::string_view t = type(n);
    if (t == "string" || t == "concatenated_string" || t == "binary_operator") {
      if (auto s = eval_string(n); s && looks_cxx(*s)) {
        take(n, *s);
        return false;
      }
      if (t != "binary_operator") return false;
    }
    return true;
  });
  for (auto& [at, src] : sources) {
    CxxUnit unit{at, src, detail::tokenize_cxx(src)};
    unit.raw_count = unit.tokens.size();
    detail::Preprocessed pre;
    if (ctx_.preprocess_cxx) pre = detail::preprocess_cxx(src);
    unit.preprocessed = pre.ok;
    if (ctx_.preprocess_cxx && !pre.ok && pre.error.rfind("cannot run", 0) != 0) {
      std::string first = pre.error.substr(0, pre.error.find('\n'));
      size_t colon = first.find("error:");
      add("cxx_preprocess_failed", at, colon == std::string::npos ? first : first.substr(colon));
    }
    if (pre.ok) {
      auto more = detail::tokenize_cxx(pre.text);
      unit.tokens.insert(unit.tokens.end(), more.begin(), more.end());
    }
    // TORCH_LIBRARY(ns, m) defines the operator namespace ns (torch refuses a second
    // TORCH_LIBRARY for a namespace that exists, so it is never one of torch's own);
    // TORCH_LIBRARY_FRAGMENT and _IMPL only add to one and define nothing.
    for (size_t i = 0; i + 2 < unit.tokens.size(); ++i)
      if (unit.tokens[i].text == "TORCH_LIBRARY" && unit.tokens[i + 1].text == "(" && unit.tokens[i + 2].kind == 'i')
        own_op_namespaces_.insert(unit.tokens[i + 2].text);
    // m.def("name", ...) and TORCH_LIBRARY m.def("name(Tensor x) -> Tensor") export names.
    for (size_t i = 0; i + 3 < unit.tokens.size(); ++i)
      if (unit.tokens[i].text == "def" && unit.tokens[i + 1].text == "(" && unit.tokens[i + 2].kind == 's') {
        std::string name = unit.tokens[i + 2].text;
        name = name.substr(0, name.find('('));
        if (!name.empty()) exported_.insert(name);
      }
    cxx_.push_back(std::move(unit));
  }
}

/// Functions on the forward path: ModelNew.forward and __call__, and what they call by name,
/// through self.method, Class.method, Function.apply and submodules built in __init__.
void Analysis::compute_reachable() {
  // Work items are definitions, not names: a name defined twice (two nested `wrapper`s, one
  // honest and one not) brings every definition of it.
  std::vector<const Function*> work;
  std::set<uint32_t> visited;  // definitions' start bytes
  auto push = [&](const std::string& key) {
    if (!functions_.count(key)) return;
    reachable_.insert(key);
    for (const auto& [k, f] : defs_)
      if (k == key && visited.insert(ts_node_start_byte(f.node)).second) work.push_back(&f);
  };
  // A class's call path: forward, __call__ (and, for a class made on the path, __init__ and
  // __new__), its own and those of the candidate's classes it derives from (red team rt29: a base
  // class's __call__ ran numpy around ModelNew's forward).
  std::set<std::string> classes_pushed;
  std::function<void(const std::string&, bool)> push_class_path = [&](const std::string& c, bool made) {
    if (!classes_pushed.insert(c + (made ? "+" : "")).second) return;
    for (const char* m : {"forward", "__call__"}) push(c + "." + m);
    if (made)
      for (const char* m : {"__init__", "__new__"}) push(c + "." + m);
    if (auto it = classes_.find(c); it != classes_.end())
      for (const auto& b : it->second.bases)
        if (classes_.count(b)) push_class_path(b, made);
  };
  auto push_class = [&](const std::string& c) { push_class_path(c, true); };
  // `self.forward = self._impl` (or a lambda) in __init__ replaces forward.
  std::vector<TSNode> lambdas;
  for (const char* slot : {"self.forward", "self.__call__"}) {
    auto it = assigns_.find(slot);
    if (it == assigns_.end()) continue;
    forward_replaced_ = true;
    for (TSNode v : it->second) {
      std::string vt = text(v);
      if (type(v) == "lambda") lambdas.push_back(v);
      else if (vt.rfind("self.", 0) == 0) push("ModelNew." + vt.substr(5));
      else push(vt);
    }
  }
  push_class_path("ModelNew", false);
  // What Python calls without the path naming it (red team rt29: numpy ran in a __getitem__, a
  // forward hook and a decorator's wrapper, none of them reached by name). (1) Every special
  // method of every class of the candidate, except those that make a class or an object (a
  // class made on the path brings its __init__ and __new__ above). (2) Every function or method
  // of the candidate used as a value anywhere in the file, not only called: a hook, a callback, a
  // decorator, a function returned or stored. What the file only calls directly at load time
  // (module level, ModelNew.__init__) stays off the path.
  static const Names kMakingDunders = {"__init__", "__new__", "__init_subclass__", "__set_name__", "__prepare__",
                                       "__post_init__"};
  for (const auto& [key, f] : defs_) {
    if (f.cls.empty()) continue;
    const std::string m = key.substr(key.rfind('.') + 1);
    if (m.size() > 4 && m.rfind("__", 0) == 0 && m.compare(m.size() - 2, 2, "__") == 0 && !kMakingDunders.count(m))
      push(key);
  }
  {
    std::set<std::string> methods;  // method names of the candidate's classes
    for (const auto& [key, f] : defs_)
      if (!f.cls.empty()) methods.insert(key.substr(key.rfind('.') + 1));
    walk(syntax_.root(), [&](TSNode x) {
      std::string_view tx = type(x);
      if (tx == "import_statement" || tx == "import_from_statement" || tx == "future_import_statement") return false;
      if (tx != "identifier" && tx != "attribute") return true;
      TSNode p = ts_node_parent(x);
      const bool called = valid(p) && type(p) == "call" && ts_node_eq(field(p, "function"), x);
      if (tx == "attribute") {
        const std::string m = text(field(x, "attribute"));
        if (!called && methods.count(m))
          for (const auto& [key, f] : defs_)
            if (!f.cls.empty() && key == f.cls + "." + m) push(key);
        return true;
      }
      if (called || !valid(p)) return true;
      std::string_view tp = type(p);
      if ((tp == "function_definition" || tp == "class_definition" || tp == "keyword_argument") &&
          ts_node_eq(field(p, "name"), x))
        return true;
      if (tp == "attribute" && ts_node_eq(field(p, "attribute"), x)) return true;
      const std::string name = text(x);
      if (functions_.count(name)) push(name);
      return true;
    });
  }
  // Every lambda counts as forward path: a lambda is a callable value, and where it flows (a
  // container, an attribute, an argument) is not followed.
  walk(syntax_.root(), [&](TSNode x) {
    if (type(x) == "lambda" &&
        std::none_of(lambdas.begin(), lambdas.end(), [&](TSNode l) { return ts_node_eq(l, x); }))
      lambdas.push_back(x);
    return true;
  });
  for (TSNode l : lambdas) {  // names a lambda calls
    walk(l, [&](TSNode x) {
      if (type(x) == "identifier") push(text(x));
      if (type(x) == "attribute" && text(field(x, "object")) == "self") push("ModelNew." + text(field(x, "attribute")));
      return true;
    });
  }
  // Values flow: a name or self.<attr> used on the forward path reaches the functions its assigned
  // values mention (`TABLE = {"f": helper}` ... `TABLE["f"](x)`; `self.ops = [helper]`).
  std::set<std::string> followed;
  std::function<void(TSNode, const std::string&)> follow = [&](TSNode v, const std::string& cls) {
    walk(v, [&](TSNode x) {
      std::string_view tx = type(x);
      if (tx == "lambda") return false;  // all lambdas are on the path already
      std::string key;
      if (tx == "identifier") {
        key = text(x);
        push(key);
        if (classes_.count(key)) push_class(key);
      } else if (tx == "attribute" && text(field(x, "object")) == "self") {
        key = "self." + text(field(x, "attribute"));
        if (!cls.empty()) push(cls + "." + text(field(x, "attribute")));
      } else {
        return true;
      }
      if (followed.insert(key).second)
        if (auto it = assigns_.find(key); it != assigns_.end())
          for (TSNode y : it->second) follow(y, cls);
      return tx != "attribute";
    });
  };
  while (!work.empty()) {
    const Function& fn = *work.back();
    work.pop_back();
    follow(field(fn.node, "parameters"), fn.cls);  // default arguments
    walk(field(fn.node, "body"), [&](TSNode x) {
      std::string_view t = type(x);
      if (t == "identifier") {
        std::string name = text(x);
        push(name);
        if (classes_.count(name)) push_class(name);
        if (assigns_.count(name)) follow(x, fn.cls);
      } else if (t == "attribute") {
        TSNode obj = field(x, "object");
        std::string attr = text(field(x, "attribute"));
        if (valid(obj) && type(obj) == "identifier") {
          std::string o = text(obj);
          if (o == "self" || o == "cls") {
            push(fn.cls + "." + attr);
            follow(x, fn.cls);
            auto it = assigns_.find("self." + attr);
            if (it != assigns_.end())
              for (TSNode v : it->second) {
                std::string callee = type(v) == "call" ? text(field(v, "function")) : text(v);
                if (classes_.count(callee)) push_class(callee);
                if (callee.rfind("self.", 0) == 0) push(fn.cls + "." + callee.substr(5));
                push(callee);
              }
            // methods of base classes defined in the candidate
            if (classes_.count(fn.cls))
              for (const auto& b : classes_.at(fn.cls).bases) push(b + "." + attr);
          } else if (classes_.count(o)) {
            if (attr == "apply") push_class(o);
            push(o + "." + attr);
          }
        }
      }
      return true;
    });
  }
  for (const auto& [key, f] : defs_)
    if (visited.count(ts_node_start_byte(f.node))) reachable_nodes_.push_back(f.node);
  reachable_nodes_.insert(reachable_nodes_.end(), lambdas.begin(), lambdas.end());
}

// ---------------------------------------------------------------------------------------------
// Matchers

void Analysis::match_syntax_error() {
  TSNode bad{};
  bool found = false;
  walk(syntax_.root(), [&](TSNode n) {
    if (found) return false;
    if (ts_node_is_error(n) || ts_node_is_missing(n)) {
      bad = n;
      found = true;
      return false;
    }
    return ts_node_has_error(n);
  });
  if (!found) {  // a MISSING node may be unnamed; search all children
    std::function<void(TSNode)> any = [&](TSNode n) {
      if (found) return;
      if (ts_node_is_missing(n) || ts_node_is_error(n)) { bad = n; found = true; return; }
      for (uint32_t i = 0; i < ts_node_child_count(n) && !found; ++i) any(ts_node_child(n, i));
    };
    any(syntax_.root());
  }
  TSNode at = found ? bad : syntax_.root();
  add("syntax_error", at, found && ts_node_is_missing(at) ? std::string("missing ") + ts_node_type(at) : "");
}

void Analysis::match_model_new() {
  if (has_model_new_) return;
  // `ModelNew = SomeClass` at module level also defines the name the harness looks up.
  for (TSNode c : named_children(syntax_.root()))
    if (type(c) == "expression_statement")
      for (TSNode a : named_children(c))
        if (type(a) == "assignment" && text(field(a, "left")) == "ModelNew") return;
  add_at("model_new_missing", 0, 0, "", "");
}

void Analysis::match_reference() {
  // Names the reference defines (its classes other than ModelNew); `Model` always counts.
  Names ref_names = {"Model"};
  if (!ctx_.reference_source.empty()) {
    PythonSyntax ref(ctx_.reference_source);
    for (TSNode c : named_children(ref.root()))
      if (type(c) == "class_definition") ref_names.insert(std::string(ref.text(field(c, "name"))));
  }
  ref_names.erase("ModelNew");
  for (const auto& [name, info] : classes_)
    for (size_t i = 0; i < info.bases.size(); ++i)
      if (ref_names.count(info.bases[i]) || ref_names.count(text(info.base_nodes[i])))
        add("reference_inherit", info.base_nodes[i], "class " + name + " inherits " + text(info.base_nodes[i]));
  walk(syntax_.root(), [&](TSNode n) {
    std::string_view t = type(n);
    if (t == "class_definition" && ref_names.count(text(field(n, "name")))) return false;  // its own body
    if (t == "argument_list" && valid(ts_node_parent(n)) && type(ts_node_parent(n)) == "class_definition")
      return false;  // base list: reference_inherit
    if (t == "identifier" && ref_names.count(text(n))) {
      TSNode p = ts_node_parent(n);
      bool is_attr_name = valid(p) && type(p) == "attribute" && ts_node_eq(field(p, "attribute"), n);
      bool is_kw = valid(p) && type(p) == "keyword_argument" && ts_node_eq(field(p, "name"), n);
      if (!is_attr_name && !is_kw) add("reference_fallback", n, "uses " + text(n));
    }
    return true;
  });
}

void Analysis::match_try_pass() {
  auto pass_like = [&](TSNode body) {
    if (!valid(body)) return false;
    auto stmts = named_children(body);
    bool any_pass = false;
    for (TSNode s : stmts) {
      std::string_view t = type(s);
      if (t == "comment") continue;
      if (t == "pass_statement") { any_pass = true; continue; }
      if (t == "expression_statement") {
        auto e = named_children(s);
        if (e.size() == 1 && (type(e[0]) == "string" || type(e[0]) == "ellipsis")) {
          if (type(e[0]) == "ellipsis") any_pass = true;
          continue;
        }
      }
      return false;
    }
    return any_pass;
  };
  walk(syntax_.root(), [&](TSNode n) {
    std::string_view t = type(n);
    if (t == "try_statement") {
      bool has_except = false;
      for (TSNode c : named_children(n))
        if (type(c) == "except_clause" || type(c) == "except_group_clause") has_except = true;
      if (has_except) add("try_except", n);
    } else if (t == "pass_statement") {
      add("pass_statement", n);
    } else if (t == "class_definition" && text(field(n, "name")) == "ModelNew" && pass_like(field(n, "body"))) {
      add("bare_pass", n, "ModelNew has no body");
    } else if (t == "function_definition" && pass_like(field(n, "body"))) {
      bool replaced = forward_replaced_ && text(field(n, "name")) == "forward";
      for (TSNode r : reachable_nodes_)
        if (ts_node_eq(r, n) && !replaced) add("bare_pass", n, text(field(n, "name")) + " does nothing");
    }
    return true;
  });
}

void Analysis::match_imports() {
  for (const auto& [node, mod] : imports_) {
    bool specific = false;
    for (const auto& rule : kNameRules)
      for (auto p : rule.prefixes)
        if (p.front() != '.' && matches_prefix(mod, p)) {
          add(rule.rule_id, node, "import " + mod);
          specific = true;
        }
    std::string top = mod.substr(0, mod.find('.'));
    if (!specific && !kImportAllowlist.count(top)) add("import_not_allowed", node, "import " + mod);
  }
}

void Analysis::match_names() {
  // Maximal dotted chains and bare names, resolved through imports.
  walk(syntax_.root(), [&](TSNode n) {
    std::string_view t = type(n);
    if (t == "import_statement" || t == "import_from_statement" || t == "future_import_statement") return false;
    bool getattr_call = t == "call" && valid(field(n, "function")) && text(field(n, "function")) == "getattr";
    if (t != "attribute" && t != "identifier" && !getattr_call) return true;
    TSNode p = ts_node_parent(n);
    if (valid(p) && type(p) == "attribute" && ts_node_eq(field(p, "object"), n)) return true;  // not maximal
    if (valid(p) && type(p) == "attribute" && ts_node_eq(field(p, "attribute"), n)) return false;  // x.<name>
    if (t == "identifier") {
      // a bare name only counts when it is a use, not a definition or a keyword/attribute name
      if (valid(p) && (type(p) == "function_definition" || type(p) == "class_definition" ||
                       type(p) == "keyword_argument" || type(p) == "parameters" ||
                       type(p) == "default_parameter" || type(p) == "typed_parameter"))
        return true;
      std::string name = text(n);
      if (functions_.count(name) || (assigns_.count(name) && !aliases_.count(name))) return true;  // shadowed
    }
    std::string name = resolve(n);
    if (name.empty()) return true;
    // Chains whose root is not an import or a builtin (locals, self) only match ".attr" prefixes.
    std::string raw_root = text(n).substr(0, text(n).find_first_of(".("));
    bool rooted = name[0] != '.' && (getattr_call || aliases_.count(raw_root) ||
                                     (kBuiltinsOfInterest.count(raw_root) && !functions_.count(raw_root) &&
                                      !assigns_.count(raw_root)));
    // torch.ops.<ns> of a namespace torch itself registers (mkldnn, quantized, onednn, inductor,
    // ...; aten and prims are in the list above): library compute that passed strict as the
    // candidate's own code (red team rt24: oneDNN's GEMM through torch.ops.mkldnn). Only a
    // namespace the candidate's own TORCH_LIBRARY defines is its code.
    // torch._<name> (torch._softmax, torch._log_softmax, torch._addmm_activation, ...): ATen's
    // private entry points, compute the lists above do not name (red team rt24).
    if (rooted && name.rfind("torch._", 0) == 0 && name.rfind("torch.__", 0) != 0) {
      bool listed = false;  // torch._C, torch._dynamo, ...: the rules below name them
      for (const auto& rule : kNameRules)
        for (auto prefix : rule.prefixes)
          if (prefix.front() != '.' && matches_prefix(name, prefix)) listed = true;
      if (!listed) add("private_torch_internals", n, name + " (a private torch function)");
    }
    if (rooted && matches_prefix(name, "torch.ops") && !own_op_namespace(name) &&
        !matches_prefix(name, "torch.ops.aten") && !matches_prefix(name, "torch.ops.prims"))
      add("private_torch_internals", n,
          name + " (an operator namespace of torch itself; only one your own TORCH_LIBRARY defines is your code)");
    for (const auto& rule : kNameRules)
      for (auto prefix : rule.prefixes) {
        bool hit = prefix.front() == '.' ? matches_prefix("." + name, prefix)
                                         : rooted && matches_prefix(name, prefix);
        if (hit) {
          if (rule.rule_id == "file_network_env" && (prefix == "open" || prefix == "input" || prefix == "json")) {
            // builtin open()/input(): only as a call; json only when imported
            if (prefix == "json" && !aliases_.count("json")) continue;
            if (prefix != "json" && !(valid(p) && type(p) == "call")) continue;
          }
          if (rule.rule_id == "dynamic_code" && (prefix == "compile" || prefix == "eval" || prefix == "exec") &&
              !(valid(p) && type(p) == "call"))
            continue;
          if (rule.rule_id == "introspection" && (prefix == "globals" || prefix == "locals" || prefix == "vars") &&
              !(valid(p) && type(p) == "call"))
            continue;
          // os.fork etc. are more specific than os.*
          if (rule.rule_id == "file_network_env" && prefix == "os") {
            bool more_specific = false;
            for (const auto& r2 : kNameRules)
              if (r2.rule_id != "file_network_env")
                for (auto p2 : r2.prefixes)
                  if (p2.size() > 3 && p2.substr(0, 3) == "os." && matches_prefix(name, p2)) more_specific = true;
            if (more_specific) continue;
          }
          add(rule.rule_id, n, name);
          goto next_rule;
        }
      next_rule:;
      }
    return true;
  });
  // Array interop anywhere (red team rt30: a numpy view of a torch buffer made in __init__, then
  // numpy's operators on it in forward, which no name and no ATen trace shows), and modules
  // reached as another module's attribute (rt30: numpy's namespace -> .ctypeslib -> ctypes,
  // ._ctypeslib.os -> os.sys.modules -> any module, past the import and name rules).
  static const Names kInterop = {"numpy", "from_numpy", "from_dlpack", "to_dlpack", "__dlpack__", "__dlpack_device__",
                                 "__array__", "__array_interface__", "__array_struct__", "__cuda_array_interface__",
                                 "__array_namespace__", "asarray", "asanyarray", "ascontiguousarray", "frombuffer",
                                 "as_array", "ctypeslib", "_ctypeslib"};
  static const std::map<std::string, std::string_view, std::less<>> kModuleAttrs = {
      {"os", "introspection"}, {"sys", "introspection"}, {"inspect", "introspection"}, {"builtins", "introspection"},
      {"gc", "introspection"}, {"ctypes", "dynamic_code"}, {"CDLL", "dynamic_code"}, {"cdll", "dynamic_code"},
      {"PyDLL", "dynamic_code"}, {"pydll", "dynamic_code"}, {"pythonapi", "dynamic_code"},
      // numpy and threads as attributes of other modules (red team rt31: torch.storage.np,
      // torch.storage.threading)
      {"np", "array_interop"}, {"threading", "threads_processes_async"}, {"_thread", "threads_processes_async"},
      {"multiprocessing", "threads_processes_async"},
      {"LoadLibrary", "dynamic_code"}, {"importlib", "dynamic_code"}, {"subprocess", "subprocess_system"},
      // whether the profiler runs: a candidate that can tell traced calls from the others (rt30)
      {"profiler", "introspection"}, {"_is_profiler_enabled", "introspection"}, {"_profiler_enabled", "introspection"}};
  walk(syntax_.root(), [&](TSNode n) {
    std::string_view t = type(n);
    if (t == "import_statement" || t == "import_from_statement" || t == "future_import_statement") return false;
    std::string attr;
    if (t == "attribute") {
      attr = text(field(n, "attribute"));
    } else if (t == "identifier" && text(n) == "memoryview" && !functions_.count("memoryview") &&
               !assigns_.count("memoryview")) {
      attr = "memoryview";  // the builtin: a view of a buffer's memory (rt31's kind)
      add("array_interop", n, "memoryview");
      return true;
    } else if (t == "identifier" && aliases_.count(text(n))) {  // from numpy import asarray
      const std::string name = resolve(n);
      if (name.find('.') != std::string::npos) attr = name.substr(name.rfind('.') + 1);
      if (attr == "numpy") attr.clear();  // `import numpy` itself
    } else {
      return true;
    }
    if (kInterop.count(attr)) add("array_interop", n, text(n));
    // numpy's ndarray constructor over a buffer (a tensor's bytes or memory) and memoryview
    if (t == "attribute" && attr == "ndarray") {
      TSNode p = ts_node_parent(n);
      if (valid(p) && type(p) == "call" && ts_node_eq(field(p, "function"), n)) add("array_interop", n, text(n) + "(...)");
    }
    if (t == "attribute")
      if (auto it = kModuleAttrs.find(attr); it != kModuleAttrs.end())
        add(it->second, n, text(n) + " (a module reached as an attribute)");
    return true;
  });
  // getattr(module, <not a constant>) is dynamic code; setattr/delattr on modules is patching.
  walk(syntax_.root(), [&](TSNode n) {
    if (type(n) != "call") return true;
    std::string fn = text(field(n, "function"));
    if (fn != "getattr" && fn != "setattr" && fn != "delattr") return true;
    auto args = named_children(field(n, "arguments"));
    if (args.empty()) return true;
    std::string target = resolve(args[0]);
    bool on_module = !target.empty() && target[0] != '.' && aliases_.count(text(args[0]).substr(0, text(args[0]).find('.')));
    if (fn == "getattr" && on_module && (args.size() < 2 || !eval_string(args[1])))
      add("dynamic_code", n, "getattr on " + target + " with a computed name");
    if (fn != "getattr" && (on_module || target.rfind("torch", 0) == 0)) add("timer_harness_patch", n, fn + " on " + target);
    return true;
  });
  // type(name, bases, namespace) builds a class at run time (e.g. a hidden Tensor subclass).
  walk(syntax_.root(), [&](TSNode n) {
    if (type(n) != "call" || text(field(n, "function")) != "type" || functions_.count("type")) return true;
    if (named_children(field(n, "arguments")).size() == 3) add("dynamic_code", n, "type() with 3 arguments");
    return true;
  });
  // paths of shared memory or /proc in Python strings
  walk(syntax_.root(), [&](TSNode n) {
    if (type(n) != "string") return true;
    // A string that is a statement of its own (a docstring, a note) is never used as a path
    // (red team rt33: an honest ReLU rejected for naming /tmp/torch_extensions in its docstring).
    if (TSNode p = ts_node_parent(n); valid(p) && type(p) == "expression_statement" && ts_node_named_child_count(p) == 1)
      return false;
    std::string v = string_value(n);
    for (std::string_view p : {"/dev/shm", "/proc/", "/sys/", "/tmp/"})
      if (v.find(p) != std::string::npos && v.find("__global__") == std::string::npos) {
        add("file_network_env", n, "path " + std::string(p));
        break;
      }
    return false;
  });
}

void Analysis::match_patching() {
  auto check_target = [&](TSNode target, TSNode stmt) {
    std::vector<TSNode> targets;
    if (type(target) == "pattern_list" || type(target) == "tuple_pattern") targets = named_children(target);
    else targets = {target};
    for (TSNode tg : targets) {
      TSNode base = tg;
      while (valid(base) && type(base) == "subscript") base = field(base, "value");
      if (!valid(base) || (type(base) != "attribute" && !(type(base) == "identifier" && !ts_node_eq(base, tg))))
        continue;
      std::string raw = text(base);
      std::string root = raw.substr(0, raw.find('.'));
      if (!aliases_.count(root) && root != "__builtins__") continue;
      std::string name = resolve(base);
      if (name.rfind("os.environ", 0) == 0) continue;  // env access: file_network_env
      if (name.rfind("torch.backends.", 0) == 0) {
        bool tf32 = name.find("allow_tf32") != std::string::npos || name.find("reduced_precision") != std::string::npos ||
                    name.find("fp32_precision") != std::string::npos;
        if (tf32) {
          if (ctx_.task_dtype == "float32") {
            TSNode right = field(stmt, "right");
            if (!valid(right) || text(right) != "False") add("precision_downgrade", stmt, name);
          }
        } else {
          add("global_flag_change", stmt, name);
        }
        continue;
      }
      add("timer_harness_patch", stmt, "assigns " + name);
    }
  };
  walk(syntax_.root(), [&](TSNode n) {
    std::string_view t = type(n);
    if (t == "assignment" || t == "augmented_assignment") {
      TSNode left = field(n, "left");
      if (valid(left)) check_target(left, n);
    } else if (t == "delete_statement") {
      for (TSNode c : named_children(n)) check_target(c, n);
    }
    return true;
  });
}

void Analysis::match_tensor_subclass() {
  for (const auto& [name, info] : classes_) {
    for (size_t i = 0; i < info.bases.size(); ++i) {
      const std::string& b = info.bases[i];
      if (b == "torch.Tensor" || b == "torch._C._TensorBase" || b == "torch._C.TensorBase" ||
          b == "torch.nn.parameter.Parameter" || b == "torch.nn.Parameter" || b == "torch.utils._python_dispatch.TorchDispatchMode" ||
          b == "torch.overrides.TorchFunctionMode" || (b == "Tensor" && !aliases_.count("Tensor")))
        add("tensor_subclass", info.base_nodes[i], "class " + name + "(" + text(info.base_nodes[i]) + ")");
    }
  }
  for (const auto& [key, fn] : functions_) {
    std::string name = text(field(fn.node, "name"));
    if (name == "__torch_function__" || name == "__torch_dispatch__") add("tensor_subclass", fn.node, name);
  }
}

/// True when a method call on `obj` cannot be a Tensor method (modules, literals, handles).
bool Analysis::receiver_harmless(TSNode obj) const {
  if (!valid(obj)) return true;
  std::string o = text(obj);
  std::string root = o.substr(0, o.find('.'));
  if (type(obj) == "string" || type(obj) == "integer" || type(obj) == "float") return true;
  if (kHarmlessReceivers.count(root)) return true;
  if (aliases_.count(root)) {
    std::string r = resolve_name(o);
    return r.rfind("torch", 0) != 0;  // other modules (math.sqrt) are not tensors
  }
  if (ext_handles_.count(o) || ext_handles_.count(root)) return true;
  if (type(obj) == "call") {
    std::string f = text(field(obj, "function"));
    if (ext_factories_.count(f) || ext_factories_.count(f.rfind("self.", 0) == 0 ? f.substr(5) : f)) return true;
  }
  if (classes_.count(o)) return true;
  return false;
}

/// A torch compute callable by its resolved name: torch.* compute ops, everything in
/// torch.nn.functional/linalg/fft/special except F.pad, torch.Tensor.<op or operator dunder>,
/// operator.matmul. `gemm`: a library GEMM/convolution (hybrid's allowance).
bool Analysis::torch_compute_name(const std::string& name, bool* gemm) const {
  *gemm = false;
  if (name == "operator.matmul" || name == "operator.imatmul" || name == "operator.__matmul__" ||
      name == "operator.__imatmul__") {
    *gemm = true;
    return true;
  }
  if (name.rfind("torch.", 0) != 0 || name.rfind("torch.ops.", 0) == 0 || name.find(".cuda.") != std::string::npos)
    return false;
  const std::string attr = name.substr(name.rfind('.') + 1);
  bool ns = false;
  for (std::string_view p : {"torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special."})
    if (name.size() > p.size() && name.compare(0, p.size(), p) == 0) ns = true;
  if (name.rfind("torch.nn.functional.pad", 0) == 0) return false;
  bool tensor_dunder = name.rfind("torch.Tensor.", 0) == 0 && kComputeDunders.count(attr);
  if (!ns && !is_compute_op(attr) && !tensor_dunder) return false;
  *gemm = kGemmConvOps.count(attr) > 0 || attr == "__matmul__" || attr == "__rmatmul__" || attr == "__imatmul__";
  return true;
}

/// Torch compute reachable as a value, not only as a direct call: compute callables stored,
/// aliased, passed or defaulted; unbound Tensor methods; attribute access by string; torch.nn
/// compute modules and library layers called through aliases and containers.
void Analysis::match_compute_values() {
  auto parent_is = [&](TSNode n, std::string_view t) {
    TSNode p = ts_node_parent(n);
    return valid(p) && type(p) == t;
  };
  auto is_called = [&](TSNode n) {  // n is the function of a call
    TSNode p = ts_node_parent(n);
    return valid(p) && type(p) == "call" && ts_node_eq(field(p, "function"), n);
  };
  auto is_attr_name = [&](TSNode n) {  // n is the `.name` part of an attribute
    TSNode p = ts_node_parent(n);
    return valid(p) && type(p) == "attribute" && ts_node_eq(field(p, "attribute"), n);
  };
  auto nn_layer_of = [&](const std::string& name) -> std::string {  // "torch.nn.X" / modules path -> X
    if (name.rfind("torch.nn.", 0) != 0 || name.rfind("torch.nn.functional", 0) == 0 ||
        name.rfind("torch.nn.init", 0) == 0 || name.rfind("torch.nn.utils", 0) == 0 ||
        name.rfind("torch.nn.parameter", 0) == 0)
      return "";
    std::string last = name.substr(name.rfind('.') + 1);
    if (name.find('.', 9) != std::string::npos && name.rfind("torch.nn.modules.", 0) != 0) return "";
    if (last.empty() || !std::isupper(static_cast<unsigned char>(last[0]))) return "";
    return last;
  };
  auto param_free = [&](const std::string& layer) {
    return kNnParamFree.count(layer) > 0 || (layer.size() > 4 && layer.compare(layer.size() - 4, 4, "Loss") == 0);
  };

  // 1. Names anywhere in the module.
  walk(syntax_.root(), [&](TSNode n) {
    std::string_view t = type(n);
    if (t == "import_statement" || t == "import_from_statement" || t == "future_import_statement") return false;
    bool getattr_call = t == "call" && text(field(n, "function")) == "getattr" && !functions_.count("getattr");
    if (t == "attribute" || t == "identifier" || getattr_call) {
      if (is_attr_name(n)) return false;
      if (t == "identifier") {
        TSNode p = ts_node_parent(n);
        if (valid(p) && (type(p) == "function_definition" || type(p) == "class_definition" ||
                         type(p) == "parameters" || type(p) == "lambda_parameters" ||
                         (type(p) == "keyword_argument" && ts_node_eq(field(p, "name"), n)) ||
                         ((type(p) == "default_parameter" || type(p) == "typed_default_parameter" ||
                           type(p) == "typed_parameter") && ts_node_eq(field(p, "name"), n)) ||
                         (type(p) == "assignment" && ts_node_eq(field(p, "left"), n))))
          return true;
        std::string name = text(n);
        if (functions_.count(name) || (assigns_.count(name) && !aliases_.count(name))) return true;  // shadowed
        if (!aliases_.count(name)) return true;
      }
      std::string name = resolve(n);
      bool gemm = false;
      if (!name.empty() && name[0] != '.') {
        if (name.rfind("torch.Tensor.", 0) == 0 && torch_compute_name(name, &gemm)) {
          add("unbound_tensor_method", n, name);
        } else if ((name.rfind("numpy.", 0) == 0 || name.rfind("cupy.", 0) == 0) && name.rfind("cupy.cuda.", 0) != 0 &&
                   !is_called(n) && is_compute_op(name.substr(name.rfind('.') + 1)) &&
                   name.find('.', name.find('.') + 1) == std::string::npos) {
          // An array library's compute function as a value (a hook, functools.partial): it runs
          // where no call on the path is seen (red team rt29's kind; numpy is invisible to the op trace).
          add("torch_compute_as_value", n, name + " used as a value");
        } else if (torch_compute_name(name, &gemm) && (getattr_call || !is_called(n))) {
          if (gemm) gemm_sites_.push_back({n, name, "torch_compute_as_value"});
          else add("torch_compute_as_value", n, name + " used as a value");
        }
        if (name == "operator.methodcaller" || name == "operator.attrgetter")
          add("string_attribute_access", n, name);
        std::string layer = nn_layer_of(name);
        bool maximal = !(valid(ts_node_parent(n)) && type(ts_node_parent(n)) == "attribute");
        if (!layer.empty() && param_free(layer) && maximal) add("nn_compute_module", n, name);
      }
      if (t == "attribute") {
        std::string attr = text(field(n, "attribute"));
        TSNode obj = field(n, "object");
        if (attr == "__getattribute__" || attr == "__getattr__") add("string_attribute_access", n, "." + attr);
        // type(x).relu / x.__class__.relu: the Tensor class's unbound methods
        bool class_obj = (type(obj) == "call" && text(field(obj, "function")) == "type" &&
                          named_children(field(obj, "arguments")).size() == 1) ||
                         (type(obj) == "attribute" && text(field(obj, "attribute")) == "__class__");
        if (class_obj && !kClassNameAttrs.count(attr) && attr != "__class__")
          add("unbound_tensor_method", n, text(obj) + "." + attr);
      }
    }
    // T = type(x) / T = x.__class__ / f(T=x.__class__): a class object kept as a value
    if ((t == "call" && text(field(n, "function")) == "type" && named_children(field(n, "arguments")).size() == 1) ||
        (t == "attribute" && text(field(n, "attribute")) == "__class__")) {
      TSNode p = ts_node_parent(n);
      bool kept = valid(p) && ((type(p) == "assignment" && ts_node_eq(field(p, "right"), n)) ||
                               type(p) == "default_parameter" || type(p) == "typed_default_parameter" ||
                               type(p) == "list" || type(p) == "tuple" || type(p) == "pair" ||
                               (type(p) == "keyword_argument" && ts_node_eq(field(p, "value"), n)));
      if (kept) add("unbound_tensor_method", n, text(n) + " kept as a value");
    }
    if (getattr_call) {
      // getattr on a non-module: a computed name, or the name of a compute method
      auto args = named_children(field(n, "arguments"));
      if (!args.empty()) {
        std::string recv = text(args[0]);
        std::string root = recv.substr(0, recv.find_first_of(".(["));
        bool on_module = aliases_.count(root) > 0;
        bool on_handle = ext_handles_.count(recv) || ext_handles_.count(root) ||
                         (recv.rfind("self.", 0) == 0 && ext_handles_.count(recv)) ||
                         (type(args[0]) == "call" && receiver_harmless(args[0]));
        if (!on_module && !on_handle) {
          auto s = args.size() >= 2 ? eval_string(args[1]) : std::nullopt;
          if (!s) add("string_attribute_access", n, "getattr with a computed name");
          else if (is_compute_op(*s) || kComputeDunders.count(*s) || *s == "forward" || *s == "__call__")
            add("string_attribute_access", n, "getattr(..., \"" + *s + "\")");
        }
      }
    }
    return true;
  });

  // 2. Names holding a torch.nn layer instance (built from torch.nn.X(...), or copied from such a
  //    name, or a container of them), unless the value also builds one of the candidate's classes.
  for (int round = 0; round < 5; ++round) {
    size_t before = nn_holders_.size();
    for (const auto& [target, values] : assigns_) {
      if (nn_holders_.count(target)) continue;
      for (TSNode v : values) {
        bool layer = false, own = false;
        walk(v, [&](TSNode x) {
          std::string_view tx = type(x);
          if (tx == "lambda") return false;
          if (tx == "call") {
            std::string callee = resolve(field(x, "function"));
            std::string l = nn_layer_of(callee);
            if (!l.empty() && !kNnContainers.count(l) && l != "Sequential" && l != "ModuleList" && l != "ModuleDict")
              layer = true;
            if (classes_.count(text(field(x, "function")))) own = true;
            return true;
          }
          if ((tx == "identifier" || tx == "attribute") && nn_holders_.count(text(x))) {
            TSNode p = ts_node_parent(x);
            if (!(valid(p) && type(p) == "attribute" && ts_node_eq(field(p, "object"), x))) layer = true;
            return false;
          }
          return true;
        });
        if (layer && !own) nn_holders_.insert(target);
      }
    }
    if (nn_holders_.size() == before) break;
  }
  auto holder_of = [&](TSNode f) -> std::string {  // the holder a callee expression reaches
    while (valid(f) && (type(f) == "subscript" || type(f) == "parenthesized_expression"))
      f = type(f) == "subscript" ? field(f, "value") : named_children(f).front();
    if (valid(f) && type(f) == "attribute") {
      std::string a = text(field(f, "attribute"));
      if (a == "forward" || a == "__call__" || a == "_call_impl") f = field(f, "object");
    }
    if (!valid(f)) return "";
    if (type(f) == "call" && text(field(f, "function")) == "getattr") {  // getattr(self, "lin")
      auto args = named_children(field(f, "arguments"));
      if (args.size() >= 2)
        if (auto s = eval_string(args[1])) {
          std::string key = text(args[0]) + "." + *s;
          if (nn_holders_.count(key)) return key;
        }
      return "";
    }
    if (type(f) == "call") {  // nn.Linear(4, 4)(x)
      std::string l = nn_layer_of(resolve(field(f, "function")));
      if (!l.empty() && !kNnContainers.count(l)) return resolve(field(f, "function"));
      return "";
    }
    std::string s = text(f);
    return nn_holders_.count(s) ? s : "";
  };
  auto layer_name = [&](const std::string& holder) -> std::string {  // torch.nn.X the holder builds
    if (holder.rfind("torch.nn.", 0) == 0) return holder;
    auto it = assigns_.find(holder);
    std::string found;
    if (it != assigns_.end())
      for (TSNode v : it->second)
        walk(v, [&](TSNode x) {
          if (found.empty() && type(x) == "call") {
            std::string c = resolve(field(x, "function"));
            if (!nn_layer_of(c).empty() && !kNnContainers.count(nn_layer_of(c))) found = c;
          }
          return found.empty();
        });
    return found.empty() ? "torch.nn layer " + holder : found;
  };

  // 3. On the forward path: calls reaching a layer instance, bound Tensor compute methods kept as
  //    values, layers passed as values (map(self.act, ...)).
  for (TSNode fnode : reachable_nodes_) {
    walk(field(fnode, "body"), [&](TSNode n) {
      std::string_view t = type(n);
      if (t == "function_definition" || t == "class_definition") return false;
      if (t == "call") {
        std::string h = holder_of(field(n, "function"));
        if (!h.empty()) {
          std::string what = layer_name(h);
          std::string l = nn_layer_of(what);
          if (kGemmConvOps.count(l)) gemm_sites_.push_back({n, what, "nn_layer_in_forward"});
          else add("nn_layer_in_forward", n, what + " called through " + text(field(n, "function")));
        }
        return true;
      }
      if ((t == "identifier" || t == "attribute") && nn_holders_.count(text(n)) && !is_called(n)) {
        TSNode p = ts_node_parent(n);
        if (valid(p) && (type(p) == "argument_list" || type(p) == "list" || type(p) == "tuple" || type(p) == "set" ||
                         type(p) == "pair" || (type(p) == "keyword_argument" && ts_node_eq(field(p, "value"), n))))
          add("nn_layer_in_forward", n, text(n) + " passed as a value");
        return true;
      }
      if (t == "attribute" && !is_called(n) && !parent_is(n, "attribute")) {
        // y.clamp kept as a bound method (m = y.clamp; m(min=0))
        std::string attr = text(field(n, "attribute"));
        TSNode obj = field(n, "object");
        std::string o = text(obj);
        std::string name = resolve(n);
        bool torch_rooted = !name.empty() && name[0] != '.' && aliases_.count(o.substr(0, o.find('.')));
        if ((is_compute_op(attr) || kComputeDunders.count(attr)) && !torch_rooted && o != "self" && o != "cls" &&
            !receiver_harmless(obj) && !exported_.count(attr))
          add("torch_compute_as_value", n, "bound method ." + attr + " used as a value");
      }
      return true;
    });
  }
}

/// Torch compute, nn layers and the hybrid GEMM allowance on the forward path.
void Analysis::match_forward_compute() {
  match_compute_values();
  auto is_receiver_harmless = [&](TSNode obj) { return receiver_harmless(obj); };
  for (TSNode fnode : reachable_nodes_) {
    std::string cls;
    for (const auto& [key, fn] : defs_)
      if (ts_node_eq(fn.node, fnode)) cls = fn.cls;
    walk(field(fnode, "body"), [&](TSNode n) {
      std::string_view t = type(n);
      if (t == "function_definition" || t == "class_definition") return false;  // own reachability
      if (t == "binary_operator" || t == "augmented_assignment") {
        TSNode op = ts_node_child_by_field_name(n, "operator", 8);
        if (valid(op) && (text(op) == "@" || text(op) == "@=")) {
          gemm_sites_.push_back({n, "@"});
        }
        return true;
      }
      if (t != "call") return true;
      TSNode fn = field(n, "function");
      if (!valid(fn)) return true;
      if (type(fn) == "identifier" || type(fn) == "attribute") {
        std::string name = resolve(fn);
        std::string attr = name.substr(name.rfind('.') + 1);
        TSNode obj = type(fn) == "attribute" ? field(fn, "object") : TSNode{};
        bool torch_ns = name.rfind("torch.", 0) == 0;
        // numpy/cupy compute on the forward path, and a tensor's crossing into another library
        // (DLPack, from_numpy, .numpy()): under strict np.maximum on a DLPack view of the
        // input passed as the candidate's kernel (red team rt24; the op trace sees no ATen op).
        const bool array_lib = (name.rfind("numpy.", 0) == 0 || name.rfind("cupy.", 0) == 0) &&
                               name.rfind("cupy.cuda.", 0) != 0;  // streams, devices, memory
        if ((array_lib && !kNumpyNonCompute.count(attr)) || attr == "from_dlpack" || attr == "to_dlpack" ||
            attr == "__dlpack__" || attr == "from_numpy" || name.rfind("torch.utils.dlpack", 0) == 0 ||
            (attr == "numpy" && type(fn) == "attribute" && !array_lib)) {
          compute_sites_.push_back({n, "torch_compute_in_forward",
                                    name + " (array-library compute or a tensor handed to another library; "
                                           "use math for host arithmetic)"});
          return true;
        }
        // operator.matmul(a, b) is `a @ b` (red team rt33: it passed strict while `@` did not)
        if (name == "operator.matmul" || name == "operator.imatmul" || name == "operator.__matmul__" ||
            name == "operator.__imatmul__") {
          gemm_sites_.push_back({n, name});
          return true;
        }
        if (type(fn) == "identifier" && !torch_ns) return true;
        // torch.ops.<ns>.<op>: the candidate's own operator, whatever its name (rt25: an own op
        // named relu was rejected), or private_torch_internals (match_names)
        if (name.rfind("torch.ops.", 0) == 0) return true;
        if (torch_ns) {
          bool functional = name.rfind("torch.nn.functional.", 0) == 0 || name.rfind("torch.linalg.", 0) == 0 ||
                            name.rfind("torch.fft.", 0) == 0 || name.rfind("torch.special.", 0) == 0;
          if (name.rfind("torch.nn.functional.pad", 0) == 0) functional = false;
          if (functional || (is_compute_op(attr) && name.find(".cuda.") == std::string::npos)) {
            if (kGemmConvOps.count(attr)) gemm_sites_.push_back({n, name});
            else compute_sites_.push_back({n, "torch_compute_in_forward", name});
          }
          return true;
        }
        // self.layer(x) with layer = nn.<Layer>(...)
        if (valid(obj) && text(obj) == "self" && !functions_.count(cls + "." + attr)) {
          auto it = assigns_.find("self." + attr);
          if (it != assigns_.end())
            for (TSNode v : it->second)
              if (type(v) == "call") {
                std::string callee = resolve(field(v, "function"));
                if (callee.rfind("torch.nn.", 0) == 0) {
                  std::string layer = callee.substr(9);
                  if (!kNnContainers.count(layer) && layer.find('.') == std::string::npos) {
                    if (kGemmConvOps.count(layer)) gemm_sites_.push_back({n, callee});
                    else compute_sites_.push_back({n, "nn_layer_in_forward", callee});
                  }
                }
              }
          return true;
        }
        // tensor methods x.matmul(y), x.sum(), (a+b).relu()
        // (an op of the candidate's own TORCH_LIBRARY namespace may carry any name: rt25)
        if ((is_compute_op(attr) || kComputeDunders.count(attr)) && !is_receiver_harmless(obj) &&
            !exported_.count(attr) && !own_op_namespace(resolve(obj) + ".")) {
          std::string o = text(obj);
          bool self_method = o == "self" || o == "cls";
          if (!self_method) {
            if (kGemmConvOps.count(attr) || attr == "__matmul__" || attr == "__rmatmul__" || attr == "__imatmul__")
              gemm_sites_.push_back({n, "." + attr});
            else compute_sites_.push_back({n, "torch_compute_in_forward", "." + attr + "()"});
          }
        }
      }
      return true;
    });
  }
  // C++ library compute (ATen, cuBLAS, cuDNN) counts as forward-path compute too.
  for (const CxxUnit& u : cxx_) {
    const auto& tk = u.tokens;
    std::set<std::string> seen;
    for (size_t i = 0; i < tk.size(); ++i) {
      if (tk[i].kind != 'i') continue;
      const std::string& w = tk[i].text;
      bool gemm = false, compute = false;
      std::string what;
      static const Names kAtenKernelNamespaces = {"cpu", "cuda", "native", "_ops", "meta", "compositeexplicitautograd",
                                                  "compositeimplicitautograd", "compositeexplicitautogradnonfunctional"};
      if (w == "using" && i + 3 < tk.size() && tk[i + 1].text == "namespace" &&
          (tk[i + 2].text == "at" || tk[i + 2].text == "torch") && tk[i + 3].text == ";") {
        // Unqualified ATen names (`clamp_min(x, 0)`) would escape the at::/torch:: match below.
        what = "using namespace " + tk[i + 2].text;
        compute = true;
      } else if (w == "at" && i + 4 < tk.size() && tk[i + 1].text == "::" && tk[i + 3].text == "::" &&
                 kAtenKernelNamespaces.count(tk[i + 2].text) && is_compute_op(tk[i + 4].text)) {
        // at::cpu::clamp_min / at::native::mm / at::_ops::relu::call: the kernels behind the
        // dispatcher (the run-time op trace does not see them; red team, 2026-11-30).
        what = "at::" + tk[i + 2].text + "::" + tk[i + 4].text;
        gemm = kGemmConvOps.count(tk[i + 4].text) > 0;
        compute = !gemm;
      } else if ((w == "torch" || w == "at") && i + 3 < tk.size() && tk[i + 1].text == "::" && tk[i + 3].text == "(" &&
          is_compute_op(tk[i + 2].text)) {
        what = w + "::" + tk[i + 2].text;
        gemm = kGemmConvOps.count(tk[i + 2].text) > 0;
        compute = !gemm;
      } else if ((w == "nn" || w == "optim") && i + 1 < tk.size() &&
                 (tk[i + 1].text == "::" || (i > 0 && tk[i - 1].text == "namespace") ||
                  (i > 1 && tk[i - 1].text == "::" && tk[i - 2].text == "torch"))) {
        // Torch's C++ frontend (torch::nn::Linear, nn::functional::conv2d after `using namespace
        // torch`, a namespace alias of torch::nn): its modules and optimisers run ATen operators
        // inside libtorch (red team rt34: torch::nn::LinearImpl::forward, a matmul under strict).
        std::string next = i + 2 < tk.size() && tk[i + 1].text == "::" ? tk[i + 2].text : std::string();
        if (next == "functional" && i + 4 < tk.size() && tk[i + 3].text == "::") next = tk[i + 4].text;
        what = "torch::" + w + (next.empty() ? std::string() : "::" + next);
        std::string lower = next;
        for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        gemm = lower.rfind("linear", 0) == 0 || lower.rfind("conv", 0) == 0 || lower.rfind("bilinear", 0) == 0;
        compute = !gemm;
      } else if (w.rfind("cublas", 0) == 0 && w != "cublasHandle_t" && w != "cublasCreate" && w != "cublasDestroy" &&
                 w.find("SetStream") == std::string::npos && w.find("Status") == std::string::npos) {
        what = w;
        gemm = w.find("emm") != std::string::npos || w.find("atmul") != std::string::npos;
        compute = !gemm && (w.find("gemv") != std::string::npos || w.find("dot") != std::string::npos);
      } else if ((w == "at" && i + 2 < tk.size() && tk[i + 1].text == "::" && tk[i + 2].text == "native") ||
                 w == "DispatchStub" ||
                 w == "cpublas" || w.find("CONCATENATE") != std::string::npos || w == "BOOST_PP_CAT") {
        // ATen's kernels without the dispatcher: at::native:: (any name, a namespace alias of it
        // too), the CPU dispatch stubs (at::native::clamp_min_scalar_stub, cpublas::gemm_stub:
        // they never enter the dispatcher, so the op trace saw nothing); and torch's
        // token-pasting macros, which this scan does not expand (at::C10_CONCATENATE(redis,
        // patch)::clamp_min): red team rt25.
        what = w == "at" ? "at::native::" : w;
        compute = true;
      } else if (w == "redispatch" || w == "redispatchBoxed" || w == "callBoxed" || w == "findSchema" ||
                 w == "findSchemaOrThrow" || w == "findOp" || w == "OperatorHandle" || w == "TypedOperatorHandle" ||
                 (w == "Dispatcher" && i + 2 < tk.size() && tk[i + 1].text == "::")) {
        // Any ATen operator by the dispatcher's own entry points: at::redispatch::clamp_min skips
        // the profiler's hook (RecordFunction sits in Dispatcher::call), so the run-time op trace
        // never saw it (red team rt24: ReLU, softmax, LayerNorm passed strict that way).
        what = w;
        compute = true;
      } else if (is_aoti_compute(w)) {
        what = w;
        compute = true;
      } else if (is_cpu_library_compute(w)) {
        // CPU BLAS/LAPACK/oneDNN/MKL entry points (sgemm_ is exported by libtorch_cpu.so and can
        // be declared extern "C" and called directly: red team a11s, 2026-12-01).
        what = w;
        gemm = w.find("mm") != std::string::npos || w.find("conv") != std::string::npos;
        compute = !gemm;
      } else if (w.rfind("cudnn", 0) == 0 && w.find("Convolution") != std::string::npos && w.find("Forward") != std::string::npos) {
        what = w;
        gemm = true;
      } else if (w.rfind("cudnn", 0) == 0 && (w.find("Softmax") != std::string::npos || w.find("Pooling") != std::string::npos ||
                                              w.find("Activation") != std::string::npos || w.find("Normalization") != std::string::npos) &&
                 w.find("Forward") != std::string::npos) {
        what = w;
        compute = true;
      } else if (i > 0 && tk[i - 1].text == "." && i + 1 < tk.size() && tk[i + 1].text == "(" &&
                 (w == "matmul" || w == "mm" || w == "bmm" || w == "addmm" || w == "baddbmm" || w == "softmax" ||
                  w == "log_softmax" || w == "relu" || w == "sigmoid" || w == "sum" || w == "mean" || w == "logsumexp" ||
                  w == "conv2d" || w == "amax")) {
        what = "." + w + "()";
        gemm = kGemmConvOps.count(w) > 0;
        compute = !gemm;
      }
      if (what.empty() || !seen.insert(what).second) continue;
      if (gemm) gemm_sites_.push_back({u.at, "C++ " + what});
      if (compute) add_cxx("cpp_library_compute", u, what, what);
    }
  }
  // Hybrid: the first GEMM/conv (in source order) is allowed; strict and the rest reject.
  std::stable_sort(gemm_sites_.begin(), gemm_sites_.end(), [](const auto& a, const auto& b) {
    return ts_node_start_byte(a.node) < ts_node_start_byte(b.node);
  });
  // The allowance is one library op: every call site of that op (branches, loops) is covered.
  std::string allowed;
  for (const auto& [node, what, site_rule] : gemm_sites_) {
    std::string rule = !site_rule.empty() ? site_rule
                       : what.rfind("C++ ", 0) == 0 ? "cpp_library_compute"
                       : what.rfind("torch.nn.", 0) == 0 && what.rfind("torch.nn.functional.", 0) != 0
                           ? "nn_layer_in_forward"
                           : "torch_compute_in_forward";
    if (ctx_.profile == Profile::hybrid && (allowed.empty() || allowed == what)) {
      allowed = what;
      add("hybrid_library_call", node, what);
      continue;
    }
    if (rule == "cpp_library_compute") add(rule, node, what.substr(4), what.substr(4));
    else add(rule, node, what);
  }
  for (const auto& [node, rule, what] : compute_sites_) add(rule, node, what);
}

/// forward reaches no custom kernel; kernels defined and never used on the forward path.
void Analysis::match_custom_calls() {
  if (!has_model_new_ || !classes_.count("ModelNew")) return;
  Names used;          // names referenced on the forward path
  bool custom = false;
  for (TSNode fnode : reachable_nodes_) {
    walk(field(fnode, "body"), [&](TSNode n) {
      std::string_view t = type(n);
      if (t == "identifier") used.insert(text(n));
      if (t == "attribute") used.insert(text(field(n, "attribute")));
      if (t == "string") {
        auto s = string_value(n);
        if (exported_.count(s)) used.insert(s);  // getattr(ext, "name")
      }
      if (t != "call") return true;
      TSNode fn = field(n, "function");
      if (!valid(fn)) return true;
      std::string ft = text(fn);
      std::string root = ft.substr(0, ft.rfind('.'));
      std::string attr = type(fn) == "attribute" ? text(field(fn, "attribute")) : ft;
      if (type(fn) == "subscript") {  // kernel[grid](...)
        std::string k = text(field(fn, "value"));
        if (triton_kernels_.count(k) || ext_handles_.count(k)) custom = true;
      } else if (ext_handles_.count(ft) || triton_kernels_.count(ft) || exported_.count(attr) ||
                 (ft.find('.') != std::string::npos && ext_handles_.count(root))) {
        custom = true;
      } else if (type(fn) == "attribute") {
        TSNode obj = field(fn, "object");
        if (type(obj) == "call") {
          std::string f2 = text(field(obj, "function"));
          if (ext_factories_.count(f2) || ext_factories_.count(f2.rfind("self.", 0) == 0 ? f2.substr(5) : f2)) custom = true;
        }
        std::string base = resolve(obj);
        if (own_op_namespace(base)) custom = true;
      }
      return true;
    });
  }
  if (!custom) {
    TSNode at = classes_.at("ModelNew").node;
    if (functions_.count("ModelNew.forward")) at = functions_.at("ModelNew.forward").node;
    add("forward_without_custom_call", at);
  }
  // Decoys: exported functions and Triton kernels never referenced on the forward path.
  for (const auto& k : exported_)
    if (!used.count(k) && !ext_calls_.empty()) add("decoy_kernel", ext_calls_.front(), "exported " + k);
  for (const auto& k : triton_kernels_)
    if (!used.count(k) && functions_.count(k)) add("decoy_kernel", functions_.at(k).node, "@triton.jit " + k);
  // __global__ kernels that nothing launches or exports (counted in the raw tokens).
  for (const CxxUnit& u : cxx_) {
    std::map<std::string, int> count;
    for (size_t i = 0; i < u.raw_count; ++i)
      if (u.tokens[i].kind == 'i') ++count[u.tokens[i].text];
    for (size_t i = 0; i + 1 < u.raw_count; ++i) {
      if (u.tokens[i].text != "__global__") continue;
      // the kernel's name: the first identifier followed by "(" (skipping __launch_bounds__(...))
      std::string name;
      for (size_t j = i + 1; j + 1 < u.raw_count && u.tokens[j].text != ";" && u.tokens[j].text != "{"; ++j) {
        if (u.tokens[j].text == "__launch_bounds__") {
          int depth = 0;
          for (++j; j < u.raw_count; ++j) {
            if (u.tokens[j].text == "(") ++depth;
            if (u.tokens[j].text == ")" && --depth == 0) break;
          }
          continue;
        }
        if (u.tokens[j].kind == 'i' && u.tokens[j + 1].text == "(") { name = u.tokens[j].text; break; }
      }
      if (name.empty()) continue;
      bool used_elsewhere = false;
      for (const CxxUnit& v : cxx_)
        if (&v != &u)
          for (size_t k = 0; k < v.raw_count; ++k)
            if (v.tokens[k].text == name) used_elsewhere = true;
      if (count[name] <= 1 && !used_elsewhere && !exported_.count(name) && !used.count(name))
        add_cxx("decoy_kernel", u, "__global__ " + name + " is never launched", "__global__ " + name, name);
    }
  }
}

void Analysis::match_precision() {
  if (ctx_.task_dtype != "float32") return;
  static const Names kLowTypes = {"torch.float16", "torch.half", "torch.bfloat16", "torch.HalfTensor",
                                  "torch.BFloat16Tensor", "torch.cuda.HalfTensor", "torch.cuda.BFloat16Tensor",
                                  "triton.language.float16", "triton.language.bfloat16", "tl.float16",
                                  "tl.bfloat16", "torch.float8_e4m3fn", "torch.float8_e5m2",
                                  "triton.language.float8e4nv", "numpy.float16", "cupy.float16"};
  walk(syntax_.root(), [&](TSNode n) {
    std::string_view t = type(n);
    if (t == "call") {
      TSNode fn = field(n, "function");
      std::string name = valid(fn) ? resolve(fn) : "";
      std::string attr = valid(fn) && type(fn) == "attribute" ? text(field(fn, "attribute")) : "";
      if (attr == "half" || attr == "bfloat16") add("precision_downgrade", n, "." + attr + "()");
      if (name == "torch.set_float32_matmul_precision") {
        auto args = named_children(field(n, "arguments"));
        auto v = args.empty() ? std::nullopt : eval_string(args[0]);
        if (!v || *v != "highest") add("precision_downgrade", n, name);
      }
      if (name.rfind("torch.autocast", 0) == 0 || name.rfind("torch.cuda.amp", 0) == 0 || name.rfind("torch.amp", 0) == 0 ||
          name.rfind("torch.cpu.amp", 0) == 0) {
        bool disabled = false;  // autocast(enabled=False) turns mixed precision off
        for (TSNode a : named_children(field(n, "arguments")))
          if (type(a) == "keyword_argument" && text(field(a, "name")) == "enabled" && text(field(a, "value")) == "False")
            disabled = true;
        if (!disabled) add("precision_downgrade", n, name);
      }
      if (attr == "dot" && (name.rfind("triton.language.", 0) == 0 || name.rfind("tl.", 0) == 0)) {
        bool explicit_precision = false;
        for (TSNode a : named_children(field(n, "arguments")))
          if (type(a) == "keyword_argument") {
            std::string k = text(field(a, "name"));
            std::string v = text(field(a, "value"));
            if (k == "allow_tf32" || k == "input_precision") explicit_precision = true;
            if ((k == "allow_tf32" && v != "False") ||
                (k == "input_precision" && v.find("ieee") == std::string::npos))
              add("precision_downgrade", n, "tl.dot " + k + "=" + v);
          }
        if (!explicit_precision) add("triton_dot_default_tf32", n, "tl.dot");
      }
      return true;
    }
    if (t == "attribute" || t == "identifier") {
      TSNode p = ts_node_parent(n);
      if (valid(p) && type(p) == "attribute" && ts_node_eq(field(p, "object"), n)) return true;
      std::string name = resolve(n);
      if (!kLowTypes.count(name)) return true;
      // a dtype given as an argument (to(), dtype=, empty(...)) converts; comparisons only test
      for (TSNode a = p; valid(a); a = ts_node_parent(a)) {
        std::string_view at = type(a);
        if (at == "comparison_operator" || at == "if_statement" || at == "conditional_expression" ||
            at == "boolean_operator")
          return false;
        if (at == "argument_list" || at == "keyword_argument" || at == "assignment" || at == "return_statement") {
          add("precision_downgrade", n, name);
          return false;
        }
        if (at == "function_definition" || at == "block") break;
      }
      return false;
    }
    return true;
  });
}

void Analysis::match_cxx() {
  for (const CxxUnit& u : cxx_) {
    const auto& tk = u.tokens;
    std::set<std::pair<std::string, std::string>> seen;
    auto hit = [&](std::string_view rule, const std::string& what) {
      if (seen.insert({std::string(rule), what}).second) add_cxx(rule, u, "C++ " + what, what);
    };
    bool has_wmma = false, has_half = false;
    bool using_std = false;
    for (size_t i = 0; i + 3 < tk.size(); ++i)
      if (tk[i].text == "using" && tk[i + 1].text == "namespace" && tk[i + 2].text == "std") using_std = true;
    for (size_t i = 0; i < tk.size(); ++i) {
      const CxxToken& tok = tk[i];
      if (tok.kind == 's') {
        const std::string& s = tok.text;
        for (std::string_view p : {"/dev/shm", "/proc/", "/tmp/", "/sys/"})
          if (s.find(p) != std::string::npos) hit("file_network_env", "\"" + std::string(p) + "\"");
        bool asm_mma = s.find("mma") != std::string::npos || s.find("cvt") != std::string::npos ||
                       s.find("wgmma") != std::string::npos;
        if (ctx_.task_dtype == "float32" && asm_mma &&
            (s.find(".f16") != std::string::npos || s.find(".bf16") != std::string::npos ||
             s.find(".tf32") != std::string::npos))
          hit("precision_downgrade", "asm \"" + s.substr(0, 40) + "\"");
        // A symbol's name spelled as a string (adjacent literals joined): a mangled C++ name
        // (_ZN2at...) or the Python C-API, for an asm label, a weakref or a symbol lookup (red
        // team rt26: "_ZN2at" "3cpu8_softmax..." reached ATen's kernels past the dispatcher).
        for (std::string_view dunder : {"__globals__", "__builtins__", "__code__", "__dict__", "__closure__", "f_globals"})
          if (s.find(dunder) != std::string::npos) hit("dynamic_code", "\"" + std::string(dunder) + "\" in C++ (Python internals)");
        if (s.rfind("_Z", 0) == 0 || s.find("_ZN") != std::string::npos || s.rfind("PyRun_", 0) == 0 ||
            s.rfind("PyEval_", 0) == 0 || s.rfind("PyImport_", 0) == 0 || s.rfind("PySys_", 0) == 0 ||
            s.rfind("PyObject_", 0) == 0 || s.rfind("PyFrame_", 0) == 0)
          hit("dynamic_code", "a symbol name in a string (\"" + s.substr(0, 40) + "\")");
        continue;
      }
      if (tok.kind != 'i') continue;
      const std::string& w = tok.text;
      bool call_next = i + 1 < tk.size() && tk[i + 1].text == "(";
      bool member = i > 0 && (tk[i - 1].text == "." || tk[i - 1].text == "->");
      for (const auto& [rule, names] : kCxxNameRules) {
        if (!names.count(w)) continue;
        if (kCxxCallOnly.count(w) && (!call_next || member)) continue;
        // a qualified name is another namespace's function (std::bind, cg::sync), except the std
        // (and global ::) spellings of the POSIX calls
        bool qualified = i > 0 && tk[i - 1].text == "::";
        static const Names kKeywords = {"return", "else", "case", "do", "throw", "new", "delete", "sizeof",
                                        "co_return", "co_await", "typedef", "using", "const", "auto"};
        std::string ns = qualified && i > 1 && tk[i - 2].kind == 'i' && !kKeywords.count(tk[i - 2].text)
                             ? tk[i - 2].text
                             : "";
        // (the RecordFunction switches and the allocator setters are at::/c10:: names; any
        // namespace counts for them)
        if (qualified && !ns.empty() && !(ns == "std" && w != "bind") && rule != "introspection" &&
            rule != "private_torch_internals")
          continue;
        if (rule == "precision_downgrade" && ctx_.task_dtype != "float32") continue;
        if (rule == "threads_processes_async" && w == "jthread" && !(i > 1 && tk[i - 2].text == "std")) continue;
        hit(rule, w);
      }
      // (std::thread::hardware_concurrency() only asks the core count: red team rt27's false rejection)
      if ((w == "thread" || w == "async") && i >= 2 && tk[i - 1].text == "::" && tk[i - 2].text == "std" &&
          !(i + 2 < tk.size() && tk[i + 1].text == "::" && tk[i + 2].text == "hardware_concurrency"))
        hit("threads_processes_async", "std::" + w);
      // ... and unqualified after `using namespace std;` (red team: `thread t(work);`)
      if ((w == "thread" || w == "async" || w == "jthread") && using_std && !(i > 0 && (tk[i - 1].text == "::" ||
          tk[i - 1].text == "." || tk[i - 1].text == "->")) && i + 1 < tk.size() &&
          (tk[i + 1].kind == 'i' || tk[i + 1].text == "(" || tk[i + 1].text == "{"))
        hit("threads_processes_async", w + " (using namespace std)");
      // pybind11 attribute access from C++ reaches any Python object by name (torch.sys.modules,
      // frames, the harness's timer): red team, 2026-11-30.
      if (w == "attr" && i > 0 && (tk[i - 1].text == "." || tk[i - 1].text == "->") && i + 1 < tk.size() &&
          tk[i + 1].text == "(")
        hit("dynamic_code", ".attr() (Python attribute access from C++)");
      if (w == "system" && i >= 2 && tk[i - 1].text == "::" && tk[i - 2].text == "std") hit("subprocess_system", "std::system");
      // Torch's own wrappers of the loader, its thread pools and the environment (red team rt27:
      // at::DynamicLibrary reached at::cpu::clamp_min and PyRun_SimpleString by names built at run
      // time; at::launch ran the work on the inter-op pool; c10::utils::get_env read the
      // environment). Python attributes through pybind11's free functions (py::getattr(f,
      // "__globals__")["__builtins__"]["exec"]) as through .attr().
      if (w == "DynamicLibrary") hit("dynamic_code", "at::DynamicLibrary (torch's dlopen/dlsym)");
      if ((w == "launch" || w == "intraop_launch" || w == "launch_no_thread_state") && i >= 2 && tk[i - 1].text == "::" &&
          (tk[i - 2].text == "at" || tk[i - 2].text == "internal"))
        hit("threads_processes_async", "at::" + w + " (torch's thread pool)");
      if ((w == "ThreadPool" || w == "TaskThreadPool" || w == "TaskThreadPoolBase" || w == "get_pool_by_thread_id") &&
          i >= 2 && tk[i - 1].text == "::" && tk[i - 2].text == "c10")
        hit("threads_processes_async", "c10::" + w);
      if ((w == "get_env" || w == "set_env" || w == "has_env") && i >= 2 && tk[i - 1].text == "::" && tk[i - 2].text == "utils")
        hit("file_network_env", "c10::utils::" + w);
      // (any use, not only a call: rt28 took pybind11::getattr's address and called it later)
      if (w == "getattr" || w == "setattr" || w == "hasattr" || w == "delattr")
        hit("dynamic_code", w + " (Python attribute access from C++)");
      // Python objects called, operated on or read from C++ (red team rt31: torch's operators
      // through PyNumber_Multiply / PyNumber_MatrixMultiply, a method fetched by
      // PyObject_GetAttrString and called, pybind11's attribute accessor called as `Acc(o, "relu")()`,
      // on an OpenMP team thread the op trace does not watch; numpy over PyMemoryView_FromMemory).
      // Every honest build imports some of these through pybind11's own headers, so the link
      // check cannot tell; the names written in the candidate's C++ can.
      static const char* const kPyCallPrefixes[] = {
          "PyNumber_", "PyObject_Call", "PyObject_GetAttr", "PyObject_SetAttr", "PyObject_GenericGetAttr",
          "PyObject_RichCompare", "PyObject_Vectorcall", "PyVectorcall_", "PyMemoryView_", "PyObject_GetItem",
          "PyObject_GetBuffer", "PyObject_GetIter", "PyEval_Call", "PySequence_", "PyMapping_", "_PyObject_Call",
          "_PyObject_Vectorcall", "PyCFunction_Call", "PyIter_"};
      for (const char* prefix : kPyCallPrefixes)
        if (w.rfind(prefix, 0) == 0) {
          hit("dynamic_code", w + " (a Python object called or operated on from C++)");
          break;
        }
      // (`accessor` only as pybind11's `detail::accessor`: at::Tensor's `x.accessor<float, 2>()` is
      // the honest CPU idiom)
      if ((w == "accessor" && i >= 2 && tk[i - 1].text == "::" && tk[i - 2].text == "detail") ||
          w == "accessor_policies" || w == "str_attr" || w == "obj_attr" || w == "memoryview" ||
          (w == "attr" && i > 0 && (tk[i - 1].text == "." || tk[i - 1].text == "->") && i + 1 < tk.size() &&
           tk[i + 1].text == "("))
        hit("dynamic_code", w + " (pybind11's Python attribute access or buffer views from C++)");
      // The operator trace's thread-local state, restored from a copy made outside the trace
      // (red team rt28: an at::ThreadLocalStateGuard hid clamp_min from the CPU op trace).
      if (w == "ThreadLocalState" || w == "ThreadLocalStateGuard" || w == "RecordFunctionTLS" ||
          // c10's thread-local debug info holds the profiler's state (red team rt34 told the
          // traced calls apart by ThreadLocalDebugInfo::get(DebugInfoKind::PROFILER_STATE))
          w == "ThreadLocalDebugInfo" || w == "DebugInfoGuard" || w == "DebugInfoKind" || w == "PROFILER_STATE" ||
          w == "set_record_function_tls_" || w == "get_record_function_tls_" || w == "setThreadLocalState")
        hit("introspection", w + " (the operator trace's thread-local state)");
      if (w.rfind("pthreadpool_", 0) == 0) hit("threads_processes_async", w + " (torch's thread pool)");
      // An asm label binds a declaration to another symbol (`void f(...) __asm__("sgemm_");`: a
      // BLAS GEMM, ATen's kernels past the dispatcher, PyRun_SimpleString, each under an
      // innocent name; red team rt26, strict passed), as do `#pragma redefine_extname` and the
      // weakref/alias attributes. A label follows a declarator (`)`, `]` or a name) and holds a
      // bare symbol name; an asm statement (inline PTX) starts a statement and holds code.
      static const Names kAsm = {"asm", "__asm__", "__asm"};
      static const Names kStatementStart = {"else", "do", "return", "case", "default", "volatile", "goto", "inline"};
      if (kAsm.count(w) && i > 0 && i + 3 < tk.size() &&
          (tk[i - 1].text == ")" || tk[i - 1].text == "]" || (tk[i - 1].kind == 'i' && !kStatementStart.count(tk[i - 1].text))) &&
          tk[i + 1].text == "(" && tk[i + 2].kind == 's' && tk[i + 3].text == ")" && !tk[i + 2].text.empty() &&
          std::all_of(tk[i + 2].text.begin(), tk[i + 2].text.end(), [](char ch) {
            return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.' || ch == '$' || ch == '@';
          }))
        hit("dynamic_code", "an asm label (a declaration bound to the symbol \"" + tk[i + 2].text.substr(0, 40) + "\")");
      if (w == "redefine_extname" && i > 0 && tk[i - 1].text == "pragma") hit("dynamic_code", "#pragma redefine_extname");
      if ((w == "weakref" || w == "alias" || w == "__weakref__" || w == "__alias__") && i > 1 && i + 2 < tk.size() &&
          tk[i + 1].text == "(" && tk[i + 2].kind == 's')
        hit("dynamic_code", "__attribute__((" + w + "(\"...\"))) (a name bound to another symbol)");
      if ((w.rfind("PyRun_", 0) == 0 || w.rfind("PyEval_", 0) == 0 || w.rfind("PyImport_", 0) == 0 ||
           w.rfind("PyFrame_", 0) == 0 || w.rfind("PyThreadState_", 0) == 0 || w.rfind("PyObject_SetAttr", 0) == 0 ||
           w.rfind("PyDict_SetItem", 0) == 0 || w.rfind("PySys_", 0) == 0 || w.rfind("PyModule_", 0) == 0 ||
           w.rfind("PyGILState_", 0) == 0))
        hit("dynamic_code", w);
      // CPython's interpreter state, frames and code objects: from a thread state a candidate
      // walked the frame chain to the harness's locals (red team rt33: the secret case seeds,
      // the wall request, by CPython 3.11's frame layout declared under its own field names).
      if (kCPythonInternals.count(w)) hit("dynamic_code", w + " (CPython interpreter internals)");
      // kgym's op watch (kgym_opwatch_set ...): the harness's switch, not the candidate's
      if (w.rfind("kgym_opwatch", 0) == 0) hit("timer_harness_patch", w + " (kgym's op watch)");
      // after any `::`: an alias of pybind11 or module_ (rt28: `using Mod = q::module_; Mod::import`)
      if ((w == "exec" || w == "eval" || w == "import" || w == "eval_file") && i >= 2 && tk[i - 1].text == "::")
        hit("dynamic_code", tk[i - 2].text + "::" + w);
      if (w == "wmma" || w == "mma" || w == "wgmma" || w == "mma_sync") has_wmma = true;
      if (kHalfTypes.count(w) || w == "precision") has_half = true;
      if (ctx_.task_dtype == "float32") {
        // static_cast<half>(x), (__half)x, reinterpret as half2
        if (w == "static_cast" && i + 3 < tk.size() && tk[i + 1].text == "<" && kHalfTypes.count(tk[i + 2].text))
          hit("precision_downgrade", "static_cast<" + tk[i + 2].text + ">");
        if (kHalfTypes.count(w) && i > 0 && tk[i - 1].text == "(" && i + 2 < tk.size() && tk[i + 1].text == ")" &&
            (tk[i + 2].kind == 'i' || tk[i + 2].text == "("))
          hit("precision_downgrade", "(" + w + ") cast");
      }
    }
    if (ctx_.task_dtype == "float32" && has_wmma && has_half) hit("precision_downgrade", "wmma/mma on half/tf32 fragments");
  }
}

/// KernelBench's backend check: a CUDA kernel (__global__, load_inline/cpp_extension, thread
/// indexing or kernel features) or a Triton kernel (@triton.jit, tl.load/store, program_id ...).
void Analysis::match_kernelbench() {
  if (ctx_.profile != Profile::kernelbench) return;
  bool global = false, thread_features = false;
  for (const CxxUnit& u : cxx_)
    for (size_t i = 0; i < u.tokens.size(); ++i) {
      const auto& w = u.tokens[i].text;
      if (w == "__global__") global = true;
      if (((w == "threadIdx" || w == "blockIdx" || w == "blockDim" || w == "gridDim") && i + 1 < u.tokens.size() &&
           u.tokens[i + 1].text == ".") ||
          w == "__syncthreads" || w == "__shared__" || w == "__device__" || w == "atomicAdd" || w == "atomicMax" ||
          w == "atomicMin")
        thread_features = true;
    }
  bool compile = false;
  for (const auto& [alias, full] : aliases_)
    if (full.find("cpp_extension") != std::string::npos || full.find("load_inline") != std::string::npos) compile = true;
  if (!ext_calls_.empty()) compile = true;
  bool cuda_ok = global && compile && thread_features;
  bool tl_mem = false, tl_kernel = false;
  walk(syntax_.root(), [&](TSNode n) {
    if (type(n) == "attribute") {
      std::string r = resolve(n);
      if (r == "triton.language.load" || r == "triton.language.store") tl_mem = true;
      if (r == "triton.language.program_id" || r == "triton.language.num_programs" || r == "triton.language.constexpr" ||
          r == "triton.language.arange" || r == "triton.language.cdiv")
        tl_kernel = true;
    }
    return true;
  });
  bool triton_ok = !triton_kernels_.empty() && tl_mem && tl_kernel;
  if (!cuda_ok && !triton_ok) {
    std::string why = !global ? "no __global__ kernel" : !compile ? "no load_inline/cpp_extension" : "no thread indexing";
    add_at("kb_backend_impl", 0, 0, why, "");
  }
  // torch computation ops and torch.nn compute layers anywhere in the code (warnings).
  walk(syntax_.root(), [&](TSNode n) {
    std::string_view t = type(n);
    if (t == "import_statement" || t == "import_from_statement") return false;
    if (t != "attribute") return true;
    TSNode p = ts_node_parent(n);
    if (valid(p) && type(p) == "attribute" && ts_node_eq(field(p, "object"), n)) return true;
    std::string r = resolve(n);
    if (r.rfind("torch.nn.functional.", 0) == 0 ||
        (r.rfind("torch.", 0) == 0 && std::count(r.begin(), r.end(), '.') == 1 && kKernelBenchTorchOps.count(r.substr(6))))
      add("kb_torch_compute_op", n, r);
    if (r.rfind("torch.nn.", 0) == 0 && r.rfind("torch.nn.functional", 0) != 0) {
      std::string first = r.substr(9, r.find('.', 9) == std::string::npos ? std::string::npos : r.find('.', 9) - 9);
      if (!kNnContainers.count(first) || first == "Buffer" || first == "Identity") add("kb_nn_compute_layer", n, r);
    }
    return true;
  });
}

/// Library layers run through containers (`for layer in self.layers: x = layer(x)`,
/// `self.blocks[i](x)`), and elementwise torch arithmetic on forward's tensor arguments.
void Analysis::match_module_containers_and_elementwise() {
  // self.X whose value builds library layers only (no class of the candidate in it, one level
  // of names and helper functions followed).
  auto library_container = [&](const std::string& attr) {
    auto it = assigns_.find("self." + attr);
    if (it == assigns_.end()) return false;
    bool has_layer = false, has_own_class = false;
    std::function<void(TSNode, int)> scan = [&](TSNode v, int depth) {
      walk(v, [&](TSNode x) {
        if (type(x) == "call") {
          std::string callee = resolve(field(x, "function"));
          std::string raw = text(field(x, "function"));
          if (callee.rfind("torch.nn.", 0) == 0 && callee.find("functional") == std::string::npos) {
            std::string layer = callee.substr(9);
            if (!kNnContainers.count(layer) && layer != "Sequential" && layer != "ModuleList" && layer != "ModuleDict")
              has_layer = true;
          }
          if (classes_.count(raw)) has_own_class = true;
          std::string fn = raw.rfind("self.", 0) == 0 ? raw.substr(5) : raw;
          for (const auto& [key, f] : functions_)
            if (depth < 2 && (key == fn || (key.size() > fn.size() + 1 &&
                                            key.compare(key.size() - fn.size() - 1, std::string::npos, "." + fn) == 0)))
              scan(field(f.node, "body"), depth + 1);
        }
        if (type(x) == "identifier" && depth < 2) {
          auto a = assigns_.find(text(x));
          if (a != assigns_.end())
            for (TSNode y : a->second)
              if (!ts_node_eq(y, v)) scan(y, depth + 1);
          if (classes_.count(text(x))) has_own_class = true;
        }
        return true;
      });
    };
    for (TSNode v : it->second) scan(v, 0);
    return has_layer && !has_own_class;
  };
  std::set<std::string> forward_params;
  if (functions_.count("ModelNew.forward"))
    for (TSNode prm : named_children(field(functions_.at("ModelNew.forward").node, "parameters"))) {
      TSNode id = type(prm) == "identifier" ? prm : field(prm, "name");
      if (valid(id) && type(id) == "identifier" && text(id) != "self") forward_params.insert(text(id));
    }
  // A @triton.jit body is device code: its arithmetic is the kernel's own, even where a variable
  // there shares a name with one of forward's tensor arguments (no false warning for `x - m`).
  auto triton_decorated = [&](TSNode fnode) {
    TSNode parent = ts_node_parent(fnode);
    if (type(fnode) != "function_definition" || !valid(parent) || type(parent) != "decorated_definition") return false;
    for (TSNode d : named_children(parent))
      if (type(d) == "decorator" && decorator_name(d).rfind("triton.", 0) == 0) return true;
    return false;
  };
  for (TSNode fnode : reachable_nodes_) {
    if (triton_decorated(fnode)) continue;
    std::map<std::string, std::string> loop_elements;  // loop variable -> container attribute
    walk(field(fnode, "body"), [&](TSNode n) {
      std::string_view t = type(n);
      if (t == "function_definition" || t == "class_definition") return false;
      if (t == "for_statement") {
        TSNode left = field(n, "left"), right = field(n, "right");
        std::string r = valid(right) ? text(right) : "";
        size_t pos = r.find("self.");
        if (valid(left) && pos != std::string::npos) {
          std::string attr = r.substr(pos + 5);
          attr = attr.substr(0, attr.find_first_of(".)[, "));
          // `for layer in self.layers` or `for i, layer in enumerate(self.layers)`
          std::vector<TSNode> names = type(left) == "identifier" ? std::vector<TSNode>{left} : named_children(left);
          if (!names.empty()) loop_elements[text(names.back())] = attr;
        }
        return true;
      }
      if (t == "call") {
        TSNode fn = field(n, "function");
        std::string attr;
        if (type(fn) == "identifier" && loop_elements.count(text(fn))) attr = loop_elements[text(fn)];
        if (type(fn) == "subscript") {
          std::string v = text(field(fn, "value"));
          if (v.rfind("self.", 0) == 0 && v.find('.', 5) == std::string::npos) attr = v.substr(5);
        }
        if (!attr.empty() && library_container(attr)) add("nn_layer_in_forward", n, "layers of self." + attr);
        return true;
      }
      if (t == "binary_operator" || t == "augmented_assignment") {
        TSNode op = ts_node_child_by_field_name(n, "operator", 8);
        std::string o = valid(op) ? text(op) : "";
        if (o == "@" || o == "@=" || o.empty()) return true;
        for (const char* side : {"left", "right"}) {
          TSNode x = field(n, side);
          if (!valid(x)) continue;
          // a tensor argument of forward, or a tensor method on one (x.unsqueeze(1))
          static const Names kScalarMethods = {"size", "dim", "numel", "stride", "item", "tolist", "data_ptr",
                                               "element_size", "nelement", "is_contiguous", "get_device",
                                               "storage_offset", "ndimension", "__len__"};
          TSNode base = x;
          bool scalar = false;
          while (valid(base) && type(base) == "call" && type(field(base, "function")) == "attribute") {
            if (kScalarMethods.count(text(field(field(base, "function"), "attribute")))) scalar = true;
            base = field(field(base, "function"), "object");
          }
          if (scalar) continue;
          if (valid(base) && type(base) == "identifier" && forward_params.count(text(base)) &&
              (type(x) == "identifier" || type(x) == "call")) {
            add("torch_elementwise_in_forward", n, "'" + o + "' on tensor " + text(base));
            break;
          }
        }
        return true;
      }
      return true;
    });
  }
}

void Analysis::match_output_cache() {
  for (TSNode fnode : reachable_nodes_)
    walk(field(fnode, "body"), [&](TSNode n) {
      std::string_view t = type(n);
      bool key_like = false;
      std::string what;
      if (t == "attribute" && text(field(n, "attribute")) == "_version") { key_like = true; what = "._version"; }
      if (t == "call") {
        TSNode fn = field(n, "function");
        std::string f = valid(fn) ? text(fn) : "";
        if (f == "id" || (valid(fn) && type(fn) == "attribute" && text(field(fn, "attribute")) == "data_ptr")) {
          what = f == "id" ? "id()" : ".data_ptr()";
          // used as a key: inside a subscript index, an `in` test, a dict .get/.setdefault, or a tuple key
          for (TSNode a = ts_node_parent(n); valid(a); a = ts_node_parent(a)) {
            std::string_view at = type(a);
            bool membership = false;
            if (at == "comparison_operator")
              for (uint32_t k = 0; k < ts_node_child_count(a); ++k) {
                std::string_view op = ts_node_type(ts_node_child(a, k));
                if (op == "in" || op == "not in") membership = true;
              }
            if (at == "subscript" || membership || at == "dictionary" || at == "pair") { key_like = true; break; }
            if (at == "call") {
              TSNode g = field(a, "function");
              if (valid(g) && type(g) == "attribute") {
                std::string m = text(field(g, "attribute"));
                if (m == "get" || m == "setdefault" || m == "pop") { key_like = true; break; }
              }
            }
            if (at == "block" || at == "expression_statement") break;
          }
          if (!key_like) {  // k = (x.data_ptr(), ...) then cache[k]
            TSNode a = ts_node_parent(n);
            while (valid(a) && (type(a) == "tuple" || type(a) == "parenthesized_expression")) a = ts_node_parent(a);
            if (valid(a) && type(a) == "assignment") {
              std::string k = text(field(a, "left"));
              walk(field(fnode, "body"), [&](TSNode m) {
                if (type(m) == "subscript" && text(field(m, "subscript")) == k) key_like = true;
                if (type(m) == "comparison_operator" && text(m).find(k + " in") != std::string::npos) key_like = true;
                return !key_like;
              });
            }
          }
        }
      }
      if (key_like) add("output_cache", n, what);
      return true;
    });
}

/// Depth of the deepest node, walked without recursion; stops counting at `limit`.
int max_depth(TSNode root, int limit) {
  TSTreeCursor cursor = ts_tree_cursor_new(root);
  int depth = 0, deepest = 0;
  for (;;) {
    if (depth < limit && ts_tree_cursor_goto_first_child(&cursor)) {
      deepest = std::max(deepest, ++depth);
      continue;
    }
    while (!ts_tree_cursor_goto_next_sibling(&cursor)) {
      if (!ts_tree_cursor_goto_parent(&cursor)) {
        ts_tree_cursor_delete(&cursor);
        return deepest;
      }
      --depth;
    }
  }
}

PolicyReport Analysis::run() {
  // CPython's parser refuses nesting this deep, and the recursive passes below must not meet it.
  constexpr int kMaxDepth = 1500;
  if (max_depth(syntax_.root(), kMaxDepth + 1) > kMaxDepth) {
    report_.parsed = false;
    add_at("syntax_error", 1, 1, "nesting deeper than Python allows", "");
    return report_;
  }
  report_.parsed = !ts_node_has_error(syntax_.root());
  // The grammar also accepts Python 2's `print x` and `exec code`, which Python 3 rejects.
  if (report_.parsed) {
    TSNode py2{};
    bool found = false;
    walk(syntax_.root(), [&](TSNode n) {
      if (found) return false;
      if (type(n) == "print_statement" || type(n) == "exec_statement") { py2 = n; found = true; return false; }
      return true;
    });
    if (found) {
      report_.parsed = false;
      add("syntax_error", py2, "Python 2 statement; Python 3 needs a call");
      return report_;
    }
  }
  if (!report_.parsed) {
    match_syntax_error();
    return report_;
  }
  collect(syntax_.root(), "", "", 0);
  if (ctx_.profile == Profile::off) {  // the basic contract only (Rule::in)
    match_model_new();
    return report_;
  }
  resolve_extensions();
  collect_cxx();
  compute_reachable();
  match_model_new();
  match_reference();
  match_try_pass();
  match_imports();
  match_names();
  match_patching();
  match_tensor_subclass();
  match_forward_compute();
  match_custom_calls();
  match_precision();
  match_cxx();
  match_kernelbench();
  match_output_cache();
  match_module_containers_and_elementwise();
  std::sort(report_.findings.begin(), report_.findings.end(), [](const Finding& a, const Finding& b) {
    return std::tie(a.line, a.column, a.rule_id) < std::tie(b.line, b.column, b.rule_id);
  });
  return report_;
}

}  // namespace

const std::vector<std::pair<std::string_view, std::set<std::string, std::less<>>>>& detail::cxx_name_rules() {
  return kCxxNameRules;
}

const std::set<std::string, std::less<>>& detail::compute_op_names() { return kComputeOps; }

bool detail::cpu_library_routine(const std::string& name) { return is_cpu_library_compute(name); }
bool detail::aoti_compute_shim(const std::string& name) { return is_aoti_compute(name); }

PolicyReport check_candidate(std::string_view python_source, const PolicyContext& ctx) {
  Analysis analysis(python_source, ctx);
  return analysis.run();
}

}  // namespace kgym::policy
