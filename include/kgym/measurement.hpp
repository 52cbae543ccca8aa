#pragma once
// What runners measure. Runners (the Python worker processes today, a native runner later)
// execute the reference and the candidate and return these records; they decide nothing. The
// judge (verdict.hpp) turns them into outcomes. JSON field names equal the member names; the
// schema is documented in docs/measurements.md and round-trips through to_json/from_json.

#include <cstdint>
#include <map>
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
  /// Harness/torch functions replaced or precision flags changed by the import (D13, H40).
  std::vector<std::string> tampered;
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
  /// Of `mismatches`, those the float64 cross-check does not cover (the reference, the output or
  /// the float64 reference not finite there; all of them when it did not run). The float64 rule
  /// (an output within atol of float64 is correct) needs 0 here: -1 when the reference did not
  /// say (else NaN where the reference has NaN, replaced by 0, would pass under that rule).
  std::int64_t mismatches_outside_fp64 = -1;
  /// Over the outputs, the largest float64 error divided by that output's own scaled atol (the
  /// float64 rule needs <= 1); -1 when not reported. One atol for all outputs would let a wrong
  /// softmax beside a larger output pass.
  double fp64_atol_ratio = -1;
  std::vector<std::int64_t> first_mismatch_index;  ///< multi-index of the first mismatch
  bool reference_finite = true;     ///< the reference output itself has no NaN/Inf
  /// Set only by the supervisor when the reference worker compared this case's output; a case
  /// that was not compared never passes (a forged or truncated candidate reply).
  bool compared = false;
  // Run-time integrity (issue 4, docs/correctness.md).
  std::string shape_variant;        ///< "" (the task's sizes) or "other" (size constants changed)
  /// Set only by the supervisor: the candidate worker regenerated this case's inputs from the case
  /// seed and their fingerprint matched the reference's (true), or they were sent as bytes (false:
  /// a task whose get_inputs is not reproducible from torch's seed; docs/correctness.md).
  bool inputs_regenerated = false;
  bool poisoned = false;            ///< free allocator blocks were poisoned before each run (D4; GPU)
  int reruns = 0;                   ///< runs of the case (2: the second, differently poisoned, is compared)
  /// max |run1 - run2| / (atol + rtol |run2|) between the two runs (> 1: output depends on garbage).
  double rerun_tolerance_ratio = 0;
  std::int64_t rerun_nonfinite_mismatches = 0;  ///< NaN/Inf positions that differ between the runs
  bool output_stable = true;        ///< the output read again after a delay was bitwise unchanged (D8)
  bool threads_leaked = false;      ///< a thread started by the call was still alive after it (D8)
  std::string thread_detail;
  std::vector<std::string> tampered;///< harness functions replaced / precision flags changed (D13, H40)
  bool fp64_checked = false;        ///< the output was also compared with a float64 reference
  double fp64_error = 0;            ///< max |out - ref64| (of the worst output tensor)
  double fp64_reference_error = 0;  ///< max |ref - ref64|: the task-dtype reference's own error
  double fp64_scale = 0;            ///< max |ref64|
  double dtype_eps = 0;             ///< machine epsilon of the output dtype
  std::vector<std::string> trivial_passing;  ///< trivial answers that would pass this case (audit)
};

/// Repeated timed calls of one callable (candidate, eager reference or torch.compile reference).
struct TimingRecord {
  std::string method;          ///< "cuda_events" | "monotonic_clock"
  std::vector<double> times_ms;///< one per timed call, in order
  int warmup = 0;              ///< untimed calls before the first timed one
  bool l2_flushed = false;     ///< an L2 flush (>= 2x L2) ran before every timed call, outside the window
  double wall_ms = 0;          ///< supervisor-side wall clock of the whole timed phase
  std::optional<Failure> failure;  ///< timing could not complete (e.g. torch.compile failed)
  // Run-time integrity (issue 4, docs/timing.md).
  bool fresh_inputs = false;   ///< every call got new input values and storage (from its own seed)
  int rounds = 1;              ///< interleaved rounds (candidate, eager, compile, candidate, ...)
  bool l2_persist_reset = false;  ///< persisting-L2 limit set to 0 before each call (D9; GPU)
  int l2_persist_violations = 0;  ///< calls after which the persisting-L2 limit was not 0
  int threads_leaked = 0;      ///< calls after which a thread they started was still alive
  std::string thread_detail;
  std::vector<std::string> tampered;  ///< harness functions replaced / precision flags changed
  /// Processes of the candidate other than its worker that held the GPU (a /dev/nvidia* file
  /// open) while the reference measured, one line each ("pid 123 (python3) holds /dev/nvidia0");
  /// on a CPU run the worker itself counts too. Found by the supervisor (runner::foreign_gpu_holders).
  std::vector<std::string> foreign_gpu_processes;
  std::map<std::string, std::string> precision_flags;  ///< the process's precision flags (H40)
  std::vector<CaseRecord> rechecks;  ///< timed outputs rechecked by the reference (D3); index = call
  int wall_check_calls = 0;    ///< synchronised calls timed by the supervisor's wall clock
  double wall_check_ms = 0;    ///< their wall clock, the request's own round trip subtracted
  /// Host time (ms) spent inside those calls (perf_counter around each call, measured by the
  /// worker: a diagnostic, never a bound): close to wall_check_ms when the call is host-bound.
  double wall_check_host_ms = 0;
  /// CPU device: the resolution of the wall check (ms): the median change between successive
  /// calibrations of the reference (runner::WallCheckSeries::resolution). When the calls' time is not above twice it, wall_check_ms
  /// is never below it (docs/timing.md, "Wall-clock floor"); 0 on the GPU.
  double wall_check_spread_ms = 0;
  /// CPU device: a pessimistic figure for the same N calls (ms): the largest paired difference
  /// of a timed request and its neighbouring calibrations, at least twice the resolution
  /// (runner::WallCheckSeries::upper). The judge takes it instead of wall_check_ms when the
  /// candidate's timer reads far below the wall check and eager's side of the check is missing
  /// (else the like-for-like rule: docs/timing.md); 0 on the GPU.
  double wall_check_upper_ms = 0;
  /// CPU device: where the candidate's CPU time in the wall check comes from: "cgroup" (a control
  /// group holding all its processes, exited ones included: runner::CpuGroup) or "proc" (the sum
  /// over the processes /proc shows at the request's start and end, and reaped children), or
  /// "partial" (a group some requests could not read: those have no CPU figure, and the check
  /// keeps the wall clock); "" on the GPU.
  std::string wall_check_cpu_source;
  /// CPU device, /proc accounting only: processes of the candidate that ignored SIGCHLD during
  /// the timed wall-clock requests, one line each (runner::unreaping_processes): their
  /// children's CPU time would be counted nowhere. The judge makes it contract_violation.
  std::vector<std::string> unreaping_processes;
  /// The clock wall_check_ms comes from: "wall" (the supervisor's wall clock) or, on the CPU,
  /// "busy" (the worker's wall clock minus its time waiting for a CPU, /proc/<pid>/schedstat,
  /// plus the CPU time of the candidate's other processes, against the reference's wall clock
  /// minus its wait), used when every reading worked.
  std::string wall_check_clock = "wall";
  /// CPU device: CPU time (ms, user + system, from /proc) of all the candidate's processes
  /// (worker, its children, reaped children, orphans under the zygote) during the timed
  /// wall-clock requests, their wall clock (ms), and the cores the baselines may use
  /// (KGYM_CPU_THREADS). A forked helper computing part of each call in parallel shows as CPU
  /// time above the wall clock (runner::tree_cpu_ms); 0 when not measured.
  double wall_check_cpu_ms = 0;
  double wall_check_cpu_wall_ms = 0;
  int wall_check_cores = 0;
  /// The wall-clock check's requests as the supervisor timed them (ms, whole requests, in the
  /// order taken; runner::WallCheckSeries): the reference's calibrations, the candidate's own
  /// calibrations (GPU) and its timed requests with the calls. A baseline's record holds its own
  /// requests with the calls (GPU, where its floor could bind) in wall_check_timed_ms. A
  /// diagnostic of the floor's noise; the judge reads only wall_check_ms.
  std::vector<double> wall_check_calibrations_ms, wall_check_own_calibrations_ms, wall_check_timed_ms;
  /// CPU device: the wall check's paired differences (ms, all N calls each): request k of this
  /// side minus the mean of the reference's calibrations just before and after it, on the clock
  /// the check used (runner::WallCheckSeries::differences). The candidate and each baseline get
  /// their requests between the same calibrations, so element k of each side pairs with element
  /// k of the other (the judge's like-for-like wall basis and its interval,
  /// kgym::paired_ratio_interval). Set by the supervisor only; empty when not measured.
  std::vector<double> wall_check_paired_ms;
  /// CPU device: per request k of this side, what its paired difference was moved by for the
  /// request's own work outside the calls (ms): this side's process's CPU time in it (making the
  /// input sets, committing to the arena copies; wallcheck.wall_calls' ``harness``), bounded to
  /// within runner::kHarnessBound of the calibrations' around it, minus theirs. Positive: this
  /// process did that work slower than the reference's calibrations did, and the difference was
  /// not charged to its calls (runner::without_harness_work). Empty when not applied. Set by the
  /// supervisor only.
  std::vector<double> wall_check_harness_ms;
  /// GPU device: the CPU the candidate's and the reference's workers ran on, both, while this
  /// evaluation timed (runner::PinnedToCpu; KGYM_TIMING_CPU), or -1 when they were not pinned.
  /// Set by the supervisor only.
  int timing_cpu = -1;
  /// A baseline's record: the process its calls were timed in: "twin" (CPU: a worker started for
  /// this evaluation on the candidate's own path, runner::start_baseline_twin), "reference" (the
  /// long-lived reference worker), "twin+reference" (the twin failed mid-run and the reference
  /// timed the later rounds), "" for the candidate's record. Set by the supervisor only.
  std::string timed_in;
  /// Timed calls of each interleaved round, in order (summing to times_ms' size): the clusters of
  /// the speedup's bootstrap (kgym::ratio_of_medians_interval). Set by the supervisor.
  std::vector<int> round_calls;
  /// Median event time (ms) of empty timing windows in the same process (start event,
  /// device-wide sync, end event; GPU only, else 0): the fixed cost the device-wide sync adds to
  /// every timed call. The judge subtracts the trusted reference worker's value (docs/timing.md).
  double window_overhead_ms = 0;
  /// Spot check of every timed output (docs/timing.md, "Spot check"): the candidate's timed calls
  /// whose output the reference compared at secret sampled elements with eager's output on the
  /// same inputs. Set by the supervisor from the reference's reply only (never from the
  /// candidate's): the indices (into times_ms) of calls with a sampled element out of the spot
  /// tolerance, the first such call's description, and whether the candidate's process returned
  /// no readable samples (a contract violation).
  int spot_checked_calls = 0;
  std::vector<int> spot_failed_calls;
  std::string spot_detail;
  bool spot_unreadable = false;
};

/// The GPU kernels of a few traced calls of the candidate (torch.profiler / CUPTI; D7, D14).
struct LaunchRecord {
  bool traced = false;
  std::string skipped;         ///< why there is no trace ("cpu: no kernel trace", a profiler error)
  int calls = 0;               ///< traced calls
  double own_ms = 0;           ///< GPU time in the candidate's own kernels (not library/ATen)
  double library_ms = 0;       ///< GPU time in library or ATen compute kernels (cuBLAS, cuDNN, ATen, Inductor)
  double glue_ms = 0;          ///< ATen fills/copies/layout kernels
  double memory_ms = 0;        ///< memcpy/memset activities
  int outside_window = 0;      ///< kernels that started or ended outside every call's window
  int graph_launches = 0;      ///< cudaGraphLaunch calls seen
  std::vector<int> streams, devices;
  std::vector<nlohmann::json> kernels;  ///< distinct kernels: name, category, stream, call, start/end_us
  // CPU (strict and hybrid profiles): the ATen ops the traced calls dispatched (torch.profiler,
  // CPU activities; traced stays false since there are no kernels).
  bool aten_traced = false;
  int aten_compute_calls = 0;  ///< ATen ops other than allocation/view/copy/metadata glue
  int aten_glue_calls = 0;     ///< empty*, view/reshape/permute/expand/as_strided, copy_, clone, fill_ ...
  std::vector<nlohmann::json> aten_ops;  ///< distinct ops: name, category (compute|glue), count
  /// The op watch (docs/timing.md, "Op watch"): "on" when kgym's global RecordFunction callback
  /// counted the ops of every timed, wall-clock and traced call on every thread (the aten_*
  /// fields then hold them, on the GPU too), else why it was not available ("" before it existed).
  std::string op_watch;
};

/// The physics floor of one call of the task (D11): least bytes over measured bandwidth, FLOPs
/// (torch.utils.flop_counter on the reference) over measured tensor-core peak.
struct RooflineRecord {
  std::int64_t bytes = 0;      ///< inputs + outputs of one call
  double flops = 0;
  double bandwidth_gbps = 0, peak_tflops = 0;
  double floor_ms = 0;         ///< max(bytes / bandwidth, flops / peak)
  bool applied = false;        ///< false on CPU (no cache flush) or when unavailable
  std::string note;
};

/// Per-evaluation audit of the task's cases (D12): trivial answers and the other-shape case.
struct TaskAudit {
  std::vector<std::string> trivial_passing;    ///< trivial answers passing every regular case
  std::vector<std::string> strengthened_with;  ///< transforms of the cases added because of that
  std::vector<std::string> still_passing;      ///< trivial answers passing those too (weak task)
  std::string other_shape;                     ///< "ran: <sizes>" or "skipped: <reason>"
};

/// One link-check finding (policy::check_linked_symbols, or a loaded extension deleted or replaced).
struct LinkFinding {
  std::string rule_id;            ///< a policy rule id, e.g. "dynamic_code"
  std::string severity = "reject";///< "reject" | "warn", the rule's severity in the profile
  std::string message;            ///< for the model: the extension, the symbols, what to do
};

/// Gate 2's link check on what the candidate built: the ELF shared objects in its own folders
/// (load_inline's build folder and its working folder) and those its process had mapped from
/// there, checked after the candidate loaded and again before the verdict (runner::candidate_objects,
/// policy::check_linked_symbols).
struct LinkRecord {
  bool checked = false;                 ///< false: not run (`note` says why)
  std::string folder;                   ///< load_inline's build folder (`kgym check --built FOLDER` checks it again)
  std::vector<std::string> extensions;  ///< file names of the objects checked, "(loaded)" when mapped
  std::vector<LinkFinding> findings;
  std::string note;                     ///< e.g. nm missing, or the memory map unreadable
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
  std::optional<LaunchRecord> launch; ///< kernel trace of the candidate (GPU)
  std::optional<RooflineRecord> roofline;
  std::optional<LinkRecord> link;     ///< gate 2's link check (absent when the candidate did not load)
  TaskAudit audit;
  /// Supervisor wall clock (ms) of each phase that holds the device, for the cost of the
  /// defences (bench/plain_timing.py): `load_task`, `cases` (regular cases incl. poisoned reruns,
  /// float64 cross-check and trivial-answer audit), `other_shape`, `candidate_timing`,
  /// `rechecks`, `eager_timing`, `compile_timing` (includes torch.compile's first compile),
  /// `wall_check`, `profiler_start`, `trace`. A phase that did not run is absent. Keys with a "/"
  /// are parts of the phase before it, already counted there: `cases/make`, `cases/run_first`
  /// (the first call, with any JIT build), `cases/run`, `cases/compare`, `cases/inputs_fallback`,
  /// the same under `other_shape/`, `wall_check/calibration` (the reference's calibration
  /// requests, all of them), `wall_check/timed` (the candidate's committed timed requests, all of
  /// them) and `wall_check/rechecks`.
  std::map<std::string, double> phase_ms;
};

void to_json(nlohmann::json& j, const Failure& v);
void from_json(const nlohmann::json& j, Failure& v);
void to_json(nlohmann::json& j, const LoadRecord& v);
void from_json(const nlohmann::json& j, LoadRecord& v);
void to_json(nlohmann::json& j, const CaseRecord& v);
void from_json(const nlohmann::json& j, CaseRecord& v);
void to_json(nlohmann::json& j, const TimingRecord& v);
void from_json(const nlohmann::json& j, TimingRecord& v);
void to_json(nlohmann::json& j, const LinkFinding& v);
void from_json(const nlohmann::json& j, LinkFinding& v);
void to_json(nlohmann::json& j, const LinkRecord& v);
void from_json(const nlohmann::json& j, LinkRecord& v);
void to_json(nlohmann::json& j, const LaunchRecord& v);
void from_json(const nlohmann::json& j, LaunchRecord& v);
void to_json(nlohmann::json& j, const RooflineRecord& v);
void from_json(const nlohmann::json& j, RooflineRecord& v);
void to_json(nlohmann::json& j, const TaskAudit& v);
void from_json(const nlohmann::json& j, TaskAudit& v);
void to_json(nlohmann::json& j, const Measurements& v);
void from_json(const nlohmann::json& j, Measurements& v);

}  // namespace kgym
