// The clean-up phase (evaluation.hpp): the candidate's processes and folders released, then the
// verdict from what the phases measured.
#include <signal.h>

#include "evaluation.hpp"
#include "kgym/parameter_check.hpp"

namespace kgym::runner {

void clean_up(Evaluation& ev) {
  EngineState& engine = ev.engine;
  Measurements& m = ev.m;
  Worker& c = *ev.cw;
  const auto disk_breach = ev.disk_guard->breach();
  ev.disk_guard.reset();
  if (c.alive()) {
    const auto st = c.finish();
    (void)st;
  }
  // CPU: what the candidate left running goes with its control group, before its folders are
  // released (fork-walking processes outran the zygote's pid sweep: red team rt23).
  if (ev.cpu_group) ev.cpu_group->kill_all();
  if (disk_breach && disk_breach->candidate_at_fault) {
    m.crash = process_failure(ExitStatus{SIGKILL, 0}, disk_breach->message);
    m.crash->type = "disk_quota";
    release_folders(ev.disk_folders, ev.spec.workdir / "worker.log");
  } else {
    if (disk_breach) m.task_failure = disk_breach->message;
    // What the verdict no longer needs: the work folder's files but the log (a long `kgym serve`
    // kept every candidate's until it ended; KGYM_KEEP_WORK=1 keeps them), and a build folder
    // too large to keep for the next run of the same source.
    if (!keep_work()) release_folders({ev.spec.workdir}, ev.spec.workdir / "worker.log");
    const auto built = folder_usage({ev.build_dir}, {}, engine.disk_limits.quota_entries);
    if (built.bytes > engine.disk_limits.build_keep_bytes || !built.unmeasured.empty()) remove_tree(ev.build_dir);
  }
  if (engine.zygote->deaths() != ev.zygote_deaths)
    m.task_failure = "kgym's worker zygote died during this verdict (killed from outside, e.g. by the OOM killer; "
                     "log " + (engine.work_dir / "zygote.log").string() + "), and every worker with it; a new one was started. "
                     "The candidate was not judged: judge it again";
}

Verdict verdict_of(const Evaluation& ev) {
  Verdict v = judge(ev.m, ev.jo);
  v.provenance["scaled_constants"] = ev.scaled;
  // KernelBench's parameter rule (kgym/parameter_check.hpp): a wrong output from a model whose
  // parameters differ from the reference's says which one (a message only; the cases decided).
  if (v.outcome == Outcome::incorrect || v.outcome == Outcome::contract_violation)
    if (auto diff = parameter_difference(ev.reference_parameters, ev.candidate_parameters); diff && !v.messages.empty())
      v.messages.front() += "; " + *diff;
  return v;
}

}  // namespace kgym::runner
