#include "kgym/engine.hpp"
#include "kgym/parameter_check.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <limits>
#include <random>
#include <semaphore>
#include <set>
#include <shared_mutex>

#include <spdlog/spdlog.h>

#include "kgym/error.hpp"
#include "kgym/hash.hpp"
#include "kgym/paths.hpp"
#include "kgym/policy.hpp"
#include "kgym/format.hpp"
#include "kgym/reward.hpp"
#include "kgym/subprocess.hpp"
#include "cpu_group.hpp"
#include "disk_guard.hpp"
#include "evaluation.hpp"
#include "proctree.hpp"
#include "wall_check.hpp"
#include "workers.hpp"

namespace kgym {
namespace fs = std::filesystem;
using runner::Blob;
using runner::ChannelClosed;
using runner::ChannelTimeout;
using runner::Message;
using runner::PausedTree;
using runner::QuietDevice;
using runner::apply_comparison;
using runner::keep_work;
using runner::merge_round;
using runner::process_failure;
using runner::random_seed;
using runner::reply_field;
using runner::timing_json;

using runner::SpawnSpec;
using runner::Worker;

namespace {

fs::path default_cache_dir() {
  if (const char* x = std::getenv("KGYM_CACHE_DIR")) return x;
  if (const char* x = std::getenv("XDG_CACHE_HOME")) return fs::path(x) / "kgym";
  if (const char* h = std::getenv("HOME")) return fs::path(h) / ".cache" / "kgym";
  return fs::temp_directory_path() / "kgym-cache";
}

/// Wall clock of consecutive phases of one evaluation, recorded into Measurements::phase_ms (ms;
/// a repeated name accumulates).
class PhaseClock {
 public:
  /// `prefix` goes before every name (e.g. "cases/" for the parts of the cases phase).
  explicit PhaseClock(Measurements& m, std::string prefix = "")
      : m_(m), prefix_(std::move(prefix)), t_(std::chrono::steady_clock::now()) {}
  /// Ends the current phase under `name` and starts the next one.
  void lap(const std::string& name) {
    const auto now = std::chrono::steady_clock::now();
    m_.phase_ms[prefix_ + name] += std::chrono::duration<double, std::milli>(now - t_).count();
    t_ = now;
  }
  /// Starts the next phase now without recording the time since the last lap.
  void restart() { t_ = std::chrono::steady_clock::now(); }

 private:
  Measurements& m_;
  std::string prefix_;
  std::chrono::steady_clock::time_point t_;
};

}  // namespace

// (engine.hpp)
std::optional<std::string> python_syntax_error(const std::string& python, const std::string& code) {
  std::string tmpl = (fs::temp_directory_path() / "kgym-syntax-XXXXXX").string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) return std::nullopt;
  for (std::size_t off = 0; off < code.size();) {
    const ssize_t w = ::write(fd, code.data() + off, code.size() - off);
    if (w <= 0) break;
    off += static_cast<std::size_t>(w);
  }
  ::close(fd);
  static const char* kScript =
      "import sys\n"
      "src = open(sys.argv[1], 'rb').read()\n"
      "try:\n"
      "    compile(src, 'candidate.py', 'exec', dont_inherit=True)\n"
      "except SyntaxError as e:\n"
      "    text = (e.text or '').strip()\n"
      "    print(f'line {e.lineno}, column {e.offset}: {e.msg}' + (f': {text[:120]}' if text else ''))\n"
      "except (ValueError, MemoryError, RecursionError) as e:\n"
      "    print(f'{type(e).__name__}: {e}'[:300])\n";
  const ProcessResult r = run_process({python, "-I", "-S", "-c", kScript, tmpl}, 10000, 1 << 16);
  ::unlink(tmpl.c_str());
  std::string out = r.out;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  if (!r.ok() || out.empty()) return std::nullopt;
  return out;
}


namespace runner {

/// The workers stop first; then the temporary work folder goes (worker logs, the CPU wall
/// check's input files: 26 MB for a four-candidate ReLU run, and every run used to leave its
/// folder in /tmp). KGYM_KEEP_WORK=1 keeps it, for the logs a message names.
EngineState::~EngineState() {
  reference.reset();
  zygote.reset();
  if (own_work_dir && !keep_work()) runner::remove_tree(work_dir);  // also what nests below PATH_MAX
  else if (own_work_dir) spdlog::warn("kgym kept its work folder {} (KGYM_KEEP_WORK): worker logs, inputs", work_dir.string());
}

EngineState::EngineState(EngineOptions o) : options(std::move(o)), build_slots(std::max(1, std::min(64, options.build_jobs))) {
  check_worker_environment();
  const Device& device = options.device;
  if (device.is_cpu()) {
    worker_device = "cpu";
  } else {
    worker_device = "cuda:0";
    visible_gpu = device.index ? std::to_string(*device.index) : "0";
  }
  if (options.python_dir.empty()) options.python_dir = install_root() / "python";
  if (!fs::exists(options.python_dir / "kgym_worker" / "zygote.py"))
    throw Error(ErrorKind::worker, "kgym_worker package not found under " + options.python_dir.string());
  cache_dir = default_cache_dir();
  if (options.work_dir.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "kgym-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw Error(ErrorKind::worker, "cannot create a temporary work directory");
    work_dir = tmpl;
    own_work_dir = true;
  } else {
    work_dir = options.work_dir;
  }
  std::error_code ec;
  fs::create_directories(work_dir, ec);
  fs::create_directories(cache_dir / "build", ec);
  if (ec) throw Error(ErrorKind::input, "cannot create " + cache_dir.string() + ": " + ec.message());
  zygote = std::make_unique<runner::Zygote>(options.python, options.python_dir, work_dir / "zygote.log");
}

std::map<std::string, std::string> EngineState::base_env(const fs::path& dir) const {
  std::map<std::string, std::string> env = {{"TMPDIR", dir.string()}, {"HOME", dir.string()},
                                            {"OMP_NUM_THREADS", std::getenv("OMP_NUM_THREADS") ? std::getenv("OMP_NUM_THREADS") : "1"}};
  if (!visible_gpu.empty()) env["CUDA_VISIBLE_DEVICES"] = visible_gpu;
  else env["CUDA_VISIBLE_DEVICES"] = "";
  return env;
}

Worker& EngineState::reference_worker() {
  if (reference && zygote->deaths() != reference_zygote_deaths) reference.reset();  // died with its zygote
  if (!reference || !reference->alive()) {
    SpawnSpec spec{"reference", worker_device, work_dir / "reference", {}, 0};
    spec.env = base_env(spec.workdir);
    spec.env["TORCHINDUCTOR_CACHE_DIR"] = (cache_dir / "inductor").string();
    reference = std::make_unique<Worker>(*zygote, spec);
    reference_pid = reference->pid();
    reference_zygote_deaths = zygote->deaths();
    Message info = reference->request({{"op", "info"}}, {}, 120);
    environment = info.header;
    environment.erase("ok");
  }
  return *reference;
}

std::optional<Message> EngineState::ask_reference(const nlohmann::json& req, const std::vector<Blob>& blobs,
                                                  double timeout_s, Measurements& m) {
  try {
    Message reply = reference_worker().request(req, blobs, timeout_s);
    if (!reply.header.value("ok", false)) {
      m.task_failure = "the reference failed: " + reply.header.value("error", std::string("reference worker error")) + "\n" +
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

}  // namespace runner

struct Engine::Impl : runner::EngineState {
  using EngineState::EngineState;

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

  // Disk: a candidate starts only with the reserve free where its folders lie, and is stopped
  // when it writes more than its quota there (runner::DiskGuard).
  const std::vector<fs::path> disk_folders{spec.workdir, build_dir};
  if (auto low = runner::check_reserve(disk_folders, disk_limits)) {
    m.task_failure = low->message;
    return judge(m, eo.judge);
  }
  // CPU: the candidate's processes in a control group of their own, for the CPU time of all of
  // them in the wall check (runner::CpuGroup; declared first so that it outlives the worker).
  std::optional<runner::CpuGroup> cpu_group;
  std::unique_ptr<Worker> cw;
  std::optional<runner::DiskGuard> disk_guard;  // after cw: stops before the worker is reaped
  try {
    std::shared_lock no_timing_stopped(quiet_mutex);
    cw = std::make_unique<Worker>(*zygote, spec);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::worker) throw;
    // No worker for this candidate (the zygote could not fork: no process or memory left, which
    // another candidate may have caused; red team rt7): it is not judged, and the run goes on.
    m.task_failure = std::string("kgym could not start a worker for this candidate: ") + e.what() +
                     "; the candidate was not judged: judge it again";
    return judge(m, eo.judge);
  }
  Worker& c = *cw;
  if (worker_device == "cpu") cpu_group.emplace(c.pid());
  disk_guard.emplace(
      disk_folders,
      [this, root = c.pid(), &cpu_group] {
        const pid_t ref = reference_pid.load();
        return runner::Holders{runner::own_processes(root, zygote->workers(), ref,
                                                     cpu_group ? cpu_group->procs() : std::vector<pid_t>{}),
                               {zygote->pid(), ref}};
      },
      disk_limits, [pgid = c.pid()] { ::kill(-pgid, SIGKILL); });
  // The zygote dying during the verdict (killed from outside) takes every worker with it: the
  // candidate is then not at fault, and its verdict says so (task_error) instead of blaming it.
  const int zygote_deaths = zygote->deaths();
  nlohmann::json candidate_parameters, reference_parameters;  // parameters.py's lists, for a message
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
                             {"format", cand.format},
                             {"candidate_source", cand.code},
                             {"task_source", task.source},
                             {"scale", eo.scale},
                             {"init_seed", m.init_seed}},
                            {}, eo.timeouts.load_s);
      r.header.get_to(m.load);
      candidate_parameters = r.header.value("parameters", nlohmann::json::array());
      if (r.header.contains("failure") && r.header["failure"].value("stage", "") == "task")
        m.task_failure = "the task failed inside the candidate process: " + r.header["failure"].value("message", "");
    } catch (const nlohmann::json::exception& e) {  // a forged load reply (red team rt14)
      m.load = {};
      m.task_failure.reset();
      died(c, std::string("sent a malformed load reply: ") + e.what());
    } catch (const ChannelClosed&) {
      m.crash = process_failure(c.kill(), "while loading");
    } catch (const ChannelTimeout&) {
      m.timed_out_stage = "load";
    } catch (const Error& e) {  // malformed frame from the candidate
      died(c, std::string("broke the protocol: ") + e.what());
    }
    build_slots.release();
  }
  // A task failure that the candidate's process reports is believed only when the reference
  // worker cannot load the task either (red team rt15: a forged load reply made the verdict
  // task_error, which blames nobody and is left out of a model's statistics).
  if (m.task_failure && !m.crash && !m.timed_out_stage) {
    const std::string claimed = m.task_failure->substr(0, 300);
    m.task_failure.reset();
    std::unique_lock device(device_mutex);
    const std::string probe_key = "load-probe-" + std::to_string(n);
    if (ask_reference({{"op", "load_task"}, {"key", probe_key}, {"source", task.source}, {"scale", eo.scale}, {"task_id", task.id},
                       {"init_seed", m.init_seed}},
                      {}, eo.timeouts.reference_s, m)) {
      try {
        reference->request({{"op", "drop_task"}, {"key", probe_key}}, {}, 60);
      } catch (const std::exception&) {
        reference.reset();
      }
      died(c, "reported that the task failed in its process (" + claimed +
                  "), but the reference worker loads the task; a task that fails only beside the candidate's code "
                  "is the candidate's failure");
    }  // else the reference failed too: ask_reference recorded the task failure
  }

  // Gate 2's link check (policy::check_linked_symbols): the symbols each shared object the
  // candidate built imports, by the loader's names. Run once the candidate has loaded (its
  // extensions are built and mapped then; a rejection ends the verdict before any case) and
  // again before the verdict (an extension built or loaded in a call). Triton's cache is not
  // among the folders: Triton builds its launchers there itself, and they load libcuda by dlopen.
  const policy::Profile link_profile = eo.policy_profile;
  std::set<std::string> link_checked;
  const policy::Rule* dynamic_rule = policy::find_rule("dynamic_code");
  const auto dynamic_severity = dynamic_rule ? dynamic_rule->in(link_profile) : std::nullopt;
  auto link_check = [&] {
    if (!m.load.ok || !c.alive()) return;
    LinkRecord rec = m.link.value_or(LinkRecord{});
    rec.checked = true;
    rec.folder = (build_dir / "torch_extensions").string();
    std::string note;
    // The C routines torch's own libraries export (MKL, oneDNN, ...), read from the torch the
    // candidate's process mapped: any of them imported is library compute (policy::torch_c_exports).
    const std::set<std::string>* torch_exports = nullptr;
    if (const auto dir = runner::mapped_object_dir(c.pid(), "libtorch_cpu.so")) {
      std::string why;
      torch_exports = policy::torch_c_exports(dir->string(), &why);
      if (!torch_exports) note = "torch's exports could not be read (" + why + "); the symbol rules stand alone";
    }
    for (const auto& o : runner::candidate_objects({build_dir / "torch_extensions", spec.workdir}, c.pid(), &note)) {
      const std::string name = o.path.filename().string();
      if (!link_checked.insert(o.path.string() + (o.replaced ? " replaced" : "")).second) continue;
      rec.extensions.push_back(name + (o.loaded ? " (loaded)" : ""));
      const auto& severity = dynamic_severity;
      if (o.replaced) {
        if (severity)
          rec.findings.push_back({"dynamic_code", std::string(policy::to_string(*severity)),
                                  "the shared object " + name + " was deleted or replaced after the candidate's process "
                                  "loaded it, so what ran cannot be checked: leave built extensions in place"});
        continue;
      }
      std::string error;
      const auto symbols = policy::undefined_symbols(o.path.string(), &error);
      if (!symbols) {
        if (error.rfind("nm could not run", 0) == 0) {
          rec.note = error;  // no binutils here: the source scan stands alone
        } else if (severity) {
          rec.findings.push_back({"dynamic_code", std::string(policy::to_string(*severity)),
                                  "the shared object " + name + " cannot be read as a shared library (" + error.substr(0, 200) +
                                      "): build extensions with load_inline"});
        }
        continue;
      }
      for (const policy::Finding& f : policy::check_linked_symbols(*symbols, name, link_profile, torch_exports))
        rec.findings.push_back({f.rule_id, std::string(policy::to_string(f.severity)), f.message});
      if (const auto needed = policy::needed_libraries(o.path.string()))  // nm read it: readelf does too
        for (const policy::Finding& f : policy::check_needed_libraries(*needed, name, link_profile))
          rec.findings.push_back({f.rule_id, std::string(policy::to_string(f.severity)), f.message});
    }
    if (!note.empty()) rec.note = note;
    m.link = std::move(rec);
  };
  auto link_rejected = [&] {
    return m.link && std::any_of(m.link->findings.begin(), m.link->findings.end(),
                                 [](const LinkFinding& f) { return f.severity == "reject"; });
  };
  if (m.load.ok && !m.crash && !m.timed_out_stage && !m.task_failure) link_check();

  nlohmann::json scaled;
  JudgeOptions jo = eo.judge;
  jo.policy_profile = eo.policy_profile;
  // A reply of the wrong shape from the candidate's process anywhere in the evaluation (it can
  // write its own replies; the fields read through reply_field are safe already) is its breach
  // of the protocol: before, the JSON exception ended the whole run (red team rt14, exit 3).
  std::string held_key;  // the reference's task, dropped when the evaluation is cut short
  try {
    if (m.load.ok && !m.crash && !m.timed_out_stage && !m.task_failure && !link_rejected()) {
      std::unique_lock device(device_mutex);
      const std::string key = sha256_hex(task.source).substr(0, 16) + "-" + std::to_string(n);
      held_key = key;
      PhaseClock phase(m);
      auto loaded = ask_reference({{"op", "load_task"}, {"key", key}, {"source", task.source}, {"task_id", task.id},
                                   {"scale", eo.scale}, {"init_seed", m.init_seed}},
                                  {}, eo.timeouts.reference_s, m);
      phase.lap("load_task");
      if (auto& r = loaded) {
        scaled = r->header.value("scaled", nlohmann::json::object());
        reference_parameters = r->header.value("parameters", nlohmann::json::array());
        if (r->header.contains("roofline")) {
          RooflineRecord roof;
          r->header["roofline"].get_to(roof);
          m.roofline = roof;
        }
        // One correctness case: returns false when the evaluation cannot go on (crash, timeout,
        // reference failure); a skipped other-shape case returns true without a record.
        // The 20 ms output-stability wait (D8) runs in one secret case of the regular ones: the output
        // compared is always the snapshot taken as the call returned, so a late write is never
        // rewarded, and every case still compares that snapshot with the output after a device-wide
        // sync; the wait only widens that window where the candidate cannot know it (H200: the
        // waits were 100 of about 600 ms of a verdict's device time).
        const int stability_case = static_cast<int>(random_seed() % static_cast<std::uint64_t>(std::max(1, eo.n_cases)));
        auto run_one_case = [&](int i, const std::string& transform, bool other_shape, bool audit) -> bool {
          CaseRecord cr;
          cr.index = i;
          cr.transform = transform;
          nlohmann::json mk = {{"op", "make_case"}, {"key", key}, {"index", i}, {"transform", transform}};
          if (other_shape) mk["shape"] = "other";
          // Where a case's time goes (diagnostic; "cases/..." and "other_shape/..." are parts of those
          // phases, which hold the totals): the reference making the inputs, the candidate's run (its
          // first call, with any JIT build, apart), the reference's comparison.
          PhaseClock part(m, other_shape ? "other_shape/" : "cases/");
          auto made = ask_reference(mk, {}, eo.timeouts.reference_s, m);
          part.lap("make");
          if (!made) return false;
          if (made->header.contains("skipped")) {
            m.audit.other_shape = "skipped: " + made->header.value("skipped", std::string());
            return true;
          }
          if (other_shape) {
            m.audit.other_shape = "ran: " + made->header.value("sizes", nlohmann::json::object()).dump();
            cr.shape_variant = "other";
          }
          cr.seed = made->header.value("seed", std::uint64_t{0});
          // The candidate worker regenerates the inputs from the case seed and checks them against
          // the reference's fingerprint; when they differ (get_inputs not reproducible from torch's
          // seed) it answers need_inputs and gets the reference's inputs as bytes instead.
          Message out;
          bool regenerated = true;
          auto run_case = [&](const nlohmann::json& req, const std::vector<Blob>& blobs) -> bool {
            try {
              out = c.request(req, blobs, eo.timeouts.case_s);
              return true;
            } catch (const ChannelClosed&) {
              m.crash = process_failure(c.kill(), "during case " + std::to_string(i));
            } catch (const ChannelTimeout&) {
              m.timed_out_stage = "case";
            } catch (const Error& e) {
              died(c, std::string("broke the protocol: ") + e.what());
            }
            return false;
          };
          const bool wait = !other_shape && i == stability_case;
          if (!run_case({{"op", "run_case"}, {"index", i}, {"regenerate", made->header["regenerate"]},
                         {"tolerances", tolerances}, {"stability_wait", wait}},
                        {}))
            return false;
          part.lap(i == 0 ? "run_first" : "run");
          if (const auto need = out.header.find("need_inputs"); need != out.header.end() && *need == true) {
            auto sent = ask_reference({{"op", "case_inputs"}, {"key", key}, {"index", i}}, {},
                                      eo.timeouts.reference_s, m);
            if (!sent) return false;
            regenerated = false;
            if (!run_case({{"op", "run_case"}, {"index", i}, {"inputs", sent->header["inputs"]},
                           {"tolerances", tolerances}, {"stability_wait", wait}},
                          sent->blobs))
              return false;
            part.lap("inputs_fallback");
          }
          if (out.header.contains("harness_error")) {
            died(c, "kgym's candidate harness failed: " +
                        reply_field(out.header, "harness_error", out.header["harness_error"].dump()));
            return false;
          }
          try {
            from_json(out.header, cr);  // candidate-side fields (contract observations, failure)
          } catch (const nlohmann::json::exception& e) {
            died(c, std::string("sent a malformed reply: ") + e.what());
            return false;
          }
          cr.index = i;
          cr.transform = transform;
          cr.shape_variant = other_shape ? "other" : "";
          cr.trivial_passing.clear();
          cr.fp64_checked = false;  // reference-side fields are never taken from the candidate
          cr.reference_finite = true;  // only the reference worker may say otherwise
          cr.compared = false;         // ... and only apply_comparison sets this
          cr.inputs_regenerated = regenerated;  // what the supervisor sent, not what the candidate says
          if (!cr.failure && cr.output_plain_tensor && !out.header.contains("output")) {
            // Nothing to compare (a forged or truncated reply): never a pass by default.
            cr.failure = Failure{"case", "ProtocolError", "the candidate returned no output to compare", "", 0, 0};
          }
          if (!cr.failure && cr.output_plain_tensor && out.header.contains("output")) {
            auto cmp = ask_reference({{"op", "compare"}, {"key", key}, {"index", i},
                                      {"output", out.header["output"]},
                                      {"tolerances", tolerances}, {"audit", audit}, {"done", true}},
                                     out.blobs, eo.timeouts.reference_s, m);
            part.lap("compare");
            if (!cmp) return false;
            apply_comparison(cmp->header, cr);
            // GPU: the output went to the reference device to device (devicecopy.py) and is copied
            // now; the candidate's process drops it and returns cached memory before the reference
            // makes the next case (at full size, 6.4 GB per output).
            if (worker_device != "cpu" && !run_case({{"op", "release"}}, {})) return false;
          }
          m.cases.push_back(std::move(cr));
          return true;
        };
        bool going = true;
        for (int i = 0; i < eo.n_cases && going; ++i)
          going = run_one_case(i, eo.transforms.empty() ? "nominal" : eo.transforms[i % eo.transforms.size()],
                               false, true);
        // Trivial-answer audit (D12): answers that pass every regular case mean the cases are weak;
        // strengthen them with other value distributions and record it.
        if (going && !m.cases.empty()) {
          std::vector<std::string> passing = m.cases.front().trivial_passing;
          for (const auto& cr : m.cases) {
            std::vector<std::string> keep;
            for (const auto& t : passing)
              if (std::find(cr.trivial_passing.begin(), cr.trivial_passing.end(), t) != cr.trivial_passing.end())
                keep.push_back(t);
            passing = keep;
          }
          m.audit.trivial_passing = passing;
          if (!passing.empty()) {
            const std::size_t first_extra = m.cases.size();
            for (const char* tr : {"scale100", "cube"}) {
              m.audit.strengthened_with.push_back(tr);
              if (!(going = run_one_case(static_cast<int>(m.cases.size()), tr, false, true))) break;
            }
            std::vector<std::string> still = passing;
            for (std::size_t k = first_extra; k < m.cases.size(); ++k) {
              std::vector<std::string> keep;
              for (const auto& t : still)
                if (std::find(m.cases[k].trivial_passing.begin(), m.cases[k].trivial_passing.end(), t) !=
                    m.cases[k].trivial_passing.end())
                  keep.push_back(t);
              still = keep;
            }
            if (m.cases.size() > first_extra) m.audit.still_passing = still;
          }
        }
        phase.lap("cases");
        // Other sizes (D12, H23): one case with the task's size constants changed, where it allows.
        if (going && eo.other_shape) {
          going = run_one_case(static_cast<int>(m.cases.size()), "nominal", true, false);
          phase.lap("other_shape");
        }

        const bool time_it = going && eo.time_candidate && !m.task_failure && !m.crash && !m.timed_out_stage &&
                             judge(m, jo).correct;
        if (time_it) {
          runner::TimingRun timing{*this, c, key, eo, m, tolerances, device, cpu_group ? &*cpu_group : nullptr};
          runner::time_phase(timing);
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
  } catch (const nlohmann::json::exception& e) {
    died(c, std::string("sent a reply kgym could not read (a field of the wrong type): ") + e.what());
    if (!held_key.empty() && reference && reference->alive()) {
      try {
        reference->request({{"op", "drop_task"}, {"key", held_key}}, {}, 60);
      } catch (const std::exception&) {
        reference.reset();
      }
    }
  }
  if (!link_rejected()) link_check();
  const auto disk_breach = disk_guard->breach();
  disk_guard.reset();
  if (c.alive()) {
    const auto st = c.finish();
    (void)st;
  }
  // CPU: what the candidate left running goes with its control group, before its folders are
  // released (fork-walking processes outran the zygote's pid sweep: red team rt23).
  if (cpu_group) cpu_group->kill_all();
  if (disk_breach && disk_breach->candidate_at_fault) {
    m.crash = process_failure(runner::ExitStatus{SIGKILL, 0}, disk_breach->message);
    m.crash->type = "disk_quota";
    runner::release_folders(disk_folders, spec.workdir / "worker.log");
  } else {
    if (disk_breach) m.task_failure = disk_breach->message;
    // What the verdict no longer needs: the work folder's files but the log (a long `kgym serve`
    // kept every candidate's until it ended; KGYM_KEEP_WORK=1 keeps them), and a build folder
    // too large to keep for the next run of the same source.
    if (!keep_work()) runner::release_folders({spec.workdir}, spec.workdir / "worker.log");
    const auto built = runner::folder_usage({build_dir}, {}, disk_limits.quota_entries);
    if (built.bytes > disk_limits.build_keep_bytes || !built.unmeasured.empty()) runner::remove_tree(build_dir);
  }
  if (zygote->deaths() != zygote_deaths)
    m.task_failure = "kgym's worker zygote died during this verdict (killed from outside, e.g. by the OOM killer; "
                     "log " + (work_dir / "zygote.log").string() + "), and every worker with it; a new one was started. "
                     "The candidate was not judged: judge it again";

  Verdict v = judge(m, jo);
  v.provenance["scaled_constants"] = scaled;
  // KernelBench's parameter rule (kgym/parameter_check.hpp): a wrong output from a model whose
  // parameters differ from the reference's says which one (a message only; the cases decided).
  if (v.outcome == Outcome::incorrect || v.outcome == Outcome::contract_violation)
    if (auto diff = parameter_difference(reference_parameters, candidate_parameters); diff && !v.messages.empty())
      v.messages.front() += "; " + *diff;
  return v;
}

Engine::Engine(EngineOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  // Fail fast on an unusable device (e.g. --device cuda without a GPU) instead of blaming every
  // candidate for it: the reference worker must start and describe the device first.
  try {
    environment();
  } catch (const std::exception& e) {
    std::string log;
    try {
      log = read_file(impl_->work_dir / "reference" / "worker.log");
      if (log.size() > 1500) log = log.substr(log.size() - 1500);
    } catch (const Error&) {
    }
    throw Error(ErrorKind::usage, "device '" + impl_->options.device.name() + "' is not usable: the reference worker "
                                  "could not start on it (" + e.what() + "). " +
                                  (!impl_->options.device.is_cpu()
                                       ? "Is there an NVIDIA GPU and driver here (nvidia-smi)? Use --device cpu "
                                         "otherwise. "
                                       : "") +
                                  "Worker log:\n" + log);
  }
}
Engine::~Engine() = default;

std::string Engine::describe() const { return "engine " + impl_->options.device.name(); }

TaskProbe Engine::probe_task(const Task& task, double scale) {
  std::lock_guard device(impl_->device_mutex);
  Measurements m;
  auto r = impl_->ask_reference({{"op", "probe_task"}, {"source", task.source}, {"task_id", task.id}, {"scale", scale}},
                                {}, Timeouts{}.reference_s, m);
  return read_task_probe(task.id, scale, r ? &r->header : nullptr, m.task_failure.value_or("no reply"));
}

nlohmann::json Engine::environment() {
  std::lock_guard device(impl_->device_mutex);
  impl_->reference_worker();
  return impl_->environment;
}

Verdict Engine::evaluate(const Task& task, const Candidate& cand, const EvalOptions& eo) {
  if (eo.n_cases < 1) throw Error(ErrorKind::usage, "--cases must be at least 1");
  if (!(eo.scale > 0)) throw Error(ErrorKind::usage, "--scale must be positive");
  const std::string profile_name(policy::to_string(eo.policy_profile));
  Verdict v;
  if (cand.empty()) {
    v = verdict_without_run(Outcome::no_candidate, Gate::none,
                            "no candidate code (empty or \"None\"): nothing to judge");
  } else {
    // Gate 1: policy, from the source alone, before anything of the candidate runs.
    const CandidateFormat& cand_format = find_format(cand.format);  // Error(usage) for an unknown one
    policy::PolicyContext ctx{eo.policy_profile, policy::infer_task_dtype(task.source), task.source};
    const policy::PolicyReport report = cand_format.policy_check(cand.code, ctx);
    const policy::Finding* first_reject = nullptr;
    for (const auto& f : report.findings)
      if (f.severity == policy::Severity::reject && !first_reject) first_reject = &f;
    if (!report.parsed) {
      // Where it fails to parse, under every profile (the strict check's syntax finding: the
      // `off` profile records no findings of its own).
      policy::PolicyContext located = ctx;
      located.profile = policy::Profile::strict;
      const policy::PolicyReport syntax = cand_format.policy_check(cand.code, located);
      const policy::Finding* at = nullptr;
      for (const auto& f : syntax.findings)
        if (f.rule_id == "syntax_error" && !at) at = &f;
      const std::string where =
          at ? fmt::format("line {}, column {}: {}", at->line, at->column, at->snippet) : std::string("(no location)");
      const std::optional<std::string> python_says = python_syntax_error(impl_->options.python, cand.code);
      v = verdict_without_run(Outcome::build_failed, Gate::build,
                              "candidate does not parse: " +
                                  (python_says ? *python_says
                                               : where + " (Python itself compiles it; kgym's parser, tree-sitter-python, "
                                                         "does not: write the construct there another way)"));
      Failure f;
      f.stage = "parse";
      f.type = "SyntaxError";
      f.message = python_says ? *python_says : where;
      v.measurements.load.failure = f;
    } else if (first_reject) {
      v = verdict_without_run(Outcome::policy_rejected, Gate::policy,
                              "[" + first_reject->rule_id + "] " +
                                  (first_reject->line > 0 ? "line " + std::to_string(first_reject->line) + ": " : "") +
                                  first_reject->message + " (policy profile " + profile_name +
                                  (eo.policy_profile != policy::Profile::off ? "; a plain-PyTorch candidate is judged only under --profile off)"
                                                              : ")"));
    } else {
      v = impl_->run(task, cand, eo);
    }
    for (const auto& f : report.findings) v.policy_findings.push_back(f);
    if (v.measurements.link)  // the link check's findings, listed with the source scan's (line 0: the built file)
      for (const LinkFinding& f : v.measurements.link->findings)
        v.policy_findings.push_back({{"rule_id", f.rule_id}, {"severity", f.severity}, {"message", f.message},
                                     {"line", 0}, {"column", 0}, {"snippet", ""}, {"gate", "link"}});
    v.provenance["policy_profile"] = profile_name;
  }
  v.task_id = task.id;
  v.candidate_id = cand.id;
  v.reward_name = eo.reward.name();
  v.reward = eo.reward(v, eo.reward_context);
  v.provenance["kgym"] = KGYM_VERSION;
  v.provenance["device"] = impl_->options.device.name();
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
