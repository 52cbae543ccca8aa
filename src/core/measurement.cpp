#include "kgym/measurement.hpp"

namespace kgym {
namespace {

// One field list per record, read by both directions (issue 27: each list was written twice by
// hand). A field is written under its own name; a std::optional one only when set. Reading
// leaves a field at its default when its key is missing or null (older records, partial replies).
template <class T>
void put(nlohmann::json& j, const char* key, const T& v) {
  j[key] = v;
}
template <class T>
void put(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}
template <class T>
void get(const nlohmann::json& j, const char* key, T& out) {
  if (auto it = j.find(key); it != j.end() && !it->is_null()) it->get_to(out);
}
template <class T>
void get(const nlohmann::json& j, const char* key, std::optional<T>& out) {
  if (auto it = j.find(key); it != j.end() && !it->is_null()) out = it->get<T>();
}

// clang-format off
#define KGYM_FAILURE_FIELDS(X) X(stage) X(type) X(message) X(traceback) X(signal) X(exit_code)
#define KGYM_LOAD_FIELDS(X) X(ok) X(parsed) X(model_new_defined) X(failure) X(parse_ms) X(import_ms) \
  X(init_ms) X(tampered)
#define KGYM_CASE_FIELDS(X) X(index) X(seed) X(transform) X(failure) X(call_ms) X(output_plain_tensor) \
  X(output_type) X(structure_matches) X(dtype_matches) X(shape_matches) X(device_matches) X(detail) \
  X(inputs_unchanged) X(output_aliases_input) X(numel) X(max_abs_error) X(mean_abs_error) \
  X(max_rel_error) X(tolerance_ratio) X(atol) X(rtol) X(nonfinite_mismatches) X(mismatches) \
  X(mismatches_outside_fp64) X(fp64_atol_ratio) X(first_mismatch_index) X(reference_finite) X(compared) \
  X(shape_variant) X(inputs_regenerated) X(poisoned) X(reruns) X(rerun_tolerance_ratio) \
  X(rerun_nonfinite_mismatches) X(output_stable) X(threads_leaked) X(thread_detail) X(tampered) \
  X(fp64_checked) X(fp64_error) X(fp64_reference_error) X(fp64_scale) X(dtype_eps) X(trivial_passing)
#define KGYM_TIMING_FIELDS(X) X(method) X(times_ms) X(warmup) X(l2_flushed) X(wall_ms) X(failure) \
  X(fresh_inputs) X(rounds) X(l2_persist_reset) X(l2_persist_violations) X(threads_leaked) \
  X(thread_detail) X(tampered) X(foreign_gpu_processes) X(precision_flags) X(rechecks) \
  X(wall_check_calls) X(wall_check_ms) X(wall_check_host_ms) X(wall_check_spread_ms) \
  X(wall_check_upper_ms) X(wall_check_cpu_source) X(unreaping_processes) X(wall_check_clock) \
  X(wall_check_cpu_ms) X(wall_check_cpu_wall_ms) X(wall_check_cores) X(wall_check_calibrations_ms) \
  X(wall_check_own_calibrations_ms) X(wall_check_timed_ms) X(wall_check_paired_ms) \
  X(wall_check_harness_ms) X(timing_cpu) X(timed_in) X(round_calls) X(window_overhead_ms) X(spot_checked_calls) \
  X(spot_failed_calls) X(spot_detail) X(spot_unreadable)
#define KGYM_LINK_FINDING_FIELDS(X) X(rule_id) X(severity) X(message)
#define KGYM_LINK_FIELDS(X) X(checked) X(folder) X(extensions) X(findings) X(note)
#define KGYM_ROOFLINE_FIELDS(X) X(bytes) X(flops) X(bandwidth_gbps) X(peak_tflops) X(floor_ms) \
  X(applied) X(note)
#define KGYM_AUDIT_FIELDS(X) X(trivial_passing) X(strengthened_with) X(still_passing) X(other_shape)
// clang-format on
#define KGYM_PUT(f) put(j, #f, v.f);
#define KGYM_GET(f) get(j, #f, v.f);
#define KGYM_JSON(Type, LIST)                                                          \
  void to_json_fields(nlohmann::json& j, const Type& v) { LIST(KGYM_PUT) }             \
  void from_json_fields(const nlohmann::json& j, Type& v) { LIST(KGYM_GET) }

KGYM_JSON(Failure, KGYM_FAILURE_FIELDS)
KGYM_JSON(LoadRecord, KGYM_LOAD_FIELDS)
KGYM_JSON(CaseRecord, KGYM_CASE_FIELDS)
KGYM_JSON(TimingRecord, KGYM_TIMING_FIELDS)
KGYM_JSON(LinkFinding, KGYM_LINK_FINDING_FIELDS)
KGYM_JSON(LinkRecord, KGYM_LINK_FIELDS)
KGYM_JSON(RooflineRecord, KGYM_ROOFLINE_FIELDS)
KGYM_JSON(TaskAudit, KGYM_AUDIT_FIELDS)

}  // namespace

#define KGYM_PUBLIC_JSON(Type)                                                                 \
  void to_json(nlohmann::json& j, const Type& v) {                                             \
    j = nlohmann::json::object();                                                              \
    to_json_fields(j, v);                                                                      \
  }                                                                                            \
  void from_json(const nlohmann::json& j, Type& v) { from_json_fields(j, v); }

KGYM_PUBLIC_JSON(Failure)
KGYM_PUBLIC_JSON(LoadRecord)
KGYM_PUBLIC_JSON(CaseRecord)
KGYM_PUBLIC_JSON(TimingRecord)
KGYM_PUBLIC_JSON(LinkFinding)
KGYM_PUBLIC_JSON(LinkRecord)
KGYM_PUBLIC_JSON(RooflineRecord)
KGYM_PUBLIC_JSON(TaskAudit)

// Conditional fields (the ATen trace's, the op watch's): written only when taken.
void to_json(nlohmann::json& j, const LaunchRecord& v) {
  j = {{"traced", v.traced}, {"skipped", v.skipped}, {"calls", v.calls}, {"own_ms", v.own_ms},
       {"library_ms", v.library_ms}, {"glue_ms", v.glue_ms}, {"memory_ms", v.memory_ms},
       {"outside_window", v.outside_window}, {"graph_launches", v.graph_launches},
       {"streams", v.streams}, {"devices", v.devices}, {"kernels", v.kernels}};
  if (v.aten_traced) {
    j["aten_traced"] = true;
    j["aten_compute_calls"] = v.aten_compute_calls;
    j["aten_glue_calls"] = v.aten_glue_calls;
    j["aten_ops"] = v.aten_ops;
  }
  if (!v.op_watch.empty()) j["op_watch"] = v.op_watch;
}
void from_json(const nlohmann::json& j, LaunchRecord& v) {
  get(j, "traced", v.traced);
  get(j, "skipped", v.skipped);
  get(j, "calls", v.calls);
  get(j, "own_ms", v.own_ms);
  get(j, "library_ms", v.library_ms);
  get(j, "glue_ms", v.glue_ms);
  get(j, "memory_ms", v.memory_ms);
  get(j, "outside_window", v.outside_window);
  get(j, "graph_launches", v.graph_launches);
  get(j, "streams", v.streams);
  get(j, "devices", v.devices);
  if (auto it = j.find("kernels"); it != j.end() && it->is_array()) v.kernels = it->get<std::vector<nlohmann::json>>();
  get(j, "aten_traced", v.aten_traced);
  get(j, "aten_compute_calls", v.aten_compute_calls);
  get(j, "aten_glue_calls", v.aten_glue_calls);
  if (auto it = j.find("aten_ops"); it != j.end() && it->is_array()) v.aten_ops = it->get<std::vector<nlohmann::json>>();
  get(j, "op_watch", v.op_watch);
}

void to_json(nlohmann::json& j, const Measurements& v) {
  j = {{"load", v.load}, {"cases", v.cases}, {"init_seed", v.init_seed}, {"audit", v.audit}};
  put(j, "launch", v.launch);
  put(j, "roofline", v.roofline);
  put(j, "link", v.link);
  put(j, "task_failure", v.task_failure);
  put(j, "candidate_timing", v.candidate_timing);
  put(j, "eager_timing", v.eager_timing);
  put(j, "compile_timing", v.compile_timing);
  put(j, "crash", v.crash);
  put(j, "timed_out_stage", v.timed_out_stage);
  if (!v.phase_ms.empty()) j["phase_ms"] = v.phase_ms;
}
void from_json(const nlohmann::json& j, Measurements& v) {
  get(j, "task_failure", v.task_failure);
  get(j, "load", v.load);
  get(j, "cases", v.cases);
  get(j, "candidate_timing", v.candidate_timing);
  get(j, "eager_timing", v.eager_timing);
  get(j, "compile_timing", v.compile_timing);
  get(j, "crash", v.crash);
  get(j, "timed_out_stage", v.timed_out_stage);
  get(j, "init_seed", v.init_seed);
  get(j, "launch", v.launch);
  get(j, "roofline", v.roofline);
  get(j, "link", v.link);
  get(j, "audit", v.audit);
  get(j, "phase_ms", v.phase_ms);
}

}  // namespace kgym
