#pragma once
// Gate 1, the policy gate: decides from a candidate's source, before anything of it runs, whether
// it is allowed, and says why not in one line per finding that the model can act on.
//
// The Python source is parsed with tree-sitter (the Python grammar is compiled into kgym_core);
// the CUDA/C++ sources embedded in it (strings given to `load_inline`'s `cuda_sources` /
// `cpp_sources`, and any string literal that looks like C++) are run through the C preprocessor
// (`g++ -E -P`, includes stubbed out) and scanned as tokens, so a macro or a string split cannot
// hide a name. Rules are data (rule_table()): a stable id, a severity per profile, a one-line
// message and the source of the idea. docs/policy_rules.md lists them.

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgym/options.hpp"  // Profile

namespace kgym::policy {

/// What a finding does to the candidate: `reject` ends the verdict (policy_rejected), `warn` is
/// recorded and shown to the model but the candidate still runs.
enum class Severity { reject, warn };

std::string_view to_string(Severity severity);

/// One rule hit. `line`/`column` are 1-based positions in the candidate's Python source (for a
/// hit inside embedded C++, the position of the Python string or variable that holds it); 0 when
/// the finding concerns the whole candidate (e.g. model_new_missing).
struct Finding {
  std::string rule_id;   ///< stable id, e.g. "tensor_subclass"; see rule_table()
  Severity severity = Severity::reject;
  std::string message;   ///< one line for the model: what was found and what to do instead
  int line = 0;
  int column = 0;
  std::string snippet;   ///< the offending source text, cut to one line of at most 120 chars
};
/// {"rule_id","severity":"reject"|"warn","message","line","column","snippet"}
void to_json(nlohmann::json& j, const Finding& f);

/// What the gate knows about the task.
struct PolicyContext {
  Profile profile = Profile::strict;
  /// dtype the task is specified in ("float32", "float16", "bfloat16", ...); precision-downgrade
  /// rules fire only for "float32". Use infer_task_dtype() on the reference when unknown.
  std::string task_dtype = "float32";
  /// The reference module's source (may be empty). Used for the names it defines (`Model`).
  std::string reference_source;
  /// Run embedded C++ through `g++ -E` (the default). false scans only the raw C++ tokens: for
  /// benchmarking the Python-level rules, or hosts without g++ (macro-built names are then missed).
  bool preprocess_cxx = true;
};

/// The gate's answer for one candidate.
struct PolicyReport {
  std::vector<Finding> findings;  ///< sorted by (line, column, rule_id)
  bool parsed = true;             ///< false: the Python source has a syntax error (finding syntax_error)
  /// True when any finding has severity reject.
  bool rejected() const;
};

/// Runs every rule of `ctx.profile` on one candidate's Python source.
/// Thread-safe (no shared mutable state; each call builds its own parser). Takes a few ms for
/// the Python rules plus one `g++ -E` process per embedded C++ source (about 10-20 ms each).
/// Never throws for bad candidate code (that is a finding); throws Error(internal) only when the
/// parser itself cannot be set up.
PolicyReport check_candidate(std::string_view python_source, const PolicyContext& ctx);

/// The dtype a reference is specified in: "float16"/"bfloat16" when its inputs are made in that
/// dtype (`.half()`, `dtype=torch.float16`, `torch.bfloat16` ... in the reference), else
/// "float32" (KernelBench's level 1-3 references are all fp32).
std::string infer_task_dtype(std::string_view reference_source);

// --- The link check (gate 2, after the build) ---------------------------------------------------
// The source scan reads names as written; the loader binds the names in the built shared object.
// An asm label, a macro built by token pasting or a weak alias reaches a symbol under another
// spelling (red team rt26: a BLAS GEMM, ATen's CPU kernels past the dispatcher, PyRun_SimpleString
// under innocent names). The link check reads the undefined dynamic symbols of each extension the
// candidate's process built and loaded, and applies the source rules to them plus families only a
// symbol shows: CUDA driver-API calls beside the runtime (contexts, modules; only tensor maps and
// queries are allowed), ATen's per-backend kernels (at::native, at::cpu, at::cuda::<op>, ...),
// redispatch, TorchScript, library compute (cuBLAS, cuDNN, CPU BLAS/LAPACK, oneDNN), the Python
// interpreter's code-running and hook entry points, the loader (dlopen, dlsym), run-time code
// (NVRTC, nvJitLink). The engine runs it after the candidate loads and again before the verdict
// (runner::candidate_extensions lists the files).

/// Undefined dynamic symbols of one ELF shared object (`nm -D --undefined-only`, GNU binutils),
/// version suffixes ("@GLIBC_2.2.5") removed, sorted and unique. nullopt when nm cannot run or
/// fails on the file; `error` then says why.
std::optional<std::vector<std::string>> undefined_symbols(const std::string& path, std::string* error = nullptr);

/// The demangled C++ name of a symbol (Itanium C++ ABI, through the C++ runtime's demangler), or
/// the symbol itself when it is not a mangled name.
std::string demangle(const std::string& symbol);

/// The findings on the symbols one built extension imports, under `profile` (off: none): at most
/// one per rule, whose rule_id is a source rule (dynamic_code, cpp_library_compute,
/// private_torch_internals, streams_events_graphs, introspection, threads_processes_async,
/// file_network_env, subprocess_system, l2_persistence) with that rule's severity in the profile.
/// The message names `extension` and up to four symbols (demangled); line and column are 0.
/// With `torch_exports` (torch_c_exports of the torch the candidate ran), a C symbol that torch's
/// own libraries define is `cpp_library_compute` too unless it is torch's plumbing (the AOTI shim's
/// handles, THP*, FLAGS_*, cpuinfo, SLEEF's vector math): libtorch_cpu exports about 23,000 MKL
/// routines, and a list of spellings missed sgemm_batch and vsTanh (red team rt35).
std::vector<Finding> check_linked_symbols(const std::vector<std::string>& symbols, std::string_view extension,
                                          Profile profile, const std::set<std::string>* torch_exports = nullptr);

/// The C (unmangled) symbols defined by the shared objects libtorch* and libc10* in
/// `torch_lib_dir` (torch's `lib` folder), read with `nm -D --defined-only` once per folder and
/// kept for the process's life (about 28,000 names for torch 2.11: the result points into that
/// cache, so callers share it without a copy). nullptr when the folder holds none or nm cannot run
/// (`error` says why).
const std::set<std::string>* torch_c_exports(const std::string& torch_lib_dir, std::string* error = nullptr);

/// The DT_NEEDED entries (sonames, e.g. "libc10.so", "libcudart.so.13") of one ELF shared object,
/// read with `readelf -d` (GNU binutils). nullopt when readelf cannot run or fails; `error` says why.
std::optional<std::vector<std::string>> needed_libraries(const std::string& path, std::string* error = nullptr);

/// The finding on the libraries one built extension links (its DT_NEEDED sonames) under `profile`
/// (off: none). Allowed: the C/C++ runtime and the loader, OpenMP (gomp, iomp5, omp), Python,
/// torch's own (c10*, torch*, shm), the CUDA runtime and driver, NVTX; under hybrid also cuBLAS,
/// cuBLASLt and cuDNN (their calls are judged by name). Any other library is one
/// `cpp_library_compute` finding naming it: red team rt29 linked numpy's bundled OpenBLAS through
/// load_inline's `extra_ldflags` and called it under a vendor-prefixed name.
std::vector<Finding> check_needed_libraries(const std::vector<std::string>& needed, std::string_view extension,
                                            Profile profile);

/// One rule as data. `severity_*` is nullopt where the rule does not run in that profile.
struct Rule {
  std::string_view id;
  std::string_view catches;   ///< what it catches (docs)
  std::string_view message;   ///< the one-line message for the model
  std::string_view source;    ///< where the idea comes from (catalog H-number, KernelBench checker, paper)
  std::optional<Severity> strict, hybrid, kernelbench;
  std::optional<Severity> in(Profile profile) const;
};

/// Every rule, in a stable order (docs/policy_rules.md is the same table in prose).
const std::vector<Rule>& rule_table();

/// The rule with this id; nullptr when there is none.
const Rule* find_rule(std::string_view id);

}  // namespace kgym::policy
