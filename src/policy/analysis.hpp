#pragma once
// Internal to the policy gate: one candidate's analysis. Facts about the candidate come from its
// parsed Python (collect.cpp, reachable.cpp) and its preprocessed C++ (collect.cpp); small
// matchers, one per rule of rules.cpp, turn facts into findings (match_*.cpp). The name lists the
// matchers read are data (names.cpp). policy.cpp runs the passes in order (Analysis::run).

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "cxx_scan.hpp"
#include "kgym/policy.hpp"
#include "python_syntax.hpp"

namespace kgym::policy::detail {

using Names = std::set<std::string, std::less<>>;

// ---------------------------------------------------------------------------------------------
// Name lists (names.cpp). Python names are fully resolved dotted names ("torch.cuda.Stream").

/// True for the names of CPU math-library entry points: Fortran BLAS/LAPACK level 1-3 routines
/// (`sgemm_`, `dgemv`, `saxpy_`, ...), CBLAS (`cblas_*`), LAPACKE, MKL, oneDNN and OpenBLAS.
bool is_cpu_library_compute(const std::string& w);
/// AOTInductor's C shim running an operator (`aoti_torch_cpu_<op>`, `aoti_torch_call_dispatcher`),
/// not its tensor-handle plumbing.
bool is_aoti_compute(const std::string& w);
/// A compute op by name, its in-place form (`threshold_`, `baddbmm_`) included, and
/// torch.fbgemm_* (FBGEMM's GEMMs).
bool is_compute_op(const std::string& attr);
/// True when `name` starts with `prefix` on a component boundary ("torch.cuda.Stream" matches
/// "torch.cuda.Stream" and "torch.cuda.Stream.x", not "torch.cuda.Streams"). A prefix starting with
/// "." matches that attribute anywhere in the chain.
bool matches_prefix(std::string_view name, std::string_view prefix);

extern const Names kNumpyNonCompute;      ///< numpy/cupy names that compute nothing
extern const Names kComputeOps;           ///< torch ops that compute (torch.X, Tensor.X, F.X)
extern const Names kGemmConvOps;          ///< the library GEMM/convolution ops (hybrid allows one)
extern const Names kNnContainers;         ///< torch.nn attributes that hold structure, not compute
extern const Names kKernelBenchTorchOps;  ///< KernelBench's TORCH_COMPUTATION_OPS (after "torch.")
extern const Names kComputeDunders;       ///< Tensor operator dunders (`__mul__`, `__matmul__`, ...)
extern const Names kNnParamFree;          ///< torch.nn modules without parameters (names ending in Loss too)
extern const Names kClassNameAttrs;       ///< attributes of a class object that are only names
extern const Names kHarmlessReceivers;    ///< receivers whose methods are never torch compute
extern const Names kImportAllowlist;      ///< top-level modules strict and hybrid allow to import
extern const Names kBuiltinsOfInterest;   ///< builtins that rules look at as bare names

struct NameRule {
  std::string_view rule_id;
  std::vector<std::string_view> prefixes;  ///< dotted-name prefixes (component boundary)
};
/// Python names (modules, functions, attributes), resolved through imports, per rule.
extern const std::vector<NameRule> kNameRules;

/// C++ identifiers per rule (after preprocessing).
extern const std::vector<std::pair<std::string_view, Names>> kCxxNameRules;
extern const Names kCxxCallOnly;       ///< C++ identifiers that need a following "(" to count
extern const Names kCPythonInternals;  ///< CPython's interpreter internals in a candidate's C++
extern const Names kHalfTypes;         ///< C++/CUDA half, bfloat16 and tf32 type names

// ---------------------------------------------------------------------------------------------

/// One embedded C++/CUDA source and where it sits in the Python file.
struct CxxUnit {
  TSNode at;
  std::string text;
  std::vector<CxxToken> tokens;  ///< raw tokens followed by preprocessed tokens
  size_t raw_count = 0;          ///< tokens[0, raw_count) are the raw (unpreprocessed) tokens
  bool preprocessed = false;
};

/// Records one C++ finding for a unit: (rule id, what was found).
using CxxHit = std::function<void(std::string_view, const std::string&)>;

/// The policy analysis of one candidate. Not thread-safe; one per check_candidate call.
class Analysis {
 public:
  Analysis(std::string_view source, const PolicyContext& ctx) : syntax_(source), ctx_(ctx) {}
  /// Runs the passes and the matchers of ctx.profile; findings sorted by (line, column, rule_id).
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

  // --- helpers (analysis.cpp) ---
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
  /// Pre-order walk of the named nodes under `n`; `f(node)` returns whether to enter its children.
  template <class F>
  void walk(TSNode n, F&& f) const {
    if (!f(n)) return;
    uint32_t count = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < count; ++i) walk(ts_node_named_child(n, i), f);
  }
  bool is_ext_call(TSNode call) const;

  // --- passes (collect.cpp, reachable.cpp) ---
  void collect(TSNode n, const std::string& cls, const std::string& func, int depth);
  void collect_import(TSNode n);
  void resolve_extensions();
  void collect_cxx();
  void compute_reachable();
  struct Reach;  ///< the forward-path search's state (reachable.cpp)

  // --- matchers (match_*.cpp) ---
  void match_syntax_error();
  void match_model_new();
  void match_reference();
  void match_try_pass();
  void match_names();
  void match_name_rules();
  void match_array_interop_and_module_attributes();
  void match_dynamic_attribute_calls();
  void match_dynamic_classes();
  void match_path_strings();
  void match_patching();
  void match_tensor_subclass();
  void match_imports();
  void match_forward_compute();
  void collect_forward_call_sites();
  void forward_call_site(TSNode call, const std::string& cls);
  void collect_cxx_library_sites();
  void apply_hybrid_allowance();
  void match_custom_calls();
  void match_precision();
  void match_cxx();
  void match_cxx_unit(const CxxUnit& u);
  void cxx_string_findings(const std::string& s, const CxxHit& hit) const;
  void cxx_name_rule_findings(const std::vector<CxxToken>& tk, size_t i, bool using_std, const CxxHit& hit) const;
  void cxx_python_access_findings(const std::vector<CxxToken>& tk, size_t i, const CxxHit& hit) const;
  void cxx_symbol_binding_findings(const std::vector<CxxToken>& tk, size_t i, const CxxHit& hit) const;
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
  void compute_values_in_module();
  void compute_name_as_value(TSNode n, bool getattr_call);
  void collect_nn_holders();
  std::string nn_holder_of(TSNode callee) const;
  std::string nn_layer_built_by(const std::string& holder) const;
  void compute_values_on_forward_path();
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

}  // namespace kgym::policy::detail
