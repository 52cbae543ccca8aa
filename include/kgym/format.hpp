#pragma once
// Candidate formats: what a candidate's code is and how gate 1 (the policy check) reads it. The
// C++ side of the format seam; the Python side (python/kgym_worker/formats/) loads a candidate of
// each format in the worker. A new format is a folder on each side (src/formats/<name>/,
// python/kgym_worker/formats/<name>/) plus one registration line on each (docs/adding_a_format.md).

#include <span>
#include <string>
#include <string_view>

#include "kgym/policy.hpp"

namespace kgym {

/// The format of every candidate today: a Python module defining `ModelNew` (KernelBench's
/// convention; custom kernels through load_inline, Triton or C++ extensions).
inline constexpr std::string_view kKernelBenchModule = "kernelbench_module";

/// One registered candidate format.
struct CandidateFormat {
  std::string_view name;     ///< what Candidate::format, a JSONL row's "format" and the load request carry
  std::string_view summary;  ///< one line for docs and errors
  /// Gate 1 for this format: the policy findings of `code` under `context` (a pure function of
  /// the source; nothing of the candidate runs). `report.parsed` false means the code does not
  /// parse in this format (the engine ends it as build_failed).
  policy::PolicyReport (*policy_check)(const std::string& code, const policy::PolicyContext& context);
};

/// The registry (src/formats/registry.cpp), in registration order.
std::span<const CandidateFormat> candidate_formats();

/// The format named `name`. Throws Error(usage): "unknown candidate format '<name>'; known:
/// kernelbench_module".
const CandidateFormat& find_format(std::string_view name);

}  // namespace kgym
