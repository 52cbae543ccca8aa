// The worker protocol's schema (protocol.hpp): every message by name.
#include "protocol.hpp"

namespace kgym::runner::protocol {
namespace {

template <Message... T>
nlohmann::json schema_of_all() {
  nlohmann::json out = nlohmann::json::object();
  ((out[std::string(T::kName)] = schema_of<T>()), ...);
  return out;
}

}  // namespace

nlohmann::json schema() {
  return schema_of_all<
      // parts
      TimingSettings, SpotRequest, RecheckItem, SharedInputsMap, SpawnLimits,
      // requests to the reference worker
      InfoRequest, LoadTaskRequest, ProbeTaskRequest, DropTaskRequest, MakeCaseRequest, CaseInputsRequest,
      CompareRequest, RecheckRequest, ReferenceTimeRequest, SpotCheckRequest, WallInputsRequest, SettleRequest,
      WallCalibrationRequest,
      // requests to a candidate's worker
      LoadRequest, RunCaseRequest, ReleaseRequest, CandidateTimeRequest, WallRequest, WallOutputRequest,
      WarmProfilerRequest, TraceRequest, ExitRequest,
      // requests to the zygote
      SpawnRequest, ReapRequest,
      // replies
      ReferenceStatus, CandidateStatus, LoadTaskReply, ProbeTaskReply, MakeCaseReply, CaseInputsReply, Comparison, RecheckReply,
      SpotFailure, SpotResult, BaselineTiming, ReferenceTimeReply, SpotTiming, SpotCheckReply, WallInputsReply,
      WallCalibrationReply, LoadReply, RunCaseReply, KeptOutput, CandidateTimeReply, WallReply, WallOutputReply,
      WarmProfilerReply, TraceReply, ZygoteReady, SpawnReply, ReapReply>();
}

}  // namespace kgym::runner::protocol
