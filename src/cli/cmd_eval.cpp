// `kgym eval`: judge candidates on tasks, write one JSON verdict per line, print a summary.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <optional>
#include <map>
#include <set>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>

#include "commands.hpp"
#include "kgym/candidate.hpp"
#include "kgym/engine.hpp"
#include "kgym/error.hpp"
#include "kgym/paths.hpp"
#include "kgym/policy.hpp"
#include "kgym/report.hpp"
#include "kgym/reward.hpp"
#include "kgym/taskgen.hpp"
#include "kgym/hash.hpp"
#include "kgym/run.hpp"
#include "kgym/store.hpp"

namespace kgym::cli {
namespace fs = std::filesystem;

namespace {

struct EvalArgs {
  std::string suite, candidates, out, device = "cpu", python = "python3", reward = "kevin", profile;
  std::string run_dir, db;  ///< run directory (verdicts, SQLite, manifest); shared SQLite database
  std::vector<std::string> tasks;
  int cases = 5, jobs = 0;
  double scale = 1.0;
  std::optional<double> atol, rtol;
  bool compile_baseline = false, no_compile_baseline = false, no_timing = false, resume = false, quiet = false;
  bool no_other_shape = false;  // --no-other-shape (a plain flag: CLI11 renders a negated one as "{false}")
  EvalOptions eval;
};

std::string short_line(const Verdict& v) {
  std::string s = fmt::format("{:<18} {}", to_string(v.outcome), v.task_id);
  if (!v.candidate_id.empty() && v.candidate_id != v.task_id) s += " <- " + v.candidate_id;  // which file
  if (v.speedup_eager) s += fmt::format("  {:.3g}x", *v.speedup_eager);
  if (!v.messages.empty()) {
    std::string m = v.messages.front();
    if (auto nl = m.find('\n'); nl != std::string::npos) m = m.substr(0, nl);
    // (a policy rejection's line ends with the hint a newcomer needs: under strict a plain-PyTorch
    // candidate is judged only under --profile off; the fresh user saw it cut off)
    const std::size_t width = v.outcome == Outcome::policy_rejected ? 260 : 110;
    if (m.size() > width) m = m.substr(0, width - 3) + "...";
    s += "  | " + m;
  }
  return s;
}

/// No --suite and no --candidates: the built-in default (examples/suite x examples/candidates,
/// profile off unless given). Returns whether it applies.
bool use_builtin_default(EvalArgs& a, const fs::path& root) {
  const bool builtin = a.suite.empty() && a.candidates.empty();
  if (builtin) {
    a.suite = (root / "examples" / "suite").string();
    a.candidates = (root / "examples" / "candidates").string();
    if (a.profile.empty()) a.profile = "off";
    std::fprintf(stderr, "kgym eval: no --suite/--candidates given: running the built-in default: the "
                         "generated default suite (kgym tasks list) with its honest solutions, and the "
                         "examples in %s with honest and broken candidates; these are plain PyTorch, so the "
                         "policy profile is '%s' (--profile strict rejects them)\n",
                 (root / "examples").c_str(), a.profile.c_str());
  }
  return builtin;
}

/// A run directory (kgym generate's output) as candidates: judge RUN/candidates.jsonl, write
/// the verdicts, the SQLite store and the manifest into the run. Then --out defaults into
/// --run-dir, and --candidates is required.
void resolve_run_dir(EvalArgs& a) {
  if (!a.candidates.empty() && run::is_run_dir(a.candidates)) {
    if (a.run_dir.empty()) a.run_dir = a.candidates;
    a.candidates = (fs::path(a.candidates) / run::kCandidates).string();
    if (!fs::exists(a.candidates))
      throw Error(ErrorKind::input, "run directory has no " + std::string(run::kCandidates) + ": " + a.candidates);
  }
  if (!a.run_dir.empty() && a.out.empty()) a.out = (fs::path(a.run_dir) / run::kVerdicts).string();
  if (a.candidates.empty())
    throw Error(ErrorKind::usage, "--candidates is required (a directory of <task>.py files, one such file, or a .jsonl file)");
}

/// The suite (--suite), required where candidate files are matched to tasks by name.
std::optional<Suite> load_selected_suite(const EvalArgs& a) {
  std::optional<Suite> suite;
  if (!a.suite.empty()) {
    suite = load_suite(a.suite);
  } else if (fs::is_directory(a.candidates) || fs::path(a.candidates).extension() == ".py") {
    throw Error(ErrorKind::usage, "--suite DIR is required to match candidate files to tasks "
                                  "(e.g. --suite ../shared/data/kernelbench)");
  }
  return suite;
}

/// A --tasks pattern that matches no task fails here, before any work (for the built-in
/// default: no task of the examples nor of the generated suite `generated`).
void check_task_patterns(const EvalArgs& a, bool builtin, const std::optional<Suite>& suite,
                         const std::vector<Evaluation>& generated) {
  if (a.tasks.empty() || !suite) return;
  if (!builtin) {
    select_tasks(*suite, a.tasks);
    return;
  }
  for (const auto& p : a.tasks) {
    const bool in_examples = std::any_of(suite->tasks.begin(), suite->tasks.end(),
                                         [&](const Task& t) { return task_matches(t, p); });
    const bool in_generated = std::any_of(generated.begin(), generated.end(),
                                          [&](const Evaluation& e) { return task_matches(e.task, p); });
    if (!in_examples && !in_generated)
      throw Error(ErrorKind::input, "--tasks pattern '" + p + "' matches no task of the built-in default: "
                                    "the examples in " + suite->root.string() +
                                    " (ids look like L1/19_ReLU; also L1, L1/19, globs) or the generated "
                                    "suite (ids like " + (generated.empty() ? std::string("gen/...") : generated.front().task.id) +
                                    "; `kgym tasks list` lists them)");
  }
}

/// The (task, candidate) pairs to judge: the candidates of the selected tasks, then the selected
/// generated ones. None is an input error that names the file names looked for.
std::vector<Evaluation> select_evaluations(const EvalArgs& a, const std::optional<Suite>& suite,
                                           std::vector<Evaluation>& generated) {
  std::vector<Evaluation> evals = load_evaluations(a.candidates, suite ? &*suite : nullptr, a.tasks);
  for (auto& e : generated)
    if (a.tasks.empty() || std::any_of(a.tasks.begin(), a.tasks.end(),
                                       [&](const std::string& p) { return task_matches(e.task, p); }))
      evals.push_back(std::move(e));
  if (!evals.empty()) return evals;
  // Name what was looked for: the selected tasks' file names (a --tasks L1/23 with only
  // 19_ReLU.py in the folder would otherwise get a message naming neither).
  std::string wanted;
  int shown = 0, total = 0;
  if (suite)
    for (const auto& t : suite->tasks) {
      if (!a.tasks.empty() && std::none_of(a.tasks.begin(), a.tasks.end(),
                                           [&](const std::string& p) { return task_matches(t, p); }))
        continue;
      ++total;
      if (shown++ < 4) wanted += (wanted.empty() ? "" : ", ") + task_stem(t.id) + ".py";
    }
  if (total > shown) wanted += ", ... (" + std::to_string(total) + " tasks)";
  throw Error(ErrorKind::input,
              "no candidate in " + a.candidates + " matches the selected tasks" +
                  (wanted.empty() ? std::string()
                                  : ": a folder of candidates needs files named like the tasks (" + wanted +
                                        ", or <task stem>/<name>.py); a .jsonl file needs rows with their task ids"));
}

/// The typed options (reward, profile, cases, scale, timing, baselines, tolerance) into a.eval,
/// parsed once, before any work; a note for full-size KernelBench inputs on the CPU.
void set_eval_options(EvalArgs& a, const std::vector<Evaluation>& evals, bool builtin) {
  const RewardName reward = parse_reward(a.reward);
  if (reward.needs_roofline_floor())
    throw Error(ErrorKind::usage, "--reward " + a.reward + " needs each task's roofline floor, which kgym eval does not "
                                  "compute; use kevin, log_speed or stepped here (kgym serve gives roofline floors "
                                  "with --roofline-bandwidth-gbs/--roofline-peak-tflops)");
  const policy::Profile profile = parse_profile(a.profile.empty() ? "strict" : a.profile);

  // Full-size KernelBench on the CPU: level-1 inputs reach several GB each, and a verdict then
  // takes minutes and most of a small machine's memory with nothing on screen. A size constant
  // of 65536 or more in a selected task's source says so.
  if (a.device == "cpu" && a.scale == 1.0 && !a.quiet && !builtin) {
    for (const auto& e : evals)
      if (has_full_size_inputs(e.task)) {
        std::fprintf(stderr, "kgym eval: note: %s has full-size inputs (a size constant of 65536 or more); on the CPU a "
                             "verdict can take minutes and many GB of memory: --scale 0.05 shrinks every size "
                             "constant to 5%%\n", e.task.id.c_str());
        break;
      }
  }
  EvalOptions& eo = a.eval;
  eo.n_cases = a.cases;
  eo.scale = a.scale;
  eo.reward = reward;
  eo.policy_profile = profile;
  eo.time_candidate = !a.no_timing;
  eo.compile_baseline = a.compile_baseline || (a.device != "cpu" && !a.no_compile_baseline);
  if (a.atol || a.rtol) eo.tolerance = Tolerance{a.atol.value_or(1e-4), a.rtol.value_or(1e-4)};
}

using PairKey = std::pair<std::string, std::string>;  ///< (task id, candidate id)

/// --resume: the verdicts already in --out, by (task, candidate). A torn last line from an
/// interrupted run is left out (it is judged again).
std::map<PairKey, nlohmann::json> read_kept_verdicts(const EvalArgs& a) {
  std::map<PairKey, nlohmann::json> kept;
  if (!a.resume || !fs::exists(a.out)) return kept;
  std::ifstream in(a.out);
  std::string line;
  while (std::getline(in, line)) {
    try {
      auto j = nlohmann::json::parse(line);
      PairKey key{j.value("task_id", ""), j.value("candidate_id", "")};
      kept[key] = std::move(j);
    } catch (const nlohmann::json::exception&) {
      // a torn last line from an interrupted run: it is re-evaluated
    }
  }
  return kept;
}

/// --out's folder must take a new file before the workers start (they take seconds to minutes;
/// `--out /proc/x.jsonl` would otherwise fail only after them). A probe file is made and
/// removed; --out itself is opened (and, without --resume, truncated) only once the device works.
void check_out_writable(const EvalArgs& a) {
  const fs::path out_path(a.out);
  const fs::path dir = out_path.has_parent_path() ? out_path.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path probe = dir / (".kgym-write-probe-" + std::to_string(::getpid()));
  bool writable = false;
  {
    std::ofstream p(probe, std::ios::trunc);
    writable = static_cast<bool>(p << "x" << std::flush);
  }
  fs::remove(probe, ec);
  if (writable && fs::exists(out_path)) writable = static_cast<bool>(std::ofstream(out_path, std::ios::app));
  if (!writable)
    throw Error(ErrorKind::input, "cannot write --out " + a.out + ": its folder " + dir.string() +
                                      " does not take new files (permissions, a read-only or special file system, a "
                                      "full disk); give another path");
}

/// SQLite: RUN/results.sqlite for a run directory and/or a shared --db (run name = the run's
/// folder name, else the verdicts file's stem).
std::vector<std::unique_ptr<ResultStore>> open_stores(const EvalArgs& a) {
  fs::path run_path = fs::absolute(a.run_dir.empty() ? fs::path(a.out) : fs::path(a.run_dir)).lexically_normal();
  if (run_path.filename().empty()) run_path = run_path.parent_path();
  const std::string run_name = a.run_dir.empty() ? run_path.stem().string() : run_path.filename().string();
  std::vector<std::unique_ptr<ResultStore>> stores;
  if (!a.run_dir.empty()) stores.push_back(std::make_unique<ResultStore>(fs::path(a.run_dir) / run::kResults, run_name));
  if (!a.db.empty()) stores.push_back(std::make_unique<ResultStore>(a.db, run_name));
  return stores;
}

/// What the run's manifest says of this evaluation: written when it starts (finished: null) and
/// completed at the end, so a run killed midway still says what it was judging and how.
struct EvalManifest {
  const EvalArgs& a;
  std::set<std::string> task_ids;
  std::string task_hashes;
  std::size_t candidates_total = 0;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::string started_at = run::utc_now();

  /// Takes what the manifest names from the evaluations (before they are moved into the work list).
  EvalManifest(const EvalArgs& args, const std::vector<Evaluation>& evals) : a(args), candidates_total(evals.size()) {
    for (const auto& e : evals) {
      if (task_ids.insert(e.task.id).second) task_hashes += sha256_hex(e.task.source);
    }
  }

  /// The manifest patch after `evaluated` verdicts; `environment` is the engine's (null before).
  nlohmann::json patch(std::size_t evaluated, bool finished, nlohmann::json environment) const {
    const EvalOptions& eo = a.eval;
    nlohmann::json eo_json = {{"cases", eo.n_cases}, {"scale", eo.scale}, {"reward", eo.reward.name()},
                              {"policy_profile", policy::to_string(eo.policy_profile)}, {"timing", eo.time_candidate},
                              {"compile_baseline", eo.compile_baseline}, {"transforms", eo.transforms},
                              {"warmup", eo.timing.warmup}, {"min_calls", eo.timing.min_calls},
                              {"max_calls", eo.timing.max_calls}, {"budget_ms", eo.timing.budget_ms}};
    std::string binary_hash;
    try {
      binary_hash = sha256_hex(read_file("/proc/self/exe"));
    } catch (const Error&) {
    }
    return nlohmann::json{
        {"kgym", KGYM_VERSION},
        {"tasks", std::vector<std::string>(task_ids.begin(), task_ids.end())},
        {"eval",
         {{"candidates", a.candidates},
          {"suite", a.suite},
          {"device", a.device},
          {"options", eo_json},
          {"verdicts", fs::absolute(a.out).lexically_normal().string()},  // --out, where it is not RUN/verdicts.jsonl
          {"candidates_total", candidates_total},
          {"evaluated_now", evaluated},
          {"resumed", a.resume},
          {"started", started_at},
          {"finished", finished ? nlohmann::json(run::utc_now()) : nlohmann::json(nullptr)},
          {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()}}},
        {"provenance",
         {{"environment", environment},
          {"kgym_binary_sha256", binary_hash},
          {"candidates_sha256", sha256_hex(read_file(a.candidates))},
          {"tasks_sha256", sha256_hex(task_hashes)}}}};
  }
};

/// A run directory holds its candidates as rows (run.hpp), so that it can be re-judged anywhere
/// (`--candidates RUN`) whatever they came from: files, a folder, a .jsonl. Written atomically,
/// and only where the run has none: a run's own rows (kgym generate's) are never replaced.
void write_run_candidates(const EvalArgs& a, const std::vector<Evaluation>& evals) {
  const fs::path rows = fs::path(a.run_dir) / run::kCandidates;
  std::string text;
  for (const auto& e : evals) {
    nlohmann::json row = {{"task_id", e.candidate.task_id}, {"candidate_id", e.candidate.id}, {"code", e.candidate.code}};
    if (e.candidate.ref_code) row["ref_code"] = *e.candidate.ref_code;
    text += row.dump() + "\n";
  }
  std::error_code same_ec;
  if (!fs::exists(rows)) {
    const fs::path tmp = rows.string() + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << text;
      if (!out) throw Error(ErrorKind::input, "cannot write " + tmp.string() + ": check the disk and permissions");
    }
    fs::rename(tmp, rows);
  } else if (!fs::equivalent(rows, a.candidates, same_ec) && read_file(rows) != text && !a.quiet) {
    std::fprintf(stderr, "kgym eval: note: %s already holds other candidates' rows; they are kept (this run's "
                         "verdicts are in %s)\n", rows.c_str(), a.out.c_str());
  }
}

/// The evaluations split for --resume: those to judge now (`todo`) and this selection's verdicts
/// already in --out (`kept_verdicts`). A kept verdict is out of date when its provenance names
/// another candidate source, task source, policy profile, scale or device than this run's (an
/// edited kernel, or a file judged under another profile); it is judged again (counted in
/// `stale`) and the new line is appended after it.
struct ResumeSplit {
  std::vector<Evaluation> todo;
  std::vector<Verdict> kept_verdicts;
  std::size_t stale = 0;
};

ResumeSplit split_for_resume(const EvalArgs& a, std::vector<Evaluation>& evals,
                             const std::map<PairKey, nlohmann::json>& kept) {
  const EvalOptions& eo = a.eval;
  std::set<PairKey> done;
  for (const auto& [key, j] : kept) done.insert(key);
  ResumeSplit s;
  auto out_of_date = [&](const nlohmann::json& j, const Evaluation& e) {
    const nlohmann::json p = j.value("provenance", nlohmann::json::object());
    auto differs = [&](const char* key, const nlohmann::json& now) { return p.contains(key) && p[key] != now; };
    return differs("candidate_sha256", sha256_hex(e.candidate.code)) || differs("task_sha256", sha256_hex(e.task.source)) ||
           differs("policy_profile", policy::to_string(eo.policy_profile)) || differs("scale", eo.scale) || differs("device", a.device);
  };
  for (auto& e : evals) {
    if (done.count({e.task.id, e.candidate.id}) && out_of_date(kept.at({e.task.id, e.candidate.id}), e)) {
      done.erase({e.task.id, e.candidate.id});
      ++s.stale;
    }
    if (!done.count({e.task.id, e.candidate.id})) {
      s.todo.push_back(std::move(e));
      continue;
    }
    try {
      s.kept_verdicts.push_back(kept.at({e.task.id, e.candidate.id}).get<Verdict>());
    } catch (const std::exception&) {
      // a line of another shape: it is kept in the file, not summarised
    }
  }
  return s;
}

/// Judges `todo` on `jobs` threads; each verdict is appended to `out` and flushed at once (an
/// interrupted run keeps them), added to the stores, and shown as a progress line. The first
/// error stops the work and is rethrown.
std::vector<Verdict> judge_all(const EvalArgs& a, Engine* engine, const std::vector<Evaluation>& todo, int jobs,
                               std::ofstream& out, std::vector<std::unique_ptr<ResultStore>>& stores) {
  std::vector<Verdict> verdicts;
  std::mutex mutex;
  std::atomic<std::size_t> next{0};
  std::exception_ptr fatal;
  auto worker = [&] {
    for (;;) {
      std::size_t i = next++;
      if (i >= todo.size()) return;
      try {
        Verdict v = engine->evaluate(todo[i].task, todo[i].candidate, a.eval);
        std::lock_guard lock(mutex);
        out << nlohmann::json(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        out.flush();
        if (!out) throw Error(ErrorKind::input, "writing " + a.out + " failed (disk full?); verdicts so far are kept");
        for (auto& st : stores) st->add(v);
        verdicts.push_back(std::move(v));
        if (!a.quiet)
          std::fprintf(stderr, "[%zu/%zu] %s\n", verdicts.size(), todo.size(), short_line(verdicts.back()).c_str());
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!fatal) fatal = std::current_exception();
        next = todo.size();
        return;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(1, std::min<int>(jobs, static_cast<int>(todo.size()))); ++t)
    threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  if (fatal) std::rethrow_exception(fatal);
  return verdicts;
}

/// The summary covers the whole selection: what was judged now and what --resume kept (a
/// resumed run's summary of its last few verdicts alone would read as the whole run's).
void print_summary(const EvalArgs& a, const std::vector<Verdict>& verdicts, std::vector<Verdict>& kept_verdicts) {
  if (!kept_verdicts.empty()) {
    std::printf("\n(summary of %zu verdicts: %zu judged now, %zu kept from %s)", verdicts.size() + kept_verdicts.size(),
                verdicts.size(), kept_verdicts.size(), a.out.c_str());
    kept_verdicts.insert(kept_verdicts.end(), verdicts.begin(), verdicts.end());
    std::printf("\n%s", render_summary(summarize(kept_verdicts)).c_str());
  } else {
    std::printf("\n%s", render_summary(summarize(verdicts)).c_str());
  }
  std::printf("verdicts: %s\n", a.out.c_str());
}

void run_eval(EvalArgs& a) {
  const bool builtin = use_builtin_default(a, install_root());
  resolve_run_dir(a);
  const std::optional<Suite> suite = load_selected_suite(a);
  // The built-in default also holds the generated default suite (a few tasks per family) with
  // honest solutions: --tasks selects among both.
  std::vector<Evaluation> generated;
  if (builtin) generated = taskgen::default_suite_evaluations();
  check_task_patterns(a, builtin, suite, generated);
  std::vector<Evaluation> evals = select_evaluations(a, suite, generated);
  set_eval_options(a, evals, builtin);

  // Output: verdicts are appended and flushed one by one, so an interrupted run keeps them.
  if (a.out.empty()) a.out = "kgym-verdicts.jsonl";
  const std::map<PairKey, nlohmann::json> kept = read_kept_verdicts(a);  // --resume: for the summary
  check_out_writable(a);
  std::vector<std::unique_ptr<ResultStore>> stores = open_stores(a);
  const EvalManifest manifest(a, evals);
  if (!a.run_dir.empty()) run::update_manifest(a.run_dir, manifest.patch(0, false, nullptr));
  if (!a.run_dir.empty()) write_run_candidates(a, evals);

  ResumeSplit split = split_for_resume(a, evals, kept);
  const std::vector<Evaluation>& todo = split.todo;
  std::fprintf(stderr, "kgym eval: %zu candidate(s) on %s\n", todo.size(), a.device.c_str());
  if (a.resume && manifest.candidates_total > todo.size())  // ("0 candidate(s)" alone says nothing of why)
    std::fprintf(stderr, "kgym eval: --resume: %zu already judged in %s, kept and not judged again\n",
                 manifest.candidates_total - todo.size(), a.out.c_str());
  if (split.stale > 0)
    std::fprintf(stderr,
                 "kgym eval: --resume: %zu verdict(s) in %s are out of date (the candidate's or the task's source, the "
                 "profile, the scale or the device changed) and are judged again; the new lines are appended\n",
                 split.stale, a.out.c_str());

  EngineOptions opts;
  opts.device = parse_device(a.device);
  opts.python = a.python;
  opts.build_jobs = a.jobs > 0 ? a.jobs : (a.device == "cpu" ? 1 : 8);
  // Before --out is opened: an unusable device fails with a clear message and leaves no empty
  // (or, without --resume, truncated) verdict file behind. A resumed run with nothing left to
  // judge starts no workers.
  std::optional<Engine> engine;
  if (!todo.empty()) {
    std::fprintf(stderr, "kgym eval: starting workers on %s...\n", a.device.c_str());
    engine.emplace(opts);
  }
  if (fs::path(a.out).has_parent_path()) fs::create_directories(fs::path(a.out).parent_path());
  std::ofstream out(a.out, a.resume ? std::ios::app : std::ios::trunc);
  if (!out) throw Error(ErrorKind::input, "cannot write --out " + a.out);

  std::vector<Verdict> verdicts = judge_all(a, engine ? &*engine : nullptr, todo, opts.build_jobs, out, stores);

  if (!a.run_dir.empty() || !stores.empty()) {
    // Manifest: what was judged, how, where, and how long it took (merged into the run's own).
    nlohmann::json patch = manifest.patch(verdicts.size(), true, engine ? engine->environment() : nlohmann::json(nullptr));
    if (!a.run_dir.empty()) {
      run::update_manifest(a.run_dir, patch);
      patch = run::read_manifest(a.run_dir);
    }
    for (auto& st : stores) st->write_manifest(patch);
  }
  print_summary(a, verdicts, split.kept_verdicts);
}

}  // namespace

void add_eval_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<EvalArgs>();
  auto* cmd = app.add_subcommand("eval", "Judge candidates on tasks; write one JSON verdict per line");
  cmd->footer("Without --suite and --candidates: the built-in default run (the generated default suite with its "
              "honest solutions, and examples/suite x examples/candidates).\n");
  cmd->add_option("--suite", a->suite, "Directory of KernelBench problems (level<N>/<name>.py)");
  cmd->add_option("--candidates", a->candidates,
                  "Directory of <task stem>.py candidates, one such file (or <task stem>/<name>.py), a .jsonl "
                  "file (kgym or CUDA-L1 rows), or a run directory made by `kgym generate`");
  cmd->add_option("--tasks", a->tasks, "Task ids, globs or levels (L1, L1/19, L1/19_ReLU, '*ReLU*')")->delimiter(',');
  cmd->add_option("--device", a->device, "cpu, cuda or cuda:N")->capture_default_str()->check(CLI::Validator(
      [](std::string& v) {
        try {
          parse_device(v, "--device");
          return std::string();
        } catch (const Error& e) {
          return std::string(e.what());
        }
      },
      "DEVICE"));
  cmd->add_option("--out", a->out, "Verdicts JSONL file (default kgym-verdicts.jsonl)");
  cmd->add_option("--run-dir", a->run_dir,
                  "Write a run directory: verdicts.jsonl (or --out where given; manifest.json's eval.verdicts "
                  "names it), results.sqlite and manifest.json (a run directory given as --candidates is its own "
                  "--run-dir)");
  cmd->add_option("--db", a->db, "Also store the verdicts in this (shared) SQLite database");
  cmd->add_flag("--resume", a->resume, "Append to --out, skipping (task, candidate) pairs already judged there with the same candidate and task sources, profile, scale and device (others are judged again)");
  cmd->add_option("--cases", a->cases, "Correctness cases per candidate, each with a fresh secret seed")
      ->capture_default_str()->check(CLI::Range(1, 100));
  cmd->add_option("--scale", a->scale, "Multiply the task's module-level size constants (ints >= 16) by this")
      ->capture_default_str()->check(CLI::Validator(
          [](std::string& v) { return std::stod(v) > 0 ? std::string() : std::string("must be > 0 (a factor for the size constants, e.g. 0.05)"); },
          "POSITIVE"));
  cmd->add_option("--profile,--policy-profile", a->profile,
                  "Policy profile: strict (default), hybrid, kernelbench or off (see docs/policy_rules.md); "
                  "off for the built-in default run");
  cmd->add_option("--reward", a->reward, "Reward function: kevin, log_speed or stepped, optionally :noise_gate=on|off for kevin and log_speed (docs/rewards.md)")->capture_default_str();
  cmd->add_option("--atol", a->atol, "Absolute tolerance for float32 outputs (default 1e-4)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--rtol", a->rtol, "Relative tolerance for float32 outputs (default 1e-4)")->check(CLI::NonNegativeNumber);
  cmd->add_flag("--compile-baseline", a->compile_baseline, "Also time torch.compile (default on for cuda)");
  cmd->add_flag("--no-compile-baseline", a->no_compile_baseline, "Do not time torch.compile");
  cmd->add_flag("--no-timing", a->no_timing, "Check correctness only");
  cmd->add_option("--jobs", a->jobs, "Candidates loading/building at once (0: the default, 1 on cpu, 8 on cuda)")
      ->check(CLI::Range(0, 256));
  cmd->add_option("--python", a->python, "Python interpreter with torch 2.11")->capture_default_str();
  cmd->add_option("--timeout-load", a->eval.timeouts.load_s, "Seconds for parse+import+build+construct")->capture_default_str();
  cmd->add_option("--timeout-case", a->eval.timeouts.case_s, "Seconds for one correctness case")->capture_default_str();
  cmd->add_option("--timeout-timing", a->eval.timeouts.timing_s, "Seconds for the timing phase")->capture_default_str();
  cmd->add_option("--warmup", a->eval.timing.warmup, "Untimed calls before timing")->capture_default_str();
  cmd->add_option("--min-calls", a->eval.timing.min_calls, "Minimum timed calls")->capture_default_str();
  cmd->add_option("--max-calls", a->eval.timing.max_calls, "Maximum timed calls")->capture_default_str();
  cmd->add_option("--rounds", a->eval.timing.rounds,
                  "Interleaved timing rounds (candidate, eager, compile, candidate, ...)")->capture_default_str()
      ->check(CLI::Range(1, 16));
  cmd->add_flag("--no-other-shape", a->no_other_shape,
                "Skip the correctness case with changed size constants (x0.75, odd)");
  cmd->add_flag("-q,--quiet", a->quiet, "No per-verdict progress lines");
  cmd->callback([a, &exit_code] {
    a->eval.other_shape = !a->no_other_shape;
    run_eval(*a);
    exit_code = kExitOk;
  });
}

}  // namespace kgym::cli
