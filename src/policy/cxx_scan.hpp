#pragma once
// Internal to the policy gate: C/C++/CUDA sources embedded in a candidate, run through the C
// preprocessor and split into tokens, so that rules see names after macro expansion.

#include <set>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

namespace kgym::policy::detail {

/// One C++ token. `kind`: 'i' identifier or keyword, 'n' number, 's' string literal (text is the
/// literal's contents, without quotes, adjacent literals joined), 'c' char literal, 'p' punctuator.
struct CxxToken {
  char kind = 'p';
  std::string text;
};

/// Splits C/C++/CUDA text into tokens; comments are dropped, `#` directives are tokenised like code.
std::vector<CxxToken> tokenize_cxx(std::string_view text);

/// Runs `g++ -E -P -x c++` on `text` with every `#include` line blanked (so no torch/CUDA header is
/// needed) and CUDA's compiler macros defined (__CUDACC__, __CUDA_ARCH__=900, ...). Returns the
/// preprocessed text, or nullopt-like empty string plus ok=false when g++ fails or runs longer
/// than `timeout_ms` (the child is killed).
struct Preprocessed {
  bool ok = false;
  std::string text;
  std::string error;  ///< first lines of g++'s stderr when !ok
};
Preprocessed preprocess_cxx(std::string_view text, int timeout_ms = 5000);

/// The source scan's C++ identifier rules (rule id -> names, read after preprocessing). The link
/// check (link_check.cpp) applies the same names to the symbols a built extension imports.
const std::vector<std::pair<std::string_view, std::set<std::string, std::less<>>>>& cxx_name_rules();

/// The torch compute operators the source scan knows (relu, matmul, clamp_min, add, ...): the link
/// check judges `at::_ops::<op>` imports by them.
const std::set<std::string, std::less<>>& compute_op_names();

/// Whether a name is a CPU library compute routine (BLAS/LAPACK, MKL, OpenBLAS, oneDNN, and the
/// NNPACK/XNNPACK/QNNPACK/fbgemm code libtorch bundles): the source scan's one list, used by the
/// link check too.
bool cpu_library_routine(const std::string& name);

/// Whether a name is AOTInductor's C shim running an operator (`aoti_torch_cpu_mm_out`,
/// `aoti_torch_call_dispatcher`, `torch_call_dispatcher`), not its tensor-handle plumbing: the
/// source scan's list, used by the link check too.
bool aoti_compute_shim(const std::string& name);

}  // namespace kgym::policy::detail
