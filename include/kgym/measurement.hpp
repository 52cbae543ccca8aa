#pragma once
// What runners measure. Runners (the Python worker processes today, a native runner later)
// execute the reference and the candidate and return these records; they decide nothing. The
// judge (verdict.hpp) turns them into outcomes. JSON field names equal the member names; the
// schema is documented in docs/measurements.md and round-trips through to_json/from_json.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kgym {

/// An exception or crash observed while running candidate code.
struct Failure {
  std::string stage;      ///< "parse" | "import" | "init" | "case" | "timing" | "process"
  std::string type;       ///< Python exception type ("RuntimeError"), or "signal" / "exit"
  std::string message;    ///< first line(s) of the error, as the model should see it
  std::string traceback;  ///< full traceback or compiler log (may be long)
  int signal = 0;         ///< terminating signal for stage "process", else 0
  int exit_code = 0;      ///< exit code for stage "process", else 0
};

/// Loading the candidate: parse, import (builds load_inline / Triton code), construct ModelNew.
struct LoadRecord {
  bool ok = false;
  bool parsed = false;           ///< the source parsed as Python
  bool model_new_defined = false;///< a top-level `ModelNew` class exists in the source
  std::optional<Failure> failure;
  double parse_ms = 0, import_ms = 0, init_ms = 0;
};

/// One correctness case: the candidate's run (candidate executor) and the comparison with the
/// reference (reference worker). Error statistics are computed on the trusted side.
struct CaseRecord {
  int index = 0;
  std::uint64_t seed = 0;           ///< secret seed of this case's inputs (published afterwards)
  std::string transform = "nominal";///< value transform: nominal | scale3 | scale001 | negate | abs
  std::optional<Failure> failure;   ///< the candidate raised or died on this case
  double call_ms = 0;               ///< wall time of the candidate's call (incl. sync)
  // Contract, as observed on each output (candidate side) and compared (reference side).
  bool output_plain_tensor = true;  ///< every output's type is exactly torch.Tensor
  std::string output_type;          ///< the offending Python type name when not plain
  bool structure_matches = true;    ///< same number of outputs as the reference
  bool dtype_matches = true, shape_matches = true, device_matches = true;
  std::string detail;               ///< e.g. "dtype float16, expected float32"
  bool inputs_unchanged = true;     ///< input checksums equal before and after the call
  bool output_aliases_input = false;///< an output's storage overlaps an input's
  // Error statistics over all output elements (reference side).
  std::int64_t numel = 0;
  double max_abs_error = 0, mean_abs_error = 0, max_rel_error = 0;
  /// max over elements of |out - ref| / (atol + rtol * |ref|) for the atol/rtol the judge asked
  /// for: <= 1 means allclose.
  double tolerance_ratio = 0;
  double atol = 0, rtol = 0;        ///< the tolerance tolerance_ratio was computed for
  std::int64_t nonfinite_mismatches = 0;  ///< NaN/Inf in the output where the reference is finite
  std::int64_t mismatches = 0;            ///< elements outside the tolerance (incl. non-finite)
  std::vector<std::int64_t> first_mismatch_index;  ///< multi-index of the first mismatch
  bool reference_finite = true;     ///< the reference output itself has no NaN/Inf
};

/// Repeated timed calls of one callable (candidate, eager reference or torch.compile reference).
struct TimingRecord {
  std::string method;          ///< "cuda_events" | "monotonic_clock"
  std::vector<double> times_ms;///< one per timed call, in order
  int warmup = 0;              ///< untimed calls before the first timed one
  bool l2_flushed = false;     ///< an L2 flush (>= 2x L2) ran before every timed call, outside the window
  double wall_ms = 0;          ///< supervisor-side wall clock of the whole timed phase
  std::optional<Failure> failure;  ///< timing could not complete (e.g. torch.compile failed)
};

/// Everything measured for one (task, candidate) evaluation.
struct Measurements {
  std::optional<std::string> task_failure;  ///< the reference failed to load or run
  LoadRecord load;
  std::vector<CaseRecord> cases;
  std::optional<TimingRecord> candidate_timing, eager_timing, compile_timing;
  std::optional<Failure> crash;       ///< the candidate process died (signal / exit) or broke protocol
  std::optional<std::string> timed_out_stage;  ///< the stage whose time limit expired
  std::uint64_t init_seed = 0;        ///< seed under which Model and ModelNew were constructed
};

void to_json(nlohmann::json& j, const Failure& v);
void from_json(const nlohmann::json& j, Failure& v);
void to_json(nlohmann::json& j, const LoadRecord& v);
void from_json(const nlohmann::json& j, LoadRecord& v);
void to_json(nlohmann::json& j, const CaseRecord& v);
void from_json(const nlohmann::json& j, CaseRecord& v);
void to_json(nlohmann::json& j, const TimingRecord& v);
void from_json(const nlohmann::json& j, TimingRecord& v);
void to_json(nlohmann::json& j, const Measurements& v);
void from_json(const nlohmann::json& j, Measurements& v);

}  // namespace kgym
