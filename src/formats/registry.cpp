// The candidate-format registry (format.hpp): one line per format. Each format's policy check
// lives in its own folder here (src/formats/<name>/).
#include "formats.hpp"

#include "kgym/error.hpp"

namespace kgym {
namespace {

constexpr CandidateFormat kFormats[] = {
    {kKernelBenchModule, "a Python module defining ModelNew (KernelBench)", formats::kernelbench_module_policy},
};

}  // namespace

std::span<const CandidateFormat> candidate_formats() { return kFormats; }

const CandidateFormat& find_format(std::string_view name) {
  for (const auto& f : kFormats)
    if (f.name == name) return f;
  std::string known;
  for (const auto& f : kFormats) known += (known.empty() ? "" : ", ") + std::string(f.name);
  throw Error(ErrorKind::usage, "unknown candidate format '" + std::string(name) + "'; known: " + known);
}

}  // namespace kgym
