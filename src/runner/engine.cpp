#include "kgym/engine.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <random>
#include <semaphore>

#include <spdlog/spdlog.h>

#include "kgym/error.hpp"
#include "kgym/hash.hpp"
#include "kgym/paths.hpp"
#include "kgym/policy.hpp"
#include "kgym/reward.hpp"
#include "workers.hpp"

namespace kgym {
namespace fs = std::filesystem;
using runner::ChannelClosed;
using runner::ChannelTimeout;
using runner::Message;
using runner::SpawnSpec;
using runner::Worker;

namespace {

fs::path default_cache_dir() {
  if (const char* x = std::getenv("KGYM_CACHE_DIR")) return x;
  if (const char* x = std::getenv("XDG_CACHE_HOME")) return fs::path(x) / "kgym";
  if (const char* h = std::getenv("HOME")) return fs::path(h) / ".cache" / "kgym";
  return fs::temp_directory_path() / "kgym-cache";
}

std::uint64_t random_seed() {
  std::random_device rd;  // OS entropy
  return ((static_cast<std::uint64_t>(rd()) << 32) ^ rd()) & ((1ULL << 63) - 1);
}

nlohmann::json timing_json(const TimingOptions& t) {
  return {{"warmup", t.warmup},          {"min_calls", t.min_calls},
          {"max_calls", t.max_calls},    {"budget_ms", t.budget_ms},
          {"target_spread", t.target_spread}, {"l2_flush", t.l2_flush}, {"input_copies", 3}};
}

Failure process_failure(const runner::ExitStatus& st, std::string message) {
  Failure f;
  f.stage = "process";
  f.type = st.signal ? "signal" : "exit";
  f.signal = st.signal;
  f.exit_code = st.exit_code;
  f.message = std::move(message);
  return f;
}

}  // namespace

struct Engine::Impl {
  EngineOptions options;
  std::string worker_device;  ///< the device as a worker sees it ("cpu" / "cuda:0")
  std::string visible_gpu;    ///< CUDA_VISIBLE_DEVICES for workers, "" on cpu
  fs::path work_dir, cache_dir;
  std::unique_ptr<runner::Zygote> zygote;
  std::mutex device_mutex;              ///< held for the cases and timing of one evaluation
  std::unique_ptr<Worker> reference;    ///< guarded by device_mutex
  nlohmann::json environment;           ///< guarded by device_mutex
  std::counting_semaphore<64> build_slots{1};
  std::atomic<int> counter{0};

  explicit Impl(EngineOptions o) : options(std::move(o)), build_slots(std::max(1, std::min(64, options.build_jobs))) {
    const std::string& d = options.device;
    if (d == "cpu") {
      worker_device = "cpu";
    } else if (d == "cuda" || d.starts_with("cuda:")) {
      worker_device = "cuda:0";
      visible_gpu = d == "cuda" ? "0" : d.substr(5);
      if (visible_gpu.empty() || visible_gpu.find_first_not_of("0123456789") != std::string::npos)
        throw Error(ErrorKind::usage, "bad --device '" + d + "': use cpu, cuda or cuda:N");
    } else {
      throw Error(ErrorKind::usage, "bad --device '" + d + "': use cpu, cuda or cuda:N");
    }
    if (options.python_dir.empty()) options.python_dir = install_root() / "python";
    if (!fs::exists(options.python_dir / "kgym_worker" / "zygote.py"))
      throw Error(ErrorKind::worker, "kgym_worker package not found under " + options.python_dir.string());
    cache_dir = default_cache_dir();
    if (options.work_dir.empty()) {
      std::string tmpl = (fs::temp_directory_path() / "kgym-XXXXXX").string();
      if (!::mkdtemp(tmpl.data())) throw Error(ErrorKind::worker, "cannot create a temporary work directory");
      work_dir = tmpl;
    } else {
      work_dir = options.work_dir;
    }
    std::error_code ec;
    fs::create_directories(work_dir, ec);
    fs::create_directories(cache_dir / "build", ec);
    if (ec) throw Error(ErrorKind::input, "cannot create " + cache_dir.string() + ": " + ec.message());
    zygote = std::make_unique<runner::Zygote>(options.python, options.python_dir, work_dir / "zygote.log");
  }

  std::map<std::string, std::string> base_env(const fs::path& dir) const {
    std::map<std::string, std::string> env = {{"TMPDIR", dir.string()}, {"HOME", dir.string()},
                                              {"OMP_NUM_THREADS", std::getenv("OMP_NUM_THREADS") ? std::getenv("OMP_NUM_THREADS") : "1"}};
    if (!visible_gpu.empty()) env["CUDA_VISIBLE_DEVICES"] = visible_gpu;
    else env["CUDA_VISIBLE_DEVICES"] = "";
    return env;
  }

  /// The reference worker, (re)started if needed. Caller holds device_mutex.
  Worker& reference_worker() {
    if (!reference || !reference->alive()) {
      SpawnSpec spec{"reference", worker_device, work_dir / "reference", {}, 0};
      spec.env = base_env(spec.workdir);
      spec.env["TORCHINDUCTOR_CACHE_DIR"] = (cache_dir / "inductor").string();
      reference = std::make_unique<Worker>(*zygote, spec);
      Message info = reference->request({{"op", "info"}}, {}, 120);
      environment = info.header;
      environment.erase("ok");
    }
    return *reference;
  }

  /// Sends a request to the reference worker; a failure of the trusted side is a task failure.
  std::optional<Message> ask_reference(const nlohmann::json& req, const std::vector<std::string>& blobs,
                                       double timeout_s, Measurements& m) {
    try {
      Message reply = reference_worker().request(req, blobs, timeout_s);
      if (!reply.header.value("ok", false)) {
        m.task_failure = reply.header.value("error", std::string("reference worker error")) + "\n" +
                         reply.header.value("traceback", std::string());
        return std::nullopt;
      }
      return reply;
    } catch (const ChannelClosed&) {
      m.task_failure = "the reference worker died during '" + req.value("op", std::string()) + "'";
    } catch (const ChannelTimeout&) {
      m.task_failure = "the reference worker exceeded its time limit during '" + req.value("op", std::string()) + "'";
    }
    reference.reset();
    return std::nullopt;
  }

  Verdict run(const Task& task, const Candidate& cand, const EvalOptions& eo);
};

Verdict Engine::Impl::run(const Task& task, const Candidate& cand, const EvalOptions& eo) {
  Measurements m;
  m.init_seed = random_seed();
  const int n = ++counter;
  const std::string cand_hash = sha256_hex(cand.code);
  SpawnSpec spec{"candidate", worker_device, work_dir / ("candidate-" + std::to_string(n)), {}, 0};
  spec.env = base_env(spec.workdir);
  // Content-addressed build cache: the same candidate source reuses its load_inline/Triton build.
  const fs::path build_dir = cache_dir / "build" / cand_hash.substr(0, 24);
  spec.env["TORCH_EXTENSIONS_DIR"] = (build_dir / "torch_extensions").string();
  spec.env["TRITON_CACHE_DIR"] = (build_dir / "triton").string();
  spec.env["MAX_JOBS"] = "4";
  if (worker_device == "cpu") spec.address_space_bytes = 16LL << 30;

  auto died = [&](Worker& w, const std::string& what) {
    const auto st = w.kill();
    m.crash = process_failure(st, what);
  };

  auto cw = std::make_unique<Worker>(*zygote, spec);
  Worker& c = *cw;
  nlohmann::json tolerances = nlohmann::json::object();
  for (const char* dt : {"float32", "float16", "bfloat16", "float64"}) {
    Tolerance t = default_tolerance(dt);
    if (eo.tolerance && std::string(dt) == "float32") t = *eo.tolerance;
    tolerances[dt] = {t.atol, t.rtol};
  }
  {
    build_slots.acquire();
    try {
      Message r = c.request({{"op", "load"},
                             {"candidate_source", cand.code},
                             {"task_source", task.source},
                             {"scale", eo.scale},
                             {"init_seed", m.init_seed}},
                            {}, eo.timeouts.load_s);
      r.header.get_to(m.load);
      if (r.header.contains("failure") && r.header["failure"].value("stage", "") == "task")
        m.task_failure = "the task failed inside the candidate process: " + r.header["failure"].value("message", "");
    } catch (const ChannelClosed&) {
      m.crash = process_failure(c.kill(), "while loading");
    } catch (const ChannelTimeout&) {
      m.timed_out_stage = "load";
    } catch (const Error& e) {  // malformed frame from the candidate
      died(c, std::string("broke the protocol: ") + e.what());
    }
    build_slots.release();
  }

  nlohmann::json scaled;
  if (m.load.ok && !m.crash && !m.timed_out_stage && !m.task_failure) {
    std::lock_guard device(device_mutex);
    const std::string key = sha256_hex(task.source).substr(0, 16) + "-" + std::to_string(n);
    if (auto r = ask_reference({{"op", "load_task"}, {"key", key}, {"source", task.source},
                                {"scale", eo.scale}, {"init_seed", m.init_seed}},
                               {}, eo.timeouts.reference_s, m)) {
      scaled = r->header.value("scaled", nlohmann::json::object());
      for (int i = 0; i < eo.n_cases && !m.task_failure; ++i) {
        CaseRecord cr;
        cr.index = i;
        cr.transform = eo.transforms.empty() ? "nominal" : eo.transforms[i % eo.transforms.size()];
        auto made = ask_reference({{"op", "make_case"}, {"key", key}, {"index", i}, {"transform", cr.transform}},
                                  {}, eo.timeouts.reference_s, m);
        if (!made) break;
        cr.seed = made->header.value("seed", std::uint64_t{0});
        Message out;
        try {
          out = c.request({{"op", "run_case"}, {"index", i}, {"inputs", made->header["inputs"]}}, made->blobs,
                          eo.timeouts.case_s);
        } catch (const ChannelClosed&) {
          m.crash = process_failure(c.kill(), "during case " + std::to_string(i));
          break;
        } catch (const ChannelTimeout&) {
          m.timed_out_stage = "case";
          break;
        } catch (const Error& e) {
          died(c, std::string("broke the protocol: ") + e.what());
          break;
        }
        if (out.header.contains("harness_error")) {
          died(c, "kgym's candidate harness failed: " + out.header.value("harness_error", std::string()));
          break;
        }
        try {
          from_json(out.header, cr);  // candidate-side fields (contract observations, failure)
        } catch (const nlohmann::json::exception& e) {
          died(c, std::string("sent a malformed reply: ") + e.what());
          break;
        }
        cr.index = i;
        if (!cr.failure && cr.output_plain_tensor && out.header.contains("output")) {
          auto cmp = ask_reference({{"op", "compare"}, {"key", key}, {"index", i},
                                    {"output", out.header["output"]},
                                    {"tolerances", tolerances}},
                                   out.blobs, eo.timeouts.reference_s, m);
          if (!cmp) break;
          const auto& h = cmp->header;
          cr.structure_matches = h.value("structure_matches", true);
          cr.dtype_matches = h.value("dtype_matches", true);
          cr.shape_matches = h.value("shape_matches", true);
          cr.device_matches = h.value("device_matches", true);
          cr.detail = h.value("detail", std::string());
          cr.numel = h.value("numel", std::int64_t{0});
          cr.max_abs_error = h.value("max_abs_error", 0.0);
          cr.mean_abs_error = h.value("mean_abs_error", 0.0);
          cr.max_rel_error = h.value("max_rel_error", 0.0);
          cr.tolerance_ratio = h.value("tolerance_ratio", 0.0);
          cr.atol = h.value("atol", 0.0);
          cr.rtol = h.value("rtol", 0.0);
          cr.nonfinite_mismatches = h.value("nonfinite_mismatches", std::int64_t{0});
          cr.mismatches = h.value("mismatches", std::int64_t{0});
          cr.first_mismatch_index = h.value("first_mismatch_index", std::vector<std::int64_t>{});
          cr.reference_finite = h.value("reference_finite", true);
        }
        m.cases.push_back(std::move(cr));
      }
      const bool time_it = eo.time_candidate && !m.task_failure && !m.crash && !m.timed_out_stage &&
                           judge(m, eo.judge).correct;
      if (time_it) {
        const auto began = std::chrono::steady_clock::now();
        try {
          Message t = c.request({{"op", "time"}, {"options", timing_json(eo.timing)}}, {}, eo.timeouts.timing_s);
          TimingRecord rec;
          t.header.at("timing").get_to(rec);
          rec.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
          m.candidate_timing = rec;
        } catch (const ChannelClosed&) {
          m.crash = process_failure(c.kill(), "while timed");
        } catch (const ChannelTimeout&) {
          m.timed_out_stage = "timing";
        } catch (const std::exception& e) {
          died(c, std::string("sent a malformed timing reply: ") + e.what());
        }
        if (m.candidate_timing) {
          for (const char* kind : {"eager", "compile"}) {
            if (std::string(kind) == "compile" && !eo.compile_baseline) continue;
            const auto t0 = std::chrono::steady_clock::now();
            auto r = ask_reference({{"op", "time"}, {"key", key}, {"kind", kind}, {"options", timing_json(eo.timing)}},
                                   {}, eo.timeouts.reference_s, m);
            if (!r) break;
            TimingRecord rec;
            r->header.at("timing").get_to(rec);
            rec.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            (std::string(kind) == "eager" ? m.eager_timing : m.compile_timing) = rec;
          }
        }
      }
      if (reference && reference->alive()) {
        try {
          reference->request({{"op", "drop_task"}, {"key", key}}, {}, 60);
        } catch (const std::exception&) {
          reference.reset();
        }
      }
    }
  }
  if (c.alive()) {
    const auto st = c.finish();
    (void)st;
  }

  Verdict v = judge(m, eo.judge);
  v.provenance["scaled_constants"] = scaled;
  return v;
}

Engine::Engine(EngineOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Engine::~Engine() = default;

nlohmann::json Engine::environment() {
  std::lock_guard device(impl_->device_mutex);
  impl_->reference_worker();
  return impl_->environment;
}

Verdict Engine::evaluate(const Task& task, const Candidate& cand, const EvalOptions& eo) {
  if (eo.n_cases < 1) throw Error(ErrorKind::usage, "--cases must be at least 1");
  if (!(eo.scale > 0)) throw Error(ErrorKind::usage, "--scale must be positive");
  const auto profile = policy::profile_from_string(eo.policy_profile);
  if (!profile)
    throw Error(ErrorKind::usage, "unknown policy profile '" + eo.policy_profile + "': use strict, hybrid, kernelbench or off");
  Verdict v;
  if (cand.empty()) {
    v = verdict_without_run(Outcome::no_candidate, Gate::none,
                            "no candidate code (empty or \"None\"): nothing to judge");
  } else {
    // Gate 1: policy, from the source alone, before anything of the candidate runs.
    policy::PolicyContext ctx{*profile, policy::infer_task_dtype(task.source), task.source};
    const policy::PolicyReport report = policy::check_candidate(cand.code, ctx);
    const policy::Finding* first_reject = nullptr;
    for (const auto& f : report.findings)
      if (f.severity == policy::Severity::reject && !first_reject) first_reject = &f;
    if (!report.parsed) {
      v = verdict_without_run(Outcome::build_failed, Gate::build,
                              "candidate does not parse" + (first_reject ? ": line " + std::to_string(first_reject->line) +
                                                                               ": " + first_reject->snippet : std::string()));
    } else if (first_reject) {
      v = verdict_without_run(Outcome::policy_rejected, Gate::policy,
                              "[" + first_reject->rule_id + "] line " + std::to_string(first_reject->line) + ": " +
                                  first_reject->message);
    } else {
      v = impl_->run(task, cand, eo);
    }
    for (const auto& f : report.findings) v.policy_findings.push_back(f);
    v.provenance["policy_profile"] = eo.policy_profile;
  }
  v.task_id = task.id;
  v.candidate_id = cand.id;
  v.reward_name = eo.reward;
  v.reward = compute_reward(eo.reward, v);
  v.provenance["kgym"] = KGYM_VERSION;
  v.provenance["device"] = impl_->options.device;
  v.provenance["scale"] = eo.scale;
  v.provenance["task_sha256"] = sha256_hex(task.source);
  v.provenance["candidate_sha256"] = sha256_hex(cand.code);
  v.provenance["init_seed"] = v.measurements.init_seed;
  std::vector<std::uint64_t> seeds;
  for (const auto& c : v.measurements.cases) seeds.push_back(c.seed);
  v.provenance["case_seeds"] = seeds;
  {
    std::lock_guard device(impl_->device_mutex);
    v.provenance["environment"] = impl_->environment;
  }
  return v;
}

}  // namespace kgym
