#pragma once
// The worker protocol: one struct per request the supervisor sends to a worker (the reference
// worker, a candidate's worker, the zygote) and per reply it reads, each with the field names of
// the wire. Python mirrors every struct in python/kgym_worker/protocol.py (a dataclass of the
// same name and fields); tests/unit/protocol_test.cpp checks that the two agree field for field
// (protocol::schema() against protocol.schema()).
//
// Each struct lists its fields once (`fields()`, a tuple of name, member and presence), read by
// both directions (to_json / from_json below) and by schema(). A request is written with its
// `op` first; a std::optional field only when set (Presence::nullable: null when not set). A
// reply struct lists the fields the supervisor reads; a worker may send others (diagnostics the
// supervisor ignores, such as the reference's "precision_flags").
//
// How a reply's field is read is its presence (the engine turns the json exceptions into
// outcomes: a candidate's reply of the wrong shape is its breach of the protocol, engine.cpp):
//  - required: it must be there, of its type (a json exception otherwise);
//  - defaulted: absent, the member keeps its default; present of another type, a json exception;
//  - lenient: absent or of another type, the member keeps its default (a field of a reply from
//    the candidate's process, which can write its own replies: red team rt14). A lenient list
//    keeps the elements of its type and drops the others; a lenient struct must be an object.
//  - flattened: the fields of a record (measurement.hpp) at the top of the reply, kept as they
//    came (Flattened) and read by the record's own serializer where the engine asks.
// Internal to the runner component.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgym/measurement.hpp"
#include "protocol_fields.hpp"

namespace kgym::runner::protocol {

// ---------------------------------------------------------------------------------------------
// Parts of messages.

/// The timing options as a worker's request carries them (TimingOptions' per-round share).
struct TimingSettings {
  static constexpr std::string_view kName = "TimingSettings";
  int warmup = 0;             ///< untimed calls before timing
  int min_calls = 0;          ///< at least this many timed calls
  int max_calls = 0;          ///< at most this many timed calls
  double budget_ms = 0;       ///< ms: stop adding calls past this (after min_calls)
  double target_spread = 0;   ///< stop early once IQR / median is below this
  bool l2_flush = false;      ///< flush the L2 before each timed call (GPU)
  static constexpr auto fields() {
    return std::tuple{field("warmup", &TimingSettings::warmup, required),
                      field("min_calls", &TimingSettings::min_calls, required),
                      field("max_calls", &TimingSettings::max_calls, required),
                      field("budget_ms", &TimingSettings::budget_ms, required),
                      field("target_spread", &TimingSettings::target_spread, required),
                      field("l2_flush", &TimingSettings::l2_flush, required)};
  }
};

/// A round's spot check (docs/timing.md, "Spot check"): the positions come from `seed`.
struct SpotRequest {
  static constexpr std::string_view kName = "SpotRequest";
  std::uint64_t seed = 0;   ///< the seed of the sampled positions
  int k = 0;                ///< samples per output
  std::optional<Json> candidate{};  ///< the candidate's samples (its time reply's "spot"; may be null)
  std::optional<int> calls{};       ///< the candidate's timed calls in the round
  std::optional<std::vector<int>> trusted{};  ///< the round's calls whose recheck held
  static constexpr auto fields() {
    return std::tuple{field("seed", &SpotRequest::seed, required), field("k", &SpotRequest::k, required),
                      field("candidate", &SpotRequest::candidate), field("calls", &SpotRequest::calls),
                      field("trusted", &SpotRequest::trusted)};
  }
};

/// One output for the reference to recheck against inputs regenerated from `seed`.
struct RecheckItem {
  static constexpr std::string_view kName = "RecheckItem";
  int index = 0;             ///< the call's index in its request (or round)
  std::uint64_t seed = 0;    ///< the call's input seed
  Json output{};               ///< the output's tensor metadata (bytes in the blobs)
  std::optional<Json> fingerprint{};  ///< the committed fingerprint (the wall check's outputs)
  static constexpr auto fields() {
    return std::tuple{field("index", &RecheckItem::index, required), field("seed", &RecheckItem::seed, required),
                      field("output", &RecheckItem::output, required), field("fingerprint", &RecheckItem::fingerprint)};
  }
};

/// The CPU wall check's shared input file as the candidate maps it (wallcheck.SharedInputs).
struct SharedInputsMap {
  static constexpr std::string_view kName = "SharedInputsMap";
  std::string path{};          ///< the file
  std::int64_t bytes = 0;    ///< its size in bytes (past 2 GiB at full size: 64 bits)
  static constexpr auto fields() {
    return std::tuple{field("path", &SharedInputsMap::path, required), field("bytes", &SharedInputsMap::bytes, required)};
  }
};

/// A worker's resource limits.
struct SpawnLimits {
  static constexpr std::string_view kName = "SpawnLimits";
  long long address_space_bytes = 0;  ///< RLIMIT_AS in bytes, 0 = none
  static constexpr auto fields() {
    return std::tuple{field("address_space_bytes", &SpawnLimits::address_space_bytes, required)};
  }
};

// ---------------------------------------------------------------------------------------------
// Requests to the reference worker (reference.py's ReferenceWorker; its reply's envelope is
// ReferenceStatus).

/// The worker's environment (torch, device, driver): the reply is recorded whole.
struct InfoRequest {
  static constexpr std::string_view kName = "InfoRequest", kOp = "info";
  static constexpr auto fields() { return std::tuple{}; }
};

/// Loads the task's source under `key` (scaled, the model constructed under `init_seed`).
struct LoadTaskRequest {
  static constexpr std::string_view kName = "LoadTaskRequest", kOp = "load_task";
  std::string key{};           ///< the task's name in this worker
  std::string source{};        ///< the task module's Python source
  std::string task_id{};       ///< the task's id (messages)
  double scale = 1;          ///< the size scale
  std::uint64_t init_seed = 0;  ///< the seed the model is constructed under
  static constexpr auto fields() {
    return std::tuple{field("key", &LoadTaskRequest::key, required), field("source", &LoadTaskRequest::source, required),
                      field("task_id", &LoadTaskRequest::task_id, required),
                      field("scale", &LoadTaskRequest::scale, required),
                      field("init_seed", &LoadTaskRequest::init_seed, required)};
  }
};

/// Whether a task runs at `scale` (kgym tasks audit), without keeping it.
struct ProbeTaskRequest {
  static constexpr std::string_view kName = "ProbeTaskRequest", kOp = "probe_task";
  std::string source{};        ///< the task module's Python source
  std::string task_id{};       ///< the task's id
  double scale = 1;          ///< the size scale
  static constexpr auto fields() {
    return std::tuple{field("source", &ProbeTaskRequest::source, required),
                      field("task_id", &ProbeTaskRequest::task_id, required),
                      field("scale", &ProbeTaskRequest::scale, required)};
  }
};

/// Drops the task `key`.
struct DropTaskRequest {
  static constexpr std::string_view kName = "DropTaskRequest", kOp = "drop_task";
  std::string key{};
  static constexpr auto fields() { return std::tuple{field("key", &DropTaskRequest::key, required)}; }
};

/// Makes correctness case `index`'s inputs (from a fresh seed) and keeps them.
struct MakeCaseRequest {
  static constexpr std::string_view kName = "MakeCaseRequest", kOp = "make_case";
  std::string key{};
  int index = 0;
  std::string transform{};             ///< the inputs' value distribution ("nominal", "scale100", ...)
  std::optional<std::string> shape{};  ///< "other": the task's size constants changed
  static constexpr auto fields() {
    return std::tuple{field("key", &MakeCaseRequest::key, required), field("index", &MakeCaseRequest::index, required),
                      field("transform", &MakeCaseRequest::transform, required),
                      field("shape", &MakeCaseRequest::shape)};
  }
};

/// Case `index`'s inputs as bytes (a candidate worker that could not regenerate them).
struct CaseInputsRequest {
  static constexpr std::string_view kName = "CaseInputsRequest", kOp = "case_inputs";
  std::string key{};
  int index = 0;
  static constexpr auto fields() {
    return std::tuple{field("key", &CaseInputsRequest::key, required),
                      field("index", &CaseInputsRequest::index, required)};
  }
};

/// Compares the candidate's output of case `index` (bytes in the blobs) with the reference's.
struct CompareRequest {
  static constexpr std::string_view kName = "CompareRequest", kOp = "compare";
  std::string key{};
  int index = 0;
  Json output{};               ///< the candidate's output metadata
  Json tolerances{};           ///< per dtype, [atol, rtol]
  bool audit = false;        ///< also which trivial answers would pass
  bool done = false;         ///< the case is done: the reference drops its inputs
  static constexpr auto fields() {
    return std::tuple{field("key", &CompareRequest::key, required), field("index", &CompareRequest::index, required),
                      field("output", &CompareRequest::output, required),
                      field("tolerances", &CompareRequest::tolerances, required),
                      field("audit", &CompareRequest::audit, required), field("done", &CompareRequest::done, required)};
  }
};

/// Compares each item's output with the task on inputs regenerated from its seed.
struct RecheckRequest {
  static constexpr std::string_view kName = "RecheckRequest", kOp = "recheck";
  std::string key{};
  std::vector<RecheckItem> items{};
  Json tolerances{};           ///< per dtype, [atol, rtol]
  static constexpr auto fields() {
    return std::tuple{field("key", &RecheckRequest::key, required), field("items", &RecheckRequest::items, required),
                      field("tolerances", &RecheckRequest::tolerances, required)};
  }
};

/// Times a baseline (`kind` "eager" or "compile") on the round's seeds.
struct ReferenceTimeRequest {
  static constexpr std::string_view kName = "ReferenceTimeRequest", kOp = "time";
  std::string key{};
  std::string kind{};                 ///< "eager" | "compile"
  TimingSettings options{};
  std::vector<std::uint64_t> seeds{};  ///< one per call (warmup first)
  /// The round's recheck positions (the candidate's `keep`): the baseline's calls there copy
  /// their inputs before and their outputs after, as the candidate's do, and the copies are dropped
  std::vector<int> keep{};
  double wall_target_ms = 0;        ///< ms: the wall-clock loop's target length
  bool own_floor = false;           ///< run the baseline's own wall-clock loop (GPU)
  std::optional<SpotRequest> spot{};  ///< eager: the spot check's samples (and the candidate's)
  std::optional<Json> tolerances{};   ///< with the candidate's samples: per dtype, [atol, rtol]
  static constexpr auto fields() {
    return std::tuple{field("key", &ReferenceTimeRequest::key, required),
                      field("kind", &ReferenceTimeRequest::kind, required),
                      field("options", &ReferenceTimeRequest::options, required),
                      field("seeds", &ReferenceTimeRequest::seeds, required),
                      field("keep", &ReferenceTimeRequest::keep, required),
                      field("wall_target_ms", &ReferenceTimeRequest::wall_target_ms, required),
                      field("own_floor", &ReferenceTimeRequest::own_floor, required),
                      field("spot", &ReferenceTimeRequest::spot),
                      field("tolerances", &ReferenceTimeRequest::tolerances)};
  }
};

/// A baselines-first round's spot check: eager's outputs on the round's seeds against the
/// candidate's samples, untimed.
struct SpotCheckRequest {
  static constexpr std::string_view kName = "SpotCheckRequest", kOp = "spot_check";
  std::string key{};
  std::vector<std::uint64_t> seeds{};
  int warmup = 0;            ///< untimed calls before the timed ones in `seeds`
  SpotRequest spot{};
  Json tolerances{};           ///< per dtype, [atol, rtol]
  static constexpr auto fields() {
    return std::tuple{field("key", &SpotCheckRequest::key, required), field("seeds", &SpotCheckRequest::seeds, required),
                      field("warmup", &SpotCheckRequest::warmup, required),
                      field("spot", &SpotCheckRequest::spot, required),
                      field("tolerances", &SpotCheckRequest::tolerances, required)};
  }
};

/// CPU wall check: writes `n` input sets (seed + i) into the shared file.
struct WallInputsRequest {
  static constexpr std::string_view kName = "WallInputsRequest", kOp = "wall_inputs";
  std::string key{};
  int n = 0;
  std::uint64_t seed = 0;
  static constexpr auto fields() {
    return std::tuple{field("key", &WallInputsRequest::key, required), field("n", &WallInputsRequest::n, required),
                      field("seed", &WallInputsRequest::seed, required)};
  }
};

/// A full garbage collection and an idle device before a calibration (with the output arena
/// for `reserve_n` outputs of `reserve_bytes`), or the arena released.
struct SettleRequest {
  static constexpr std::string_view kName = "SettleRequest", kOp = "settle";
  std::optional<int> reserve_n{};
  std::optional<double> reserve_bytes{};  ///< bytes per output
  std::optional<bool> release{};          ///< release the arena
  static constexpr auto fields() {
    return std::tuple{field("reserve_n", &SettleRequest::reserve_n), field("reserve_bytes", &SettleRequest::reserve_bytes),
                      field("release", &SettleRequest::release)};
  }
};

/// The candidate's committed wall request without its calls (or with a baseline's, `call`).
struct WallCalibrationRequest {
  static constexpr std::string_view kName = "WallCalibrationRequest", kOp = "wall_calibration";
  std::string key{};
  int n = 0;                       ///< input sets
  std::uint64_t seed = 0;          ///< the first set's seed
  bool sync_each = false;          ///< synchronise after each set
  std::optional<bool> commit{};      ///< commit to each output
  std::optional<bool> shared{};      ///< the sets come from the shared file
  std::optional<Json> layout{};      ///< the shared file's layout
  std::optional<std::string> call{};  ///< "eager" | "compile": that baseline's calls
  static constexpr auto fields() {
    return std::tuple{field("key", &WallCalibrationRequest::key, required),
                      field("n", &WallCalibrationRequest::n, required),
                      field("seed", &WallCalibrationRequest::seed, required),
                      field("sync_each", &WallCalibrationRequest::sync_each, required),
                      field("commit", &WallCalibrationRequest::commit), field("shared", &WallCalibrationRequest::shared),
                      field("layout", &WallCalibrationRequest::layout), field("call", &WallCalibrationRequest::call)};
  }
};

// ---------------------------------------------------------------------------------------------
// Requests to a candidate's worker (candidate.py's Executor; a failure of its harness is a reply
// with "harness_error", CandidateStatus).

/// Loads (and builds) the candidate beside the task.
struct LoadRequest {
  static constexpr std::string_view kName = "LoadRequest", kOp = "load";
  std::string format{};            ///< the candidate's format (format.hpp)
  std::string candidate_source{};
  std::string task_source{};
  double scale = 1;
  std::uint64_t init_seed = 0;   ///< the seed both models are constructed under
  static constexpr auto fields() {
    return std::tuple{field("format", &LoadRequest::format, required),
                      field("candidate_source", &LoadRequest::candidate_source, required),
                      field("task_source", &LoadRequest::task_source, required),
                      field("scale", &LoadRequest::scale, required),
                      field("init_seed", &LoadRequest::init_seed, required)};
  }
};

/// Runs correctness case `index` on inputs regenerated (`regenerate`) or sent (`inputs`).
struct RunCaseRequest {
  static constexpr std::string_view kName = "RunCaseRequest", kOp = "run_case";
  int index = 0;
  std::optional<Json> regenerate{};  ///< the reference's make_case "regenerate" (may be null)
  std::optional<Json> inputs{};      ///< the inputs' metadata (bytes in the blobs)
  Json tolerances{};                 ///< per dtype, [atol, rtol]
  bool stability_wait = false;     ///< the 20 ms output-stability wait (D8)
  static constexpr auto fields() {
    return std::tuple{field("index", &RunCaseRequest::index, required), field("regenerate", &RunCaseRequest::regenerate),
                      field("inputs", &RunCaseRequest::inputs),
                      field("tolerances", &RunCaseRequest::tolerances, required),
                      field("stability_wait", &RunCaseRequest::stability_wait, required)};
  }
};

/// Drops the outputs the reference copied (GPU) and returns cached device memory.
struct ReleaseRequest {
  static constexpr std::string_view kName = "ReleaseRequest", kOp = "release";
  static constexpr auto fields() { return std::tuple{}; }
};

/// The candidate's timed calls of one round.
struct CandidateTimeRequest {
  static constexpr std::string_view kName = "CandidateTimeRequest", kOp = "time";
  TimingSettings options{};
  std::vector<std::uint64_t> seeds{};  ///< one per call (warmup first)
  std::vector<int> keep{};             ///< the timed calls whose outputs come back for the recheck
  std::optional<SpotRequest> spot{};   ///< the spot check's samples (null: none)
  bool audit_dispatcher = false;     ///< CPU, last round: compare aten's kernels with the snapshot
  static constexpr auto fields() {
    return std::tuple{field("options", &CandidateTimeRequest::options, required),
                      field("seeds", &CandidateTimeRequest::seeds, required),
                      field("keep", &CandidateTimeRequest::keep, required),
                      field("spot", &CandidateTimeRequest::spot, nullable),
                      field("audit_dispatcher", &CandidateTimeRequest::audit_dispatcher, required)};
  }
};

/// One request of the wall-clock check: `n` calls (or none) on input sets seed + i.
struct WallRequest {
  static constexpr std::string_view kName = "WallRequest", kOp = "wall";
  int n = 0;
  std::uint64_t seed = 0;
  std::optional<bool> calibrate{};        ///< the committed request without the calls (GPU)
  std::optional<bool> call{};             ///< run the calls
  std::optional<bool> sync_each{};        ///< synchronise after each call
  std::optional<bool> commit{};           ///< commit to each output
  std::optional<double> reserve_bytes{};  ///< bytes per output the allocator reserves
  std::optional<int> reserve_n{};         ///< outputs the allocator reserves
  std::optional<SharedInputsMap> map{};   ///< CPU: the shared input file to map
  std::optional<Json> layout{};           ///< CPU: the shared file's layout
  static constexpr auto fields() {
    return std::tuple{field("n", &WallRequest::n, required), field("seed", &WallRequest::seed, required),
                      field("calibrate", &WallRequest::calibrate), field("call", &WallRequest::call),
                      field("sync_each", &WallRequest::sync_each), field("commit", &WallRequest::commit),
                      field("reserve_bytes", &WallRequest::reserve_bytes), field("reserve_n", &WallRequest::reserve_n),
                      field("map", &WallRequest::map), field("layout", &WallRequest::layout)};
  }
};

/// Returns the kept outputs of the last wall request at `indices`.
struct WallOutputRequest {
  static constexpr std::string_view kName = "WallOutputRequest", kOp = "wall_output";
  std::vector<int> indices{};
  static constexpr auto fields() { return std::tuple{field("indices", &WallOutputRequest::indices, required)}; }
};

/// Starts the profiler (GPU, outside the device lock).
struct WarmProfilerRequest {
  static constexpr std::string_view kName = "WarmProfilerRequest", kOp = "warm_profiler";
  static constexpr auto fields() { return std::tuple{}; }
};

/// Traces the kernels (or ops) of a few calls on `seeds`.
struct TraceRequest {
  static constexpr std::string_view kName = "TraceRequest", kOp = "trace";
  std::vector<std::uint64_t> seeds{};
  static constexpr auto fields() { return std::tuple{field("seeds", &TraceRequest::seeds, required)}; }
};

/// Asks a worker (or the zygote) to exit; no reply.
struct ExitRequest {
  static constexpr std::string_view kName = "ExitRequest", kOp = "exit";
  static constexpr auto fields() { return std::tuple{}; }
};

// ---------------------------------------------------------------------------------------------
// Requests to the zygote (zygote.py).

/// Forks a worker; its end of the channel follows as a file descriptor.
struct SpawnRequest {
  static constexpr std::string_view kName = "SpawnRequest", kOp = "spawn";
  std::string role{};     ///< "reference" | "candidate"
  std::string device{};   ///< as the worker sees it ("cpu" or "cuda:0")
  std::string workdir{};
  std::string log{};      ///< the worker's log file
  std::map<std::string, std::string> env{};
  SpawnLimits limits{};
  static constexpr auto fields() {
    return std::tuple{field("role", &SpawnRequest::role, required), field("device", &SpawnRequest::device, required),
                      field("workdir", &SpawnRequest::workdir, required), field("log", &SpawnRequest::log, required),
                      field("env", &SpawnRequest::env, required), field("limits", &SpawnRequest::limits, required)};
  }
};

/// Waits up to `timeout` s for worker `pid` to exit (then kills its group).
struct ReapRequest {
  static constexpr std::string_view kName = "ReapRequest", kOp = "reap";
  int pid = 0;
  double timeout = 0;   ///< s
  static constexpr auto fields() {
    return std::tuple{field("pid", &ReapRequest::pid, required), field("timeout", &ReapRequest::timeout, required)};
  }
};

// ---------------------------------------------------------------------------------------------
// Replies. The reference's are trusted (defaulted fields); a candidate's are read leniently
// where the engine takes a fallback, and strictly where a malformed field is its breach.

/// Every reply of the reference worker: ok, or its error (a task failure).
struct ReferenceStatus {
  static constexpr std::string_view kName = "ReferenceStatus";
  bool ok = false;
  std::string error = "reference worker error";
  std::string traceback{};
  static constexpr auto fields() {
    return std::tuple{field("ok", &ReferenceStatus::ok), field("error", &ReferenceStatus::error),
                      field("traceback", &ReferenceStatus::traceback)};
  }
};

/// Every reply of a candidate's worker: present, "harness_error" says kgym's harness in its
/// process raised (the reply has nothing else).
struct CandidateStatus {
  static constexpr std::string_view kName = "CandidateStatus";
  std::optional<Json> harness_error{};  ///< the exception, as a string (any JSON: the candidate's)
  static constexpr auto fields() { return std::tuple{field("harness_error", &CandidateStatus::harness_error, lenient)}; }
  /// The harness error as said: the string, or the JSON the candidate's process sent instead.
  std::string harness_error_text() const {
    if (!harness_error) return "";
    return harness_error->is_string() ? harness_error->get<std::string>() : harness_error->dump();
  }
};

/// load_task: the scaled constants, the model's parameters and the roofline.
struct LoadTaskReply {
  static constexpr std::string_view kName = "LoadTaskReply";
  Json scaled = Json::object();       ///< the task's constants as scaled
  Json parameters = Json::array();    ///< parameters.py's summary of the model
  std::optional<RooflineRecord> roofline{};
  static constexpr auto fields() {
    return std::tuple{field("scaled", &LoadTaskReply::scaled), field("parameters", &LoadTaskReply::parameters),
                      field("roofline", &LoadTaskReply::roofline)};
  }
};

/// probe_task: whether the task runs at the scale, or why not (probe.load_and_probe).
struct ProbeTaskReply {
  static constexpr std::string_view kName = "ProbeTaskReply";
  bool runs = false;
  std::string reason = "the probe gave no reason";  ///< why it does not run
  Json scaled = Json::object();       ///< the task's constants as scaled
  std::optional<Json> output{};       ///< the output tensors' shapes
  std::int64_t input_elements = 0;    ///< the largest input tensor's elements
  static constexpr auto fields() {
    return std::tuple{field("runs", &ProbeTaskReply::runs), field("reason", &ProbeTaskReply::reason),
                      field("scaled", &ProbeTaskReply::scaled), field("output", &ProbeTaskReply::output),
                      field("input_elements", &ProbeTaskReply::input_elements)};
  }
};

/// make_case: the case's seed and what the candidate regenerates its inputs from, or why the
/// other-shape case is skipped.
struct MakeCaseReply {
  static constexpr std::string_view kName = "MakeCaseReply";
  std::optional<std::string> skipped{};  ///< the other-shape case is skipped: why
  Json sizes = Json::object();         ///< the other shape's constants
  std::uint64_t seed = 0;
  Json regenerate{};                     ///< {seed, transform, sizes, fingerprint}, passed on
  static constexpr auto fields() {
    return std::tuple{field("skipped", &MakeCaseReply::skipped), field("sizes", &MakeCaseReply::sizes),
                      field("seed", &MakeCaseReply::seed), field("regenerate", &MakeCaseReply::regenerate)};
  }
};

/// case_inputs: the inputs' metadata (bytes in the blobs).
struct CaseInputsReply {
  static constexpr std::string_view kName = "CaseInputsReply";
  Json inputs{};
  static constexpr auto fields() { return std::tuple{field("inputs", &CaseInputsReply::inputs)}; }
};

/// compare, and each of recheck's results: the reference's comparison statistics (into a
/// CaseRecord by apply_comparison; errors are absolute, ratios of the tolerance).
struct Comparison {
  static constexpr std::string_view kName = "Comparison";
  std::optional<bool> output_plain_tensor{};
  std::optional<std::string> output_type{};
  bool structure_matches = true, dtype_matches = true, shape_matches = true, device_matches = true;
  std::string detail{};
  std::int64_t numel = 0;
  double max_abs_error = 0, mean_abs_error = 0, max_rel_error = 0, tolerance_ratio = 0, atol = 0, rtol = 0;
  std::int64_t nonfinite_mismatches = 0, mismatches = 0;
  std::int64_t mismatches_outside_fp64 = -1;  ///< -1: not counted
  double fp64_atol_ratio = -1;                ///< -1: not computed
  std::vector<std::int64_t> first_mismatch_index{};
  bool reference_finite = true, fp64_checked = false;
  double fp64_error = 0, fp64_reference_error = 0, fp64_scale = 0, dtype_eps = 0;
  std::vector<std::string> trivial_passing{};  ///< trivial answers that would pass (audit)
  static constexpr auto fields() {
    using C = Comparison;
    return std::tuple{field("output_plain_tensor", &C::output_plain_tensor), field("output_type", &C::output_type),
                      field("structure_matches", &C::structure_matches), field("dtype_matches", &C::dtype_matches),
                      field("shape_matches", &C::shape_matches), field("device_matches", &C::device_matches),
                      field("detail", &C::detail), field("numel", &C::numel),
                      field("max_abs_error", &C::max_abs_error), field("mean_abs_error", &C::mean_abs_error),
                      field("max_rel_error", &C::max_rel_error), field("tolerance_ratio", &C::tolerance_ratio),
                      field("atol", &C::atol), field("rtol", &C::rtol),
                      field("nonfinite_mismatches", &C::nonfinite_mismatches), field("mismatches", &C::mismatches),
                      field("mismatches_outside_fp64", &C::mismatches_outside_fp64),
                      field("fp64_atol_ratio", &C::fp64_atol_ratio),
                      field("first_mismatch_index", &C::first_mismatch_index),
                      field("reference_finite", &C::reference_finite), field("fp64_checked", &C::fp64_checked),
                      field("fp64_error", &C::fp64_error), field("fp64_reference_error", &C::fp64_reference_error),
                      field("fp64_scale", &C::fp64_scale), field("dtype_eps", &C::dtype_eps),
                      field("trivial_passing", &C::trivial_passing)};
  }
};

/// recheck: one comparison per item, in order.
struct RecheckReply {
  static constexpr std::string_view kName = "RecheckReply";
  std::vector<Comparison> results{};
  static constexpr auto fields() { return std::tuple{field("results", &RecheckReply::results)}; }
};

/// One timed call that failed the spot check.
struct SpotFailure {
  static constexpr std::string_view kName = "SpotFailure";
  int index = 0;          ///< the call's index in the round
  std::string detail{};
  static constexpr auto fields() {
    return std::tuple{field("index", &SpotFailure::index, lenient), field("detail", &SpotFailure::detail, lenient)};
  }
};

/// The spot check's result: calls checked, those that failed, or why it could not be read.
struct SpotResult {
  static constexpr std::string_view kName = "SpotResult";
  std::optional<Json> error{};    ///< present: the samples could not be read (a string says why)
  int checked = 0;              ///< timed calls checked
  std::vector<SpotFailure> failed{};
  static constexpr auto fields() {
    return std::tuple{field("error", &SpotResult::error, lenient), field("checked", &SpotResult::checked, lenient),
                      field("failed", &SpotResult::failed, lenient)};
  }
};

/// A baseline's timing record, with eager's spot check of the candidate's calls.
struct BaselineTiming {
  static constexpr std::string_view kName = "BaselineTiming";
  Flattened<TimingRecord> record{};
  std::optional<SpotResult> spot{};
  static constexpr auto fields() {
    return std::tuple{field("*", &BaselineTiming::record, flattened), field("spot", &BaselineTiming::spot, lenient)};
  }
};

/// time (reference): the baseline's timing.
struct ReferenceTimeReply {
  static constexpr std::string_view kName = "ReferenceTimeReply";
  BaselineTiming timing{};
  static constexpr auto fields() { return std::tuple{field("timing", &ReferenceTimeReply::timing, required)}; }
};

/// spot_check's "timing": the spot check alone.
struct SpotTiming {
  static constexpr std::string_view kName = "SpotTiming";
  std::optional<SpotResult> spot{};
  static constexpr auto fields() { return std::tuple{field("spot", &SpotTiming::spot, lenient)}; }
};

/// spot_check: the spot check of a baselines-first round.
struct SpotCheckReply {
  static constexpr std::string_view kName = "SpotCheckReply";
  SpotTiming timing{};
  static constexpr auto fields() { return std::tuple{field("timing", &SpotCheckReply::timing, required)}; }
};

/// wall_inputs: the shared file, or why there is none (`unsupported`).
struct WallInputsReply {
  static constexpr std::string_view kName = "WallInputsReply";
  std::optional<Json> unsupported{};  ///< present: no shared file for these inputs
  std::string path{};
  std::int64_t bytes = 0;           ///< the file's size in bytes
  Json layout{};                      ///< the sets' layout in the file
  static constexpr auto fields() {
    return std::tuple{field("unsupported", &WallInputsReply::unsupported), field("path", &WallInputsReply::path),
                      field("bytes", &WallInputsReply::bytes), field("layout", &WallInputsReply::layout)};
  }
};

/// wall_calibration: the request's own work outside the calls, or no such baseline.
struct WallCalibrationReply {
  static constexpr std::string_view kName = "WallCalibrationReply";
  std::optional<Json> unsupported{};  ///< present: the baseline does not exist
  std::optional<Json> harness_ms{};   ///< ms of the process's CPU time outside the calls (number_or)
  static constexpr auto fields() {
    return std::tuple{field("unsupported", &WallCalibrationReply::unsupported),
                      field("harness_ms", &WallCalibrationReply::harness_ms, lenient)};
  }
};

/// load (candidate): its LoadRecord's fields, and the model's parameters.
struct LoadReply {
  static constexpr std::string_view kName = "LoadReply";
  Flattened<LoadRecord> record{};
  Json parameters = Json::array();  ///< parameters.py's summary of ModelNew
  static constexpr auto fields() {
    return std::tuple{field("*", &LoadReply::record, flattened), field("parameters", &LoadReply::parameters)};
  }
  /// The message of a failure of the task itself that the reply reports ("failure" with stage
  /// "task"); a json exception when "failure" is there but no object.
  std::optional<std::string> task_failure() const {
    const Json& j = record.fields;
    if (j.contains("failure") && j.at("failure").value("stage", "") == "task")
      return j.at("failure").value("message", "");
    return std::nullopt;
  }
};

/// run_case (candidate): its CaseRecord's fields (contract observations, failure), its output,
/// or a request for the inputs as bytes.
struct RunCaseReply {
  static constexpr std::string_view kName = "RunCaseReply";
  Flattened<CaseRecord> record{};
  bool need_inputs = false;          ///< the regenerated inputs did not match their fingerprint
  std::optional<Json> output{};        ///< the output's metadata (bytes in the blobs)
  std::optional<Json> harness_error{};
  static constexpr auto fields() {
    return std::tuple{field("*", &RunCaseReply::record, flattened), field("need_inputs", &RunCaseReply::need_inputs, lenient),
                      field("output", &RunCaseReply::output, lenient),
                      field("harness_error", &RunCaseReply::harness_error, lenient)};
  }
};

/// One output the candidate kept for the recheck.
struct KeptOutput {
  static constexpr std::string_view kName = "KeptOutput";
  int index = -1;                  ///< the timed call's index in the round
  Json output = Json::object();    ///< its metadata (bytes in the blobs)
  static constexpr auto fields() {
    return std::tuple{field("index", &KeptOutput::index, lenient), field("output", &KeptOutput::output)};
  }
};

/// time (candidate): its timing record, the outputs kept for the recheck, its spot samples.
struct CandidateTimeReply {
  static constexpr std::string_view kName = "CandidateTimeReply";
  TimingRecord timing{};
  std::vector<KeptOutput> kept{};
  std::optional<Json> spot{};                ///< its samples, passed to the reference as they are
  static constexpr auto fields() {
    return std::tuple{field("timing", &CandidateTimeReply::timing, required),
                      field("kept", &CandidateTimeReply::kept, lenient), field("spot", &CandidateTimeReply::spot)};
  }
};

/// wall (candidate): the commitments, the harness's findings and its own work's time.
struct WallReply {
  static constexpr std::string_view kName = "WallReply";
  double host_ms = 0;                  ///< ms the calls' host side took
  std::optional<Json> harness_ms{};      ///< ms of CPU time outside the calls (number_or)
  Json fingerprints{};                   ///< one per output (committed)
  std::vector<std::string> tampered{};   ///< what the harness found
  static constexpr auto fields() {
    return std::tuple{field("host_ms", &WallReply::host_ms, lenient), field("harness_ms", &WallReply::harness_ms, lenient),
                      field("fingerprints", &WallReply::fingerprints), field("tampered", &WallReply::tampered, lenient)};
  }
};

/// wall_output (candidate): the outputs asked for (bytes in the blobs).
struct WallOutputReply {
  static constexpr std::string_view kName = "WallOutputReply";
  Json outputs = Json::array();
  std::vector<std::string> tampered{};
  static constexpr auto fields() {
    return std::tuple{field("outputs", &WallOutputReply::outputs), field("tampered", &WallOutputReply::tampered, lenient)};
  }
};

/// warm_profiler (candidate): what the dispatcher's check found.
struct WarmProfilerReply {
  static constexpr std::string_view kName = "WarmProfilerReply";
  std::vector<std::string> tampered{};
  static constexpr auto fields() { return std::tuple{field("tampered", &WarmProfilerReply::tampered, lenient)}; }
};

/// trace (candidate): the launch record.
struct TraceReply {
  static constexpr std::string_view kName = "TraceReply";
  LaunchRecord launch{};
  static constexpr auto fields() { return std::tuple{field("launch", &TraceReply::launch, required)}; }
};

/// The zygote's first message, once it imported torch.
struct ZygoteReady {
  static constexpr std::string_view kName = "ZygoteReady";
  std::string op{};   ///< "ready"
  int pid = 0;      ///< the zygote's pid
  static constexpr auto fields() { return std::tuple{field("op", &ZygoteReady::op), field("pid", &ZygoteReady::pid)}; }
};

/// spawn (zygote): the worker's pid, or why not.
struct SpawnReply {
  static constexpr std::string_view kName = "SpawnReply";
  bool ok = false;
  std::string error = "?";
  std::optional<int> pid{};   ///< the worker's pid (when ok)
  static constexpr auto fields() {
    return std::tuple{field("ok", &SpawnReply::ok), field("error", &SpawnReply::error), field("pid", &SpawnReply::pid)};
  }
};

/// reap (zygote): how the worker ended.
struct ReapReply {
  static constexpr std::string_view kName = "ReapReply";
  int signal = 0;
  int exit_code = 0;
  static constexpr auto fields() {
    return std::tuple{field("signal", &ReapReply::signal), field("exit_code", &ReapReply::exit_code)};
  }
};

/// A reply's number that may be missing, null or of another type (harness_ms, ms): `fallback`
/// unless it is a number.
inline double number_or(const std::optional<Json>& v, double fallback) {
  return v && v->is_number() ? v->get<double>() : fallback;
}

/// Every message above, by name: {"op"?, "fields": {name: {"type", "required"}}}
/// (protocol.py's schema() gives the same for its dataclasses).
nlohmann::json schema();

}  // namespace kgym::runner::protocol
