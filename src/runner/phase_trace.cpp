// Launch accounting (D7, D14), the timing phase's last part (evaluation.hpp, trace_launches).
#include "evaluation.hpp"

namespace kgym::runner {

// Launch accounting (D7, D14), last: the kernels of a few calls on the GPU; on the CPU, under
// strict and hybrid, the ATen ops they dispatch (the judge rejects compute ops under strict).
// It comes after the timing and the wall check because a profiler session leaves CUPTI
// attached to the process (Kineto does not finalize it), which made every later launch slower
// (H200: the ReLU's back-to-back calls took 0.24 ms instead of 0.06 ms). The profiler's
// start-up (seconds, CPU) runs outside the device lock; the traced calls run under it.
void trace_launches(TimingRun& t) {
  using clock = TimingRun::clock;
  const EvalOptions& eo = t.eo;
  Measurements& m = t.m;
  const std::string& worker_device = t.engine.worker_device;
  LaunchRecord launch;
  if (worker_device == "cpu" && eo.policy_profile != policy::Profile::strict &&
      eo.policy_profile != policy::Profile::hybrid) {
    launch.skipped = "cpu: no kernel trace";
  } else {
    std::vector<std::uint64_t> tseeds;
    for (int i = 0; i < 3; ++i) tseeds.push_back(t.fresh_seed());
    if (worker_device != "cpu") {
      const auto warm_began = clock::now();
      t.device_lock.unlock();
      auto warmed = t.candidate_request(protocol::WarmProfilerRequest{}, "while the profiler started");
      t.device_lock.lock();
      m.phase_ms["profiler_start"] += TimingRun::ms_since(warm_began);
      if (!warmed) return;
      // Every aten operator's kernels against the snapshot (about 0.1 s, outside the lock).
      t.note_tampered(protocol::read<protocol::WarmProfilerReply>(warmed->header).tampered);
    }
    const auto trace_began = clock::now();
    std::optional<Message> tr;
    {
      QuietDevice quiet(t.engine.quiet_mutex, [&t] { return t.bystanders(); });
      tr = t.candidate_request(protocol::TraceRequest{.seeds = tseeds}, "while traced");
    }
    m.phase_ms["trace"] += TimingRun::ms_since(trace_began);
    if (!tr) return;
    try {
      launch = protocol::read<protocol::TraceReply>(tr->header).launch;
    } catch (const std::exception& e) {
      launch = LaunchRecord{};
      launch.skipped = std::string("malformed trace reply: ") + e.what();
    }
  }
  m.launch = launch;
}

}  // namespace kgym::runner
