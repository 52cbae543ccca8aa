#include "kgym/measurement.hpp"

namespace kgym {
namespace {

template <class T>
void get_if(const nlohmann::json& j, const char* key, T& out) {
  if (auto it = j.find(key); it != j.end() && !it->is_null()) it->get_to(out);
}
template <class T>
void get_opt(const nlohmann::json& j, const char* key, std::optional<T>& out) {
  if (auto it = j.find(key); it != j.end() && !it->is_null()) out = it->get<T>();
}
template <class T>
void put_opt(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

}  // namespace

void to_json(nlohmann::json& j, const Failure& v) {
  j = {{"stage", v.stage}, {"type", v.type}, {"message", v.message}, {"traceback", v.traceback},
       {"signal", v.signal}, {"exit_code", v.exit_code}};
}
void from_json(const nlohmann::json& j, Failure& v) {
  get_if(j, "stage", v.stage);
  get_if(j, "type", v.type);
  get_if(j, "message", v.message);
  get_if(j, "traceback", v.traceback);
  get_if(j, "signal", v.signal);
  get_if(j, "exit_code", v.exit_code);
}

void to_json(nlohmann::json& j, const LoadRecord& v) {
  j = {{"ok", v.ok}, {"parsed", v.parsed}, {"model_new_defined", v.model_new_defined},
       {"parse_ms", v.parse_ms}, {"import_ms", v.import_ms}, {"init_ms", v.init_ms},
       {"tampered", v.tampered}};
  put_opt(j, "failure", v.failure);
}
void from_json(const nlohmann::json& j, LoadRecord& v) {
  get_if(j, "ok", v.ok);
  get_if(j, "parsed", v.parsed);
  get_if(j, "model_new_defined", v.model_new_defined);
  get_opt(j, "failure", v.failure);
  get_if(j, "parse_ms", v.parse_ms);
  get_if(j, "import_ms", v.import_ms);
  get_if(j, "init_ms", v.init_ms);
  get_if(j, "tampered", v.tampered);
}

void to_json(nlohmann::json& j, const CaseRecord& v) {
  j = {{"index", v.index},
       {"seed", v.seed},
       {"transform", v.transform},
       {"call_ms", v.call_ms},
       {"output_plain_tensor", v.output_plain_tensor},
       {"output_type", v.output_type},
       {"structure_matches", v.structure_matches},
       {"dtype_matches", v.dtype_matches},
       {"shape_matches", v.shape_matches},
       {"device_matches", v.device_matches},
       {"detail", v.detail},
       {"inputs_unchanged", v.inputs_unchanged},
       {"output_aliases_input", v.output_aliases_input},
       {"numel", v.numel},
       {"max_abs_error", v.max_abs_error},
       {"mean_abs_error", v.mean_abs_error},
       {"max_rel_error", v.max_rel_error},
       {"tolerance_ratio", v.tolerance_ratio},
       {"atol", v.atol},
       {"rtol", v.rtol},
       {"nonfinite_mismatches", v.nonfinite_mismatches},
       {"mismatches", v.mismatches},
       {"mismatches_outside_fp64", v.mismatches_outside_fp64},
       {"fp64_atol_ratio", v.fp64_atol_ratio},
       {"first_mismatch_index", v.first_mismatch_index},
       {"reference_finite", v.reference_finite},
       {"compared", v.compared},
       {"shape_variant", v.shape_variant},
       {"inputs_regenerated", v.inputs_regenerated},
       {"poisoned", v.poisoned},
       {"reruns", v.reruns},
       {"rerun_tolerance_ratio", v.rerun_tolerance_ratio},
       {"rerun_nonfinite_mismatches", v.rerun_nonfinite_mismatches},
       {"output_stable", v.output_stable},
       {"threads_leaked", v.threads_leaked},
       {"thread_detail", v.thread_detail},
       {"tampered", v.tampered},
       {"fp64_checked", v.fp64_checked},
       {"fp64_error", v.fp64_error},
       {"fp64_reference_error", v.fp64_reference_error},
       {"fp64_scale", v.fp64_scale},
       {"dtype_eps", v.dtype_eps},
       {"trivial_passing", v.trivial_passing}};
  put_opt(j, "failure", v.failure);
}
void from_json(const nlohmann::json& j, CaseRecord& v) {
  get_if(j, "index", v.index);
  get_if(j, "seed", v.seed);
  get_if(j, "transform", v.transform);
  get_opt(j, "failure", v.failure);
  get_if(j, "call_ms", v.call_ms);
  get_if(j, "output_plain_tensor", v.output_plain_tensor);
  get_if(j, "output_type", v.output_type);
  get_if(j, "structure_matches", v.structure_matches);
  get_if(j, "dtype_matches", v.dtype_matches);
  get_if(j, "shape_matches", v.shape_matches);
  get_if(j, "device_matches", v.device_matches);
  get_if(j, "detail", v.detail);
  get_if(j, "inputs_unchanged", v.inputs_unchanged);
  get_if(j, "output_aliases_input", v.output_aliases_input);
  get_if(j, "numel", v.numel);
  get_if(j, "max_abs_error", v.max_abs_error);
  get_if(j, "mean_abs_error", v.mean_abs_error);
  get_if(j, "max_rel_error", v.max_rel_error);
  get_if(j, "tolerance_ratio", v.tolerance_ratio);
  get_if(j, "atol", v.atol);
  get_if(j, "rtol", v.rtol);
  get_if(j, "nonfinite_mismatches", v.nonfinite_mismatches);
  get_if(j, "mismatches", v.mismatches);
  get_if(j, "mismatches_outside_fp64", v.mismatches_outside_fp64);
  get_if(j, "fp64_atol_ratio", v.fp64_atol_ratio);
  get_if(j, "first_mismatch_index", v.first_mismatch_index);
  get_if(j, "reference_finite", v.reference_finite);
  get_if(j, "compared", v.compared);
  get_if(j, "shape_variant", v.shape_variant);
  get_if(j, "inputs_regenerated", v.inputs_regenerated);
  get_if(j, "poisoned", v.poisoned);
  get_if(j, "reruns", v.reruns);
  get_if(j, "rerun_tolerance_ratio", v.rerun_tolerance_ratio);
  get_if(j, "rerun_nonfinite_mismatches", v.rerun_nonfinite_mismatches);
  get_if(j, "output_stable", v.output_stable);
  get_if(j, "threads_leaked", v.threads_leaked);
  get_if(j, "thread_detail", v.thread_detail);
  get_if(j, "tampered", v.tampered);
  get_if(j, "fp64_checked", v.fp64_checked);
  get_if(j, "fp64_error", v.fp64_error);
  get_if(j, "fp64_reference_error", v.fp64_reference_error);
  get_if(j, "fp64_scale", v.fp64_scale);
  get_if(j, "dtype_eps", v.dtype_eps);
  get_if(j, "trivial_passing", v.trivial_passing);
}

void to_json(nlohmann::json& j, const TimingRecord& v) {
  j = {{"method", v.method}, {"times_ms", v.times_ms}, {"warmup", v.warmup},
       {"l2_flushed", v.l2_flushed}, {"wall_ms", v.wall_ms}, {"fresh_inputs", v.fresh_inputs},
       {"rounds", v.rounds}, {"l2_persist_reset", v.l2_persist_reset},
       {"l2_persist_violations", v.l2_persist_violations}, {"threads_leaked", v.threads_leaked},
       {"thread_detail", v.thread_detail}, {"tampered", v.tampered},
       {"foreign_gpu_processes", v.foreign_gpu_processes},
       {"precision_flags", v.precision_flags}, {"rechecks", v.rechecks},
       {"wall_check_calls", v.wall_check_calls}, {"wall_check_ms", v.wall_check_ms},
       {"wall_check_host_ms", v.wall_check_host_ms}, {"wall_check_spread_ms", v.wall_check_spread_ms}, {"wall_check_upper_ms", v.wall_check_upper_ms}, {"wall_check_cpu_source", v.wall_check_cpu_source}, {"unreaping_processes", v.unreaping_processes},
       {"wall_check_clock", v.wall_check_clock},
       {"wall_check_cpu_ms", v.wall_check_cpu_ms}, {"wall_check_cpu_wall_ms", v.wall_check_cpu_wall_ms},
       {"wall_check_cores", v.wall_check_cores},
       {"wall_check_calibrations_ms", v.wall_check_calibrations_ms},
       {"wall_check_own_calibrations_ms", v.wall_check_own_calibrations_ms},
       {"wall_check_timed_ms", v.wall_check_timed_ms},
       {"wall_check_paired_ms", v.wall_check_paired_ms}, {"wall_check_harness_ms", v.wall_check_harness_ms},
       {"round_calls", v.round_calls},
       {"window_overhead_ms", v.window_overhead_ms},
       {"spot_checked_calls", v.spot_checked_calls}, {"spot_failed_calls", v.spot_failed_calls},
       {"spot_detail", v.spot_detail}, {"spot_unreadable", v.spot_unreadable}};
  put_opt(j, "failure", v.failure);
}
void from_json(const nlohmann::json& j, TimingRecord& v) {
  get_if(j, "method", v.method);
  get_if(j, "times_ms", v.times_ms);
  get_if(j, "warmup", v.warmup);
  get_if(j, "l2_flushed", v.l2_flushed);
  get_if(j, "wall_ms", v.wall_ms);
  get_opt(j, "failure", v.failure);
  get_if(j, "fresh_inputs", v.fresh_inputs);
  get_if(j, "rounds", v.rounds);
  get_if(j, "l2_persist_reset", v.l2_persist_reset);
  get_if(j, "l2_persist_violations", v.l2_persist_violations);
  get_if(j, "threads_leaked", v.threads_leaked);
  get_if(j, "thread_detail", v.thread_detail);
  get_if(j, "tampered", v.tampered);
  get_if(j, "foreign_gpu_processes", v.foreign_gpu_processes);
  get_if(j, "precision_flags", v.precision_flags);
  get_if(j, "rechecks", v.rechecks);
  get_if(j, "wall_check_calls", v.wall_check_calls);
  get_if(j, "wall_check_ms", v.wall_check_ms);
  get_if(j, "wall_check_host_ms", v.wall_check_host_ms);
  get_if(j, "wall_check_spread_ms", v.wall_check_spread_ms);
  get_if(j, "wall_check_upper_ms", v.wall_check_upper_ms);
  get_if(j, "wall_check_cpu_source", v.wall_check_cpu_source);
  get_if(j, "unreaping_processes", v.unreaping_processes);
  get_if(j, "wall_check_clock", v.wall_check_clock);
  get_if(j, "wall_check_cpu_ms", v.wall_check_cpu_ms);
  get_if(j, "wall_check_cpu_wall_ms", v.wall_check_cpu_wall_ms);
  get_if(j, "wall_check_cores", v.wall_check_cores);
  get_if(j, "wall_check_calibrations_ms", v.wall_check_calibrations_ms);
  get_if(j, "wall_check_own_calibrations_ms", v.wall_check_own_calibrations_ms);
  get_if(j, "wall_check_timed_ms", v.wall_check_timed_ms);
  get_if(j, "wall_check_paired_ms", v.wall_check_paired_ms);
  get_if(j, "wall_check_harness_ms", v.wall_check_harness_ms);
  get_if(j, "round_calls", v.round_calls);
  get_if(j, "window_overhead_ms", v.window_overhead_ms);
  get_if(j, "spot_checked_calls", v.spot_checked_calls);
  get_if(j, "spot_failed_calls", v.spot_failed_calls);
  get_if(j, "spot_detail", v.spot_detail);
  get_if(j, "spot_unreadable", v.spot_unreadable);
}

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
  get_if(j, "traced", v.traced);
  get_if(j, "skipped", v.skipped);
  get_if(j, "calls", v.calls);
  get_if(j, "own_ms", v.own_ms);
  get_if(j, "library_ms", v.library_ms);
  get_if(j, "glue_ms", v.glue_ms);
  get_if(j, "memory_ms", v.memory_ms);
  get_if(j, "outside_window", v.outside_window);
  get_if(j, "graph_launches", v.graph_launches);
  get_if(j, "streams", v.streams);
  get_if(j, "devices", v.devices);
  if (auto it = j.find("kernels"); it != j.end() && it->is_array()) v.kernels = it->get<std::vector<nlohmann::json>>();
  get_if(j, "aten_traced", v.aten_traced);
  get_if(j, "aten_compute_calls", v.aten_compute_calls);
  get_if(j, "aten_glue_calls", v.aten_glue_calls);
  if (auto it = j.find("aten_ops"); it != j.end() && it->is_array()) v.aten_ops = it->get<std::vector<nlohmann::json>>();
  get_if(j, "op_watch", v.op_watch);
}

void to_json(nlohmann::json& j, const LinkFinding& v) {
  j = {{"rule_id", v.rule_id}, {"severity", v.severity}, {"message", v.message}};
}
void from_json(const nlohmann::json& j, LinkFinding& v) {
  get_if(j, "rule_id", v.rule_id);
  get_if(j, "severity", v.severity);
  get_if(j, "message", v.message);
}
void to_json(nlohmann::json& j, const LinkRecord& v) {
  j = {{"checked", v.checked}, {"folder", v.folder}, {"extensions", v.extensions}, {"findings", v.findings}, {"note", v.note}};
}
void from_json(const nlohmann::json& j, LinkRecord& v) {
  get_if(j, "checked", v.checked);
  get_if(j, "folder", v.folder);
  get_if(j, "extensions", v.extensions);
  get_if(j, "findings", v.findings);
  get_if(j, "note", v.note);
}

void to_json(nlohmann::json& j, const RooflineRecord& v) {
  j = {{"bytes", v.bytes}, {"flops", v.flops}, {"bandwidth_gbps", v.bandwidth_gbps},
       {"peak_tflops", v.peak_tflops}, {"floor_ms", v.floor_ms}, {"applied", v.applied}, {"note", v.note}};
}
void from_json(const nlohmann::json& j, RooflineRecord& v) {
  get_if(j, "bytes", v.bytes);
  get_if(j, "flops", v.flops);
  get_if(j, "bandwidth_gbps", v.bandwidth_gbps);
  get_if(j, "peak_tflops", v.peak_tflops);
  get_if(j, "floor_ms", v.floor_ms);
  get_if(j, "applied", v.applied);
  get_if(j, "note", v.note);
}

void to_json(nlohmann::json& j, const TaskAudit& v) {
  j = {{"trivial_passing", v.trivial_passing}, {"strengthened_with", v.strengthened_with},
       {"still_passing", v.still_passing}, {"other_shape", v.other_shape}};
}
void from_json(const nlohmann::json& j, TaskAudit& v) {
  get_if(j, "trivial_passing", v.trivial_passing);
  get_if(j, "strengthened_with", v.strengthened_with);
  get_if(j, "still_passing", v.still_passing);
  get_if(j, "other_shape", v.other_shape);
}

void to_json(nlohmann::json& j, const Measurements& v) {
  j = {{"load", v.load}, {"cases", v.cases}, {"init_seed", v.init_seed}, {"audit", v.audit}};
  put_opt(j, "launch", v.launch);
  put_opt(j, "roofline", v.roofline);
  put_opt(j, "link", v.link);
  put_opt(j, "task_failure", v.task_failure);
  put_opt(j, "candidate_timing", v.candidate_timing);
  put_opt(j, "eager_timing", v.eager_timing);
  put_opt(j, "compile_timing", v.compile_timing);
  put_opt(j, "crash", v.crash);
  put_opt(j, "timed_out_stage", v.timed_out_stage);
  if (!v.phase_ms.empty()) j["phase_ms"] = v.phase_ms;
}
void from_json(const nlohmann::json& j, Measurements& v) {
  get_opt(j, "task_failure", v.task_failure);
  get_if(j, "load", v.load);
  get_if(j, "cases", v.cases);
  get_opt(j, "candidate_timing", v.candidate_timing);
  get_opt(j, "eager_timing", v.eager_timing);
  get_opt(j, "compile_timing", v.compile_timing);
  get_opt(j, "crash", v.crash);
  get_opt(j, "timed_out_stage", v.timed_out_stage);
  get_if(j, "init_seed", v.init_seed);
  get_opt(j, "launch", v.launch);
  get_opt(j, "roofline", v.roofline);
  get_opt(j, "link", v.link);
  get_if(j, "audit", v.audit);
  get_if(j, "phase_ms", v.phase_ms);
}

}  // namespace kgym
