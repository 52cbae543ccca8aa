// The policy analysis's C++ matchers: the embedded C++/CUDA sources' tokens (raw and
// preprocessed) against the C++ name rules (names.cpp), Python access from C++, symbol binding
// (asm labels, weak aliases), precision downgrades, and library compute (ATen, cuBLAS, cuDNN,
// CPU BLAS) on the forward path.
#include <algorithm>
#include <cctype>
#include <set>

#include "analysis.hpp"

namespace kgym::policy::detail {

/// C++ library compute (ATen, cuBLAS, cuDNN) counts as forward-path compute too: GEMMs and
/// convolutions go to gemm_sites_ (the hybrid allowance), the rest are findings.
void Analysis::collect_cxx_library_sites() {
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
}

/// Every embedded C++ source, scanned token by token.
void Analysis::match_cxx() {
  for (const CxxUnit& u : cxx_) match_cxx_unit(u);
}

/// One C++ source: each finding once per (rule, what) in the unit.
void Analysis::match_cxx_unit(const CxxUnit& u) {
  const auto& tk = u.tokens;
  std::set<std::pair<std::string, std::string>> seen;
  const CxxHit hit = [&](std::string_view rule, const std::string& what) {
    if (seen.insert({std::string(rule), what}).second) add_cxx(rule, u, "C++ " + what, what);
  };
  bool has_wmma = false, has_half = false;
  bool using_std = false;
  for (size_t i = 0; i + 3 < tk.size(); ++i)
    if (tk[i].text == "using" && tk[i + 1].text == "namespace" && tk[i + 2].text == "std") using_std = true;
  for (size_t i = 0; i < tk.size(); ++i) {
    const CxxToken& tok = tk[i];
    if (tok.kind == 's') {
      cxx_string_findings(tok.text, hit);
      continue;
    }
    if (tok.kind != 'i') continue;
    const std::string& w = tok.text;
    cxx_name_rule_findings(tk, i, using_std, hit);
    cxx_python_access_findings(tk, i, hit);
    cxx_symbol_binding_findings(tk, i, hit);
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

/// A string literal in C++: shared-memory or /proc paths, half/tf32 MMA in inline asm, Python
/// internals' names, and symbol names spelled as strings.
void Analysis::cxx_string_findings(const std::string& s, const CxxHit& hit) const {
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
}

/// Identifier tk[i] against the C++ name rules, and std::thread/std::async, pybind11's .attr()
/// and std::system.
void Analysis::cxx_name_rule_findings(const std::vector<CxxToken>& tk, size_t i, bool using_std,
                                      const CxxHit& hit) const {
  const std::string& w = tk[i].text;
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
}

/// Identifier tk[i]: torch's wrappers of the loader, its thread pools and the environment, and
/// Python objects reached, called or operated on from C++.
void Analysis::cxx_python_access_findings(const std::vector<CxxToken>& tk, size_t i, const CxxHit& hit) const {
  const std::string& w = tk[i].text;
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
}

/// Identifier tk[i]: a declaration bound to another symbol (asm labels, redefine_extname, weak
/// aliases), the Python C-API's run/import/frame entry points, CPython's internals, kgym's op
/// watch, and exec/eval/import through pybind11.
void Analysis::cxx_symbol_binding_findings(const std::vector<CxxToken>& tk, size_t i, const CxxHit& hit) const {
  const std::string& w = tk[i].text;
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
}

}  // namespace kgym::policy::detail
