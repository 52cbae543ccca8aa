// EvalOptions <-> JSON for queue jobs (queue.hpp): a worker judges with exactly the server's
// settings. Every field is written; a missing key keeps its default (an older server's job).
#include <nlohmann/json.hpp>

#include "kgym/error.hpp"
#include "kgym/options.hpp"
#include "kgym/queue.hpp"
#include "kgym/reward.hpp"

namespace kgym {

// A job spells the typed options by name, as the CLI and HTTP edges take them, and reads them back
// through the same parsers (so a name a worker does not know is the parser's usage error).
static void to_json(nlohmann::json& j, const RewardName& r) { j = std::string(r.name()); }
static void from_json(const nlohmann::json& j, RewardName& r) { r = parse_reward(j.get<std::string>(), "queue job's reward"); }
namespace policy {
static void to_json(nlohmann::json& j, const Profile& p) { j = std::string(to_string(p)); }
static void from_json(const nlohmann::json& j, Profile& p) {
  p = parse_profile(j.get<std::string>(), "queue job's policy_profile");
}
}  // namespace policy

namespace {

using nlohmann::json;

template <class T>
void read(const json& j, const char* key, T& out) {
  if (!j.contains(key)) return;
  try {
    j.at(key).get_to(out);
  } catch (const json::exception& e) {
    throw Error(ErrorKind::input, std::string("queue job: option \"") + key + "\" has the wrong type: " + e.what());
  }
}

#define KGYM_FIELDS_TIMING(X) X(warmup) X(min_calls) X(max_calls) X(budget_ms) X(target_spread) X(l2_flush) \
  X(rounds) X(rechecks_per_round) X(spot_samples) X(wall_check_ms)
#define KGYM_FIELDS_TIMEOUTS(X) X(load_s) X(case_s) X(timing_s) X(reference_s)
#define KGYM_FIELDS_JUDGE(X) X(min_timed_calls) X(wall_clock_slack) X(policy_profile) X(strict_library_share) \
  X(hybrid_library_share) X(precision_factor) X(precision_floor_eps) X(roofline_safety) X(min_net_ms) \
  X(net_floor_fraction) X(wall_floor_factor) X(wall_floor_factor_cpu) X(wall_check_factor_cpu) \
  X(wall_check_slack_ms_cpu) X(timer_doubt_factor_cpu)
#define KGYM_FIELDS_EVAL(X) X(n_cases) X(transforms) X(scale) X(time_candidate) X(compile_baseline) X(other_shape) \
  X(reward) X(policy_profile)

}  // namespace

json eval_options_json(const EvalOptions& o) {
  json j, timing, timeouts, judge;
#define WRITE(f) j[#f] = o.f;
  KGYM_FIELDS_EVAL(WRITE)
#undef WRITE
#define WRITE(f) timing[#f] = o.timing.f;
  KGYM_FIELDS_TIMING(WRITE)
#undef WRITE
#define WRITE(f) timeouts[#f] = o.timeouts.f;
  KGYM_FIELDS_TIMEOUTS(WRITE)
#undef WRITE
#define WRITE(f) judge[#f] = o.judge.f;
  KGYM_FIELDS_JUDGE(WRITE)
#undef WRITE
  j["timing"] = timing;
  j["timeouts"] = timeouts;
  j["judge"] = judge;
  if (o.tolerance) j["tolerance"] = {{"atol", o.tolerance->atol}, {"rtol", o.tolerance->rtol}};
  return j;
}

EvalOptions eval_options_from_json(const json& j) {
  if (!j.is_object()) throw Error(ErrorKind::input, "queue job: `options` is not an object");
  EvalOptions o;
#define READ(f) read(j, #f, o.f);
  KGYM_FIELDS_EVAL(READ)
#undef READ
  const json empty = json::object();
  const json& timing = j.contains("timing") ? j["timing"] : empty;
  const json& timeouts = j.contains("timeouts") ? j["timeouts"] : empty;
  const json& judge = j.contains("judge") ? j["judge"] : empty;
#define READ(f) read(timing, #f, o.timing.f);
  KGYM_FIELDS_TIMING(READ)
#undef READ
#define READ(f) read(timeouts, #f, o.timeouts.f);
  KGYM_FIELDS_TIMEOUTS(READ)
#undef READ
#define READ(f) read(judge, #f, o.judge.f);
  KGYM_FIELDS_JUDGE(READ)
#undef READ
  if (j.contains("tolerance") && j["tolerance"].is_object()) {
    Tolerance t;
    read(j["tolerance"], "atol", t.atol);
    read(j["tolerance"], "rtol", t.rtol);
    o.tolerance = t;
  }
  return o;
}

}  // namespace kgym
