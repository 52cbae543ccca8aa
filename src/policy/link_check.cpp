// The link check (gate 2, after the build): the symbols a candidate's built extension imports,
// read by the names the dynamic loader binds. The source scan (policy.cpp) reads names as they
// are written; an asm label, a macro built by token pasting or a weak alias reaches the same
// symbol under another spelling (red team rt26: a BLAS GEMM, ATen's CPU kernels past the
// dispatcher and PyRun_SimpleString, each declared under an innocent name). The loader's names
// cannot be respelled: this check applies the source scan's rules to them, plus rules that only
// make sense for symbols (families of library, driver-API and Python-interpreter entry points).
#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <set>

#include "cxx_scan.hpp"
#include "kgym/policy.hpp"
#include "kgym/subprocess.hpp"

namespace kgym::policy {
namespace {

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool starts_any(std::string_view s, std::initializer_list<std::string_view> ps) {
  return std::any_of(ps.begin(), ps.end(), [&](std::string_view p) { return starts(s, p); });
}

/// What one symbol is, when a rule concerns it: the rule id and a few words for the message.
struct SymbolHit {
  std::string_view rule;
  std::string what;
};

// The CUDA driver API entry points an honest kernel uses: tensor maps (TMA descriptors), error
// strings, device and function queries. Everything else of the driver API (contexts, modules,
// launches, memory, streams) works beside the runtime the harness synchronises and traces: a
// context of the candidate's own is not waited for by torch.cuda.synchronize() (red team rt26).
constexpr std::string_view kDriverAllowed[] = {
    "cuTensorMapEncode", "cuTensorMapReplace", "cuGetErrorString", "cuGetErrorName", "cuDriverGetVersion",
    "cuInit", "cuDeviceGet", "cuFuncSetAttribute", "cuFuncGetAttribute", "cuFuncSetCacheConfig",
    "cuFuncSetSharedMemConfig", "cuOccupancy", "cuPointerGetAttribute", "cuCtxGetCurrent", "cuCtxGetDevice",
    "cuFuncGetName"};

// at::cuda:: holds both the CUDA helpers an extension needs and ATen's CUDA kernels by operator
// name (at::cuda::relu, past the dispatcher). The helpers are listed; any other at::cuda name is
// a kernel.
constexpr std::string_view kAtCudaHelpers[] = {
    "getCurrentCUDAStream", "getDefaultCUDAStream", "getStreamFromExternal", "getCurrentDeviceProperties",
    "getDeviceProperties", "warp_size", "getNumGPUs", "is_available", "device_count", "current_device",
    "getCUDADeviceAllocator", "getCurrentCUDABlasHandle", "getCurrentCUDABlasLtHandle", "getCurrentCUDASparseHandle",
    "getCurrentCUDASolverDnHandle", "getChosenWorkspaceSize", "getCUDABlasLtWorkspaceSize", "getCUDABlasLtWorkspace",
    "detail", "CUDAGeneratorImpl", "getPinnedMemoryAllocator", "canDeviceAccessPeer", "get_p2p_access",
    "CUDAEvent", "CUDAStream", "OptionalCUDAGuard", "CUDAGuard", "philox"};

// ATen's per-backend operator namespaces (generated, one function per operator): calling them
// runs the operator's kernel without the dispatcher, so neither the op trace nor a dispatch hook
// sees it (red team rt26: at::cpu::_softmax under an asm label).
constexpr std::string_view kAtenBackendNamespaces[] = {
    "native", "cpu", "meta", "mps", "xpu", "mkldnn", "compositeexplicitautograd",
    "compositeexplicitautogradnonfunctional", "compositeimplicitautograd", "compositeimplicitautogradnestedtensor",
    "quantizedcpu", "quantizedcuda", "sparsecpu", "sparsecuda", "sparsecsrcpu", "sparsecsrcuda",
    "nestedtensorcpu", "nestedtensorcuda", "sparsemeta", "quantizedmeta"};

// ATen's glue operators: python/kgym_worker/integrity.py ATEN_GLUE, the CPU op trace's list
// (tests/unit/link_check_test.cpp checks that the two agree).
constexpr std::string_view kAtenGlue[] = {
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like", "new_zeros",
    "ones", "ones_like", "new_ones", "full", "full_like", "new_full", "fill_", "zero_", "resize_", "resize_as_",
    "set_", "lift_fresh", "detach", "detach_", "alias", "view", "view_as", "_reshape_alias", "_unsafe_view",
    "reshape", "reshape_as", "flatten", "unflatten", "squeeze", "squeeze_", "unsqueeze", "unsqueeze_", "permute",
    "transpose", "transpose_", "t", "t_", "expand", "expand_as", "as_strided", "as_strided_", "contiguous", "clone",
    "copy_", "_copy_from", "_copy_from_and_resize", "to", "_to_copy", "type_as", "select", "slice", "narrow",
    "split", "split_with_sizes", "chunk", "unbind", "movedim", "moveaxis", "swapaxes", "swapdims", "numpy_T", "mT",
    "mH", "matrix_H", "unfold_copy", "cat", "stack", "hstack", "vstack", "_cat", "constant_pad_nd", "pad", "item",
    "_local_scalar_dense", "is_nonzero", "size", "stride", "numel", "dim", "sym_size", "sym_stride", "sym_numel",
    "sym_storage_offset", "is_contiguous", "is_same_size", "result_type", "_has_compatible_shallow_copy_type",
    "requires_grad_", "retain_grad", "_version", "data", "_fw_primal", "output_nr", "_make_dual", "resolve_conj",
    "resolve_neg", "conj", "_conj",
    // views and their _copy forms (red team rt34: Tensor::unfold in an honest C++ ReLU)
    "unfold", "diagonal", "view_as_real", "view_as_complex", "alias_copy", "view_copy", "expand_copy",
    "squeeze_copy", "unsqueeze_copy", "permute_copy", "transpose_copy", "t_copy", "as_strided_copy", "_reshape_copy",
    "lift_fresh_copy", "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy", "narrow_copy",
    "unbind_copy", "diagonal_copy", "detach_copy"};

/// Whether at::_ops's struct name `name` (operator, then "_" and its overload: empty_memory_format,
/// fill__Scalar) is a glue operator.
bool aten_glue(std::string_view name) {
  // (a glue name's prefix also begins ops that compute: conj_physical, and the backward ops, such
  // as unfold_backward, which sums overlapping windows)
  if (starts(name, "conj_physical") || starts(name, "_conj_physical") || name.find("_backward") != std::string_view::npos)
    return false;
  for (std::string_view g : kAtenGlue)
    if (name == g || (name.size() > g.size() + 1 && starts(name, g) && name[g.size()] == '_')) return true;
  return false;
}

const std::regex& fortran_blas() {
  // s/d/c/z + a BLAS/LAPACK routine + the Fortran underscore (sgemm_, dgesv_, zherk_), and i?amax_.
  static const std::regex re("^(i?[sdcz][a-z0-9]{2,10}|xerbla|lsame)_$");
  return re;
}

std::optional<SymbolHit> c_symbol(std::string_view s) {
  using namespace std::string_literals;
  // pybind11's own headers import PyImport_ImportModule (py::print imports sys, red team rt27's
  // false rejection) and PyImport_AddModule (py::globals, def_submodule): allowed here; the source
  // scan rejects them when the candidate's C++ names them.
  if (s == "PyImport_ImportModule" || starts(s, "PyImport_AddModule")) return std::nullopt;
  // kgym's own op watch (python/kgym_worker/native/opwatch.cpp): its switch is the harness's
  if (starts(s, "kgym_opwatch")) return SymbolHit{"timer_harness_patch", "kgym's op watch"};
  if (starts_any(s, {"__cuda", "__gmon_start__", "_ITM_", "__cxa_", "__gxx_", "_Unwind_"})) return std::nullopt;
  // The Python interpreter: running code the policy never read, or hooking the harness's own.
  if (starts_any(s, {"PyRun_", "Py_CompileString", "PyEval_EvalCode", "PyEval_EvalFrame", "_PyEval_EvalFrame",
                     "PyImport_Import", "PyImport_Exec", "PyImport_Reload", "PyImport_AppendInittab",
                     "PyImport_ExtendInittab", "PyImport_ImportModuleLevel", "PyMarshal_", "Py_Main", "Py_BytesMain", "Py_RunMain", "PyCode_New",
                     "PyFunction_New", "Py_Initialize", "Py_NewInterpreter", "Py_EndInterpreter",
                     "PyThreadState_SetAsyncExc", "Py_AddPendingCall", "PyUnstable_Code_New"}))
    return SymbolHit{"dynamic_code", "runs or compiles Python code the policy never read"};
  if (starts_any(s, {"PyEval_SetProfile", "PyEval_SetTrace", "_PyEval_SetProfile", "_PyEval_SetTrace", "PySys_",
                     "PyEval_GetFrame", "PyEval_GetGlobals", "PyEval_GetLocals", "PyGC_", "PyMonitoring_",
                     "PyRefTracer_", "PyFunction_AddWatcher", "PyType_AddWatcher", "PyCode_AddWatcher",
                     "PyDict_AddWatcher", "PyContext_AddWatcher"}))
    return SymbolHit{"introspection", "hooks or reads the interpreter's own state"};
  // Code made at run time, and the loader itself.
  if (starts_any(s, {"nvrtc", "nvJitLink", "nvPTXCompiler", "cudaGetDriverEntryPoint", "cudaLibraryLoad",
                     "cudaLibraryGet", "dlopen", "dlsym", "dlvsym", "dlmopen", "__libc_dlopen", "__libc_dlsym",
                     "memfd_create", "mprotect", "pkey_mprotect", "process_vm_", "ptrace"}))
    return SymbolHit{"dynamic_code", "loads or makes code at run time"};
  if (starts_any(s, {"cupti", "cudaProfilerStart", "cudaProfilerStop", "cuProfiler"}))
    return SymbolHit{"introspection", "drives the profiler the harness traces kernels with"};
  if (starts(s, "pthreadpool_")) return SymbolHit{"threads_processes_async", "torch's thread pools"};
  // Graphs replay recorded work without launching it; streams and events are left to the source
  // scan and the kernel trace, since every extension that uses c10's CUDA device guard imports
  // the guard's stream-pool and event functions (its vtable), used or not.
  if (starts(s, "cudaGraph") || starts(s, "cudaStreamBeginCapture") || starts(s, "cudaStreamEndCapture"))
    return SymbolHit{"streams_events_graphs", "CUDA graphs"};
  if (s.size() > 2 && starts(s, "cu") && std::isupper(static_cast<unsigned char>(s[2]))) {
    for (std::string_view ok : kDriverAllowed)
      if (starts(s, ok)) return std::nullopt;
    return SymbolHit{"dynamic_code", "the CUDA driver API beside the runtime (contexts, modules, launches, memory)"};
  }
  // Library compute: the CUDA math libraries here, the CPU ones from the source scan's list.
  if (starts_any(s, {"cublas", "cudnn", "cufft", "cusparse", "cusolver", "curand", "cutensor", "nccl", "nvpl"}) ||
      detail::cpu_library_routine(std::string(s)))
    return SymbolHit{"cpp_library_compute", "a library compute routine"};
  if (std::regex_match(s.begin(), s.end(), fortran_blas()))
    return SymbolHit{"cpp_library_compute", "a BLAS/LAPACK routine"};
  // MKL's vector math (VML): vsTanh, vdExp, vmsErf and the Fortran aliases (VSTANH, VMSEXP_),
  // whole-array kernels (red team rt35 ran vsTanh under strict)
  static const std::regex vml("^(v|vm)[sdcz][A-Z][A-Za-z0-9]*$|^VM?[SDCZ][A-Z][A-Z0-9]*_?$");
  if (s.size() >= 4 && std::regex_match(s.begin(), s.end(), vml))
    return SymbolHit{"cpp_library_compute", "MKL's vector math (VML)"};
  if (detail::aoti_compute_shim(std::string(s)))
    return SymbolHit{"cpp_library_compute", "AOTInductor's C shim: ATen operators past the dispatcher, or by name"};
  // An imported name is never the candidate's own code: a BLAS/LAPACK routine at the end of it,
  // after any vendor prefix (scipy_cblas_sgemm64_, a bundled OpenBLAS's; red team rt29), counts.
  for (size_t at = s.find('_'); at != std::string_view::npos; at = s.find('_', at + 1))
    if (detail::cpu_library_routine(std::string(s.substr(at + 1))))
      return SymbolHit{"cpp_library_compute", "a library compute routine under a vendor's prefix"};
  // Of the source scan's C names only the persisting-L2 settings: files, threads and processes
  // are the sandbox's (Landlock, seccomp, the thread census), and the toolchain's own code imports
  // such calls (honest CUDA extensions built on the H200 import open, secure_getenv and syscall).
  for (const auto& [rule, names] : detail::cxx_name_rules())
    if (rule == "l2_persistence" && names.count(s)) return SymbolHit{rule, "persisting-L2 settings"};
  return std::nullopt;
}

/// The qualified name of a demangled function or object ("float* at::TensorBase::data_ptr<float>()
/// const" -> "at::TensorBase::data_ptr"), template arguments and parameters dropped.
std::string qualified_name(std::string_view d) {
  for (std::string_view p : {"vtable for ", "typeinfo for ", "typeinfo name for ", "VTT for ",
                             "construction vtable for ", "non-virtual thunk to ", "virtual thunk to ",
                             "guard variable for ", "TLS init function for ", "TLS wrapper function for ",
                             "covariant return thunk to "})
    if (starts(d, p)) d.remove_prefix(p.size());
  std::string out;
  int depth = 0;
  for (char ch : d) {
    if (ch == '<') ++depth;
    else if (ch == '>') depth = std::max(0, depth - 1);
    else if (depth == 0 && ch == '(') break;
    else if (depth == 0 && ch == ' ') out.clear();  // a return type before the name
    else if (depth == 0) out += ch;
  }
  return out;
}

std::vector<std::string> components(const std::string& q) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t pos; (pos = q.find("::", start)) != std::string::npos; start = pos + 2) parts.push_back(q.substr(start, pos - start));
  parts.push_back(q.substr(start));
  for (std::string& p : parts)  // ABI tags: get_env[abi:cxx11] -> get_env
    if (auto tag = p.find("[abi:"); tag != std::string::npos) p.resize(tag);
  return parts;
}

std::optional<SymbolHit> cxx_symbol(const std::string& demangled) {
  const std::string q = qualified_name(demangled);
  const auto c = components(q);
  if (c.empty()) return std::nullopt;
  const std::string& last = c.back();
  const std::string_view ns = c[0];
  if (ns == "at" && c.size() > 2) {
    const std::string& sub = c[1];
    for (std::string_view b : kAtenBackendNamespaces)
      if (sub == b) return SymbolHit{"private_torch_internals", "ATen's kernels called past the dispatcher"};
    if (sub == "cuda") {
      if (c.size() > 2 && c[2] == "blas") return SymbolHit{"cpp_library_compute", "ATen's cuBLAS wrappers"};
      bool helper = false;
      for (std::string_view h : kAtCudaHelpers) helper = helper || c[2] == h;
      if (!helper) return SymbolHit{"private_torch_internals", "ATen's CUDA kernels called past the dispatcher"};
    }
  }
  // ATen operators through the dispatcher (at::_ops::clamp_min::call, an overload such as
  // add_Scalar): under strict the C++ may not compute with ATen, and a call from a thread the CPU
  // op trace does not watch (an OpenMP team) or under a thread-local state restored from outside
  // the trace is not seen at run time (red team rt28). Every operator but the glue (allocation,
  // views, copies: the op trace's own list) is compute.
  if (ns == "at" && c.size() > 3 && c[1] == "_ops" && !aten_glue(c[2]) && last != "redispatch")
    return SymbolHit{"cpp_library_compute", "ATen compute operators"};
  if (q.find("ThreadLocalState") != std::string::npos || q.find("RecordFunctionTLS") != std::string::npos ||
      last == "set_record_function_tls_" || last == "get_record_function_tls_")
    return SymbolHit{"introspection", "the operator trace's thread-local state"};
  if (ns == "fbgemm") return SymbolHit{"cpp_library_compute", "a library compute routine"};
  // Torch's C++ frontend: its modules and optimisers run ATen operators inside libtorch
  // (red team rt34: torch::nn::LinearImpl::forward did a matmul under strict).
  if (ns == "torch" && c.size() > 2 && (c[1] == "nn" || c[1] == "optim"))
    return SymbolHit{"cpp_library_compute", "torch's C++ modules (torch::nn, torch::optim): ATen compute inside libtorch"};
  // c10's thread-local debug info holds the profiler's state: reading it tells the traced calls
  // apart (red team rt34: ThreadLocalDebugInfo::get(DebugInfoKind::PROFILER_STATE)).
  if (ns == "c10" && std::find(c.begin(), c.end(), "ThreadLocalDebugInfo") != c.end())
    return SymbolHit{"introspection", "c10's thread-local debug info (the profiler's state)"};
  // Torch's own exports that wrap the loader, threads and the environment (red team rt27:
  // at::DynamicLibrary is dlopen/dlsym under another name; at::launch runs work on the inter-op
  // thread pool; c10::utils::get_env reads the environment).
  if (std::find(c.begin(), c.end(), "DynamicLibrary") != c.end())
    return SymbolHit{"dynamic_code", "torch's wrapper of the loader (dlopen, dlsym)"};
  if ((ns == "at" && (last == "launch" || last == "intraop_launch" || last == "launch_no_thread_state")) ||
      (ns == "c10" && (std::find(c.begin(), c.end(), "ThreadPool") != c.end() ||
                       std::find(c.begin(), c.end(), "TaskThreadPool") != c.end() ||
                       std::find(c.begin(), c.end(), "TaskThreadPoolBase") != c.end())))
    return SymbolHit{"threads_processes_async", "torch's thread pools"};
  if (ns == "c10" && c.size() > 2 && c[1] == "utils" && (last == "get_env" || last == "set_env" || last == "has_env"))
    return SymbolHit{"file_network_env", "the environment"};
  if ((ns == "at" || ns == "c10") && q.find("redispatch") != std::string::npos)
    return SymbolHit{"private_torch_internals", "a redispatch skips the dispatch keys that trace operators"};
  // (TORCH_LIBRARY's schema parser is torch::jit's too: registering an op of one's own is allowed)
  if (ns == "torch" && c.size() > 2 && c[1] == "jit" && !starts(last, "parseSchema") && last != "parseName")
    return SymbolHit{"dynamic_code", "TorchScript from C++"};
  if ((ns == "torch" && c.size() > 2 && (c[1] == "profiler" || (c[1] == "autograd" && c[2] == "profiler"))) ||
      (ns == "at" && q.find("RecordFunction") != std::string::npos) || (ns == "at" && starts(last, "record_function")))
    return SymbolHit{"introspection", "the operator trace's switches"};
  // Torch's and c10's own names that the source scan lists (the RecordFunction switches): only
  // that rule, since ATen's names include clone, fill and the like, and c10's CUDA device guard
  // imports the stream-pool functions whether they are used or not.
  for (const auto& [rule, names] : detail::cxx_name_rules())
    if (rule == "introspection" && names.count(last)) return SymbolHit{rule, "the operator trace's switches"};
  return std::nullopt;
}

/// The C symbols torch's own libraries export that a candidate's extension may import: the
/// AOTInductor shim's tensor-handle plumbing (its compute entry points are judged above), torch's
/// Python objects (THP*), its flags, CPU feature queries (cpuinfo) and SLEEF's per-vector math
/// (what at::vec::Vectorized's exp or erf calls: arithmetic on registers, as libm's expf is). Any
/// other C routine they export is a library's (red team rt35: MKL's sgemm_batch and vsTanh, out of
/// 23,000 MKL names, passed a list of spellings).
bool torch_c_export_allowed(std::string_view s) {
  return starts(s, "aoti_torch_") || starts(s, "THP") || starts(s, "FLAGS_") || starts(s, "cpuinfo_") ||
         starts(s, "Sleef_") || starts(s, "_");
}

}  // namespace

std::string demangle(const std::string& symbol) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : symbol;
}

namespace {

/// The output lines of a GNU binutils tool run on `path` (`args` first); nullopt with `error` set
/// when it cannot run ("<tool> could not run ...; install GNU binutils") or fails on the file.
std::optional<std::vector<std::string_view>> binutils_lines(const std::vector<std::string>& args, const std::string& path,
                                                            std::string& out, std::string* error) {
  std::vector<std::string> argv = args;
  argv.push_back(path);
  ProcessResult r = run_process(argv, 30000);
  if (!r.ok()) {
    if (error)
      *error = !r.started ? args.front() + " could not run (" + r.error + "); install GNU binutils"
                          : args.front() + " failed on " + path + ": " + r.err.substr(0, 300);
    return std::nullopt;
  }
  out = std::move(r.out);
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < out.size();) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    lines.emplace_back(out.data() + start, end - start);
    start = end + 1;
  }
  return lines;
}

}  // namespace

std::optional<std::vector<std::string>> undefined_symbols(const std::string& path, std::string* error) {
  std::string text;
  const auto lines = binutils_lines({"nm", "-D", "--undefined-only", "--format=posix"}, path, text, error);
  if (!lines) return std::nullopt;
  std::vector<std::string> out;
  for (std::string_view line : *lines) {
    std::string name(line.substr(0, line.find(' ')));
    if (auto at = name.find('@'); at != std::string::npos) name.resize(at);
    if (!name.empty()) out.push_back(std::move(name));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

const std::set<std::string>* torch_c_exports(const std::string& torch_lib_dir, std::string* error) {
  static std::mutex mu;
  static std::map<std::string, std::set<std::string>> cache;
  std::lock_guard lock(mu);
  if (auto it = cache.find(torch_lib_dir); it != cache.end()) return &it->second;
  std::error_code ec;
  std::vector<std::filesystem::path> libs;
  for (const auto& e : std::filesystem::directory_iterator(torch_lib_dir, ec)) {
    const std::string f = e.path().filename().string();
    if ((f.rfind("libtorch", 0) == 0 || f.rfind("libc10", 0) == 0) && f.find(".so") != std::string::npos &&
        e.is_regular_file(ec))
      libs.push_back(e.path());
  }
  if (ec || libs.empty()) {
    if (error) *error = "no libtorch*/libc10* shared objects in " + torch_lib_dir;
    return nullptr;
  }
  std::set<std::string> out;
  for (const auto& lib : libs) {
    std::string text;
    const auto lines = binutils_lines({"nm", "-D", "--defined-only", "--format=posix"}, lib.string(), text, error);
    if (!lines) return nullptr;
    for (std::string_view line : *lines) {
      std::string name(line.substr(0, line.find(' ')));
      if (auto at = name.find('@'); at != std::string::npos) name.resize(at);
      if (!name.empty() && !starts(name, "_Z")) out.insert(std::move(name));
    }
  }
  return &cache.emplace(torch_lib_dir, std::move(out)).first->second;
}

std::optional<std::vector<std::string>> needed_libraries(const std::string& path, std::string* error) {
  std::string text;
  const auto lines = binutils_lines({"readelf", "-d", "--wide"}, path, text, error);
  if (!lines) return std::nullopt;
  std::vector<std::string> out;
  for (std::string_view line : *lines) {
    if (line.find("(NEEDED)") == std::string_view::npos) continue;
    const size_t open = line.find('['), close = line.rfind(']');
    if (open != std::string_view::npos && close != std::string_view::npos && close > open + 1)
      out.emplace_back(line.substr(open + 1, close - open - 1));
  }
  return out;
}

std::vector<Finding> check_needed_libraries(const std::vector<std::string>& needed, std::string_view extension,
                                            Profile profile) {
  const Rule* rule = find_rule("cpp_library_compute");
  const std::optional<Severity> severity = rule ? rule->in(profile) : std::nullopt;
  if (!severity) return {};
  std::vector<std::string> unknown;
  for (const std::string& soname : needed) {
    const std::string base = soname.substr(0, soname.find(".so"));
    static const std::regex allowed(
        "^(libc|libm|libdl|librt|libpthread|libutil|libstdc\\+\\+|libgcc_s|libatomic|ld-linux-.*|linux-vdso|libgomp|"
        "libiomp5|libomp|libpython3[.0-9]*|libc10|libc10_cuda|libtorch|libtorch_cpu|libtorch_cuda|libtorch_python|"
        "libtorch_global_deps|libshm|libcudart|libcuda|libnvToolsExt|libnvtx3[a-z]*)$");
    static const std::regex hybrid_allowed("^(libcublas|libcublasLt|libcudnn.*)$");
    if (std::regex_match(base, allowed)) continue;
    if (profile == Profile::hybrid && std::regex_match(base, hybrid_allowed)) continue;
    unknown.push_back(soname);
  }
  if (unknown.empty()) return {};
  std::string list;
  for (size_t i = 0; i < unknown.size() && i < 4; ++i) list += (i ? ", " : "") + unknown[i];
  if (unknown.size() > 4) list += " and " + std::to_string(unknown.size() - 4) + " more";
  Finding f;
  f.rule_id = "cpp_library_compute";
  f.severity = *severity;
  f.message = "the built extension " + std::string(extension) + " links " + list +
              " (a library outside the C/C++ runtime, torch, Python and the CUDA runtime): do not link other "
              "libraries (extra_ldflags); write the kernel yourself";
  f.snippet = list.substr(0, 120);
  return {f};
}

std::vector<Finding> check_linked_symbols(const std::vector<std::string>& symbols, std::string_view extension,
                                          Profile profile, const std::set<std::string>* torch_exports) {
  // One finding per rule, naming the first few symbols.
  std::map<std::string_view, std::vector<std::pair<std::string, std::string>>> hits;  // rule -> (symbol, what)
  for (const std::string& s : symbols) {
    std::optional<SymbolHit> hit = starts(s, "_Z") ? cxx_symbol(demangle(s)) : c_symbol(s);
    if (!hit && torch_exports && !starts(s, "_Z") && torch_exports->count(s) && !torch_c_export_allowed(s))
      hit = SymbolHit{"cpp_library_compute",
                      "a C routine of a library torch bundles and exports (MKL, oneDNN, XNNPACK, NNPACK, ...)"};
    if (hit) hits[hit->rule].push_back({starts(s, "_Z") ? qualified_name(demangle(s)) : s, hit->what});
  }
  std::vector<Finding> out;
  for (auto& [rule_id, whats] : hits) {
    const Rule* rule = find_rule(rule_id);
    if (!rule) continue;
    const std::optional<Severity> severity = rule->in(profile);
    if (!severity) continue;
    std::sort(whats.begin(), whats.end());
    whats.erase(std::unique(whats.begin(), whats.end(), [](const auto& a, const auto& b) { return a.first == b.first; }),
                whats.end());
    std::string list;
    for (size_t i = 0; i < whats.size() && i < 4; ++i) list += (i ? ", " : "") + whats[i].first;
    if (whats.size() > 4) list += " and " + std::to_string(whats.size() - 4) + " more";
    Finding f;
    f.rule_id = std::string(rule_id);
    f.severity = *severity;
    // The advice for a symbol, where the source rule's is worded for Python (fresh-user run).
    std::string advice(rule->message);
    if (rule_id == "private_torch_internals")
      advice = "do not call ATen's kernels past the dispatcher; write the kernel yourself";
    else if (rule_id == "dynamic_code")
      advice = "run only the code you submit: no loader, driver-API contexts or modules, run-time compilation or "
               "Python run from C++";
    f.message = "the built extension " + std::string(extension) + " imports " + list + " (" + whats.front().second +
                "): " + advice;
    f.snippet = list.substr(0, 120);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace kgym::policy
