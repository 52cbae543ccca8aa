// `kgym tasks list|show|export|audit`: the generated tasks (src/taskgen). Without a selection the
// generated default suite is used (`list` adds the examples' tasks before it: the built-in default
// suite that eval runs and serve serves); `--family`/`--seeds` select generated tasks by seed range.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "suite_probe.hpp"
#include "kgym/engine.hpp"
#include "kgym/error.hpp"
#include "kgym/taskgen.hpp"

namespace kgym::cli {
namespace {

namespace tg = kgym::taskgen;

/// Options shared by the subcommands that select a set of tasks.
struct Selection {
  std::vector<std::string> families;
  std::string seeds;            // "A:B" half-open, or "N" (one seed)
  std::string variant = "full";
  std::string dtype;
  std::string split;            // keep only this split
  std::string decontaminate;    // benchmark suite directory
  double threshold = 0.6;
};

void add_selection(CLI::App* cmd, Selection& s) {
  cmd->add_option("--family", s.families, "Families to generate from (repeatable; default: all)");
  cmd->add_option("--seeds", s.seeds,
                  "Seed range A:B (half-open) or one seed N; without --family/--seeds: the default suite");
  cmd->add_option("--variant", s.variant, "full | small | scaffold | epilogue (with --seeds)");
  cmd->add_option("--dtype", s.dtype, "float32 | float16 | bfloat16 (default: the family's default)");
  cmd->add_option("--split", s.split, "Keep only tasks of this split: train | transfer | heldout");
  cmd->add_option("--decontaminate", s.decontaminate,
                  "Benchmark suite directory (e.g. ../shared/data/kernelbench): drop train tasks whose "
                  "token-set Jaccard with a problem exceeds --threshold, and report them");
  cmd->add_option("--threshold", s.threshold, "Jaccard threshold for --decontaminate (default 0.6)");
}

/// The selected tasks and, with --decontaminate, the report (printed to stderr).
std::vector<tg::GeneratedTask> select(const Selection& s, nlohmann::json* report_out = nullptr) {
  std::vector<tg::GeneratedTask> tasks;
  if (s.families.empty() && s.seeds.empty()) {
    tasks = tg::default_suite();
  } else {
    std::uint64_t first = 0, count = 1;
    if (!s.seeds.empty()) {
      try {
        auto colon = s.seeds.find(':');
        first = std::stoull(s.seeds.substr(0, colon));
        count = colon == std::string::npos ? 1 : std::stoull(s.seeds.substr(colon + 1)) - first;
      } catch (const std::exception&) {
        throw Error(ErrorKind::usage, "--seeds '" + s.seeds + "' is not A:B or N (non-negative integers, A < B)");
      }
      if (count == 0 || count > 10000000)
        throw Error(ErrorKind::usage, "--seeds '" + s.seeds + "' is an empty or huge range; give A:B with A < B");
    }
    tg::GenOptions options;
    auto v = tg::variant_from_string(s.variant);
    if (!v) throw Error(ErrorKind::usage, "unknown --variant '" + s.variant + "'; use full, small, scaffold or epilogue");
    options.variant = *v;
    options.dtype = s.dtype;
    tasks = tg::generate_range(s.families, first, count, options);
  }
  if (!s.decontaminate.empty()) {
    tg::Decontaminator d(s.decontaminate, s.threshold);
    auto report = tg::decontaminate(tasks, d);
    std::fprintf(stderr, "decontamination: %zu tasks checked against %zu problems in %s; %zu of %zu train tasks "
                         "dropped (Jaccard > %.2f)\n",
                 report.checked, d.size(), s.decontaminate.c_str(), report.dropped, report.train, d.threshold());
    for (const auto& [id, nearest, sim] : report.reasons)
      std::fprintf(stderr, "  dropped %s: Jaccard %.3f with %s\n", id.c_str(), sim, nearest.c_str());
    if (report_out) *report_out = report.to_json();
    std::erase_if(tasks, [](const tg::GeneratedTask& t) { return t.dropped_from_train; });
  }
  if (!s.split.empty()) {
    auto split = tg::split_from_string(s.split);
    if (!split) throw Error(ErrorKind::usage, "unknown --split '" + s.split + "'; use train, transfer or heldout");
    std::erase_if(tasks, [&](const tg::GeneratedTask& t) { return t.split != *split; });
  }
  return tasks;
}

/// Engine settings of the degenerate-task audit.
struct AuditArgs {
  std::string device = "cpu", python = "python3";
  int cases = 5;
};

void add_audit_options(CLI::App* cmd, AuditArgs& a) {
  cmd->add_option("--device", a.device, "Device the audit runs on: cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--python", a.python, "Python interpreter with torch 2.11")->capture_default_str();
  cmd->add_option("--cases", a.cases, "Correctness cases per trivial answer")->capture_default_str()->check(CLI::Range(1, 100));
}

/// Runs the audit on `tasks`, removes the degenerate ones, prints one line per task to stderr.
std::vector<tg::AuditResult> run_audit(const AuditArgs& a, std::vector<tg::GeneratedTask>& tasks) {
  EngineOptions eo;
  eo.device = parse_device(a.device);
  eo.python = a.python;
  std::fprintf(stderr, "audit: judging 4 trivial answers and the honest solution of %zu tasks on %s...\n",
               tasks.size(), a.device.c_str());
  Engine engine(eo);
  EvalOptions options;
  options.n_cases = a.cases;
  auto results = tg::reject_degenerate(engine, tasks, options);
  std::size_t degenerate = 0, broken = 0;
  for (const auto& r : results) {
    std::string line;
    for (const auto& c : r.checks) line += fmt::format(" {}={}", c.candidate, to_string(c.outcome));
    std::fprintf(stderr, "  %-10s %-36s%s\n", r.degenerate ? "DEGENERATE" : (r.solution_ok ? "ok" : "SOLUTION?"),
                 r.task_id.c_str(), line.c_str());
    degenerate += r.degenerate;
    broken += !r.solution_ok;
  }
  std::fprintf(stderr, "audit: %zu of %zu tasks degenerate (rejected); %zu honest solutions not correct\n", degenerate,
               results.size(), broken);
  return results;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + ")";
}

/// `kgym tasks list`: the selected tasks (or, with --families, the registered families), as a table or JSONL.
void add_tasks_list(CLI::App* tasks, int& exit_code) {
  auto* list = tasks->add_subcommand("list", "List tasks (default: the built-in default suite, as eval runs it and serve serves it: the examples' tasks and the generated default suite)");
  auto list_sel = std::make_shared<Selection>();
  auto list_json = std::make_shared<bool>(false);
  auto list_families = std::make_shared<bool>(false);
  add_selection(list, *list_sel);
  list->add_flag("--json", *list_json, "One JSON object per task (JSONL)");
  list->add_flag("--families", *list_families, "List the registered families instead");
  list->callback([list_sel, list_json, list_families, &exit_code] {
    if (*list_families) {
      for (const auto* f : tg::Registry::instance().families()) {
        std::string variants, dtypes, ops;
        for (auto v : f->variants) variants += (variants.empty() ? "" : ",") + std::string(tg::to_string(v));
        for (const auto& d : f->dtypes) dtypes += (dtypes.empty() ? "" : ",") + d;
        for (const auto& o : f->ops) ops += (ops.empty() ? "" : ",") + o;
        if (*list_json)
          std::cout << nlohmann::json{{"family", f->name}, {"description", f->description}, {"level", f->level},
                                      {"ops", f->ops}, {"transfer_ops", f->transfer_ops}, {"variants", variants},
                                      {"dtypes", f->dtypes}}
                           .dump()
                    << "\n";
        else
          std::cout << fmt::format("{:<16} L{}  {}\n{:<16}      ops: {}\n{:<16}      variants: {}; dtypes: {}\n",
                                   f->name, f->level, f->description, "", ops, "", variants, dtypes);
      }
      exit_code = kExitOk;
      return;
    }
    auto selected = select(*list_sel);
    // Without --family/--seeds: the built-in default suite, the tasks `kgym eval` runs and `kgym
    // serve` serves without --suite: the examples' tasks (examples/suite; they have no split, so
    // --split leaves them out), then the generated default suite.
    std::vector<Task> examples;
    std::string examples_root;
    if (list_sel->families.empty() && list_sel->seeds.empty() && list_sel->split.empty()) {
      Suite builtin = builtin_suite();
      std::set<std::string> generated;
      for (const auto& t : tg::default_suite()) generated.insert(t.task.id);
      for (auto& t : builtin.tasks)
        if (!generated.count(t.id)) examples.push_back(std::move(t));
      examples_root = builtin.root.string();
    }
    if (*list_json) {
      for (const auto& t : examples)
        std::cout << nlohmann::json{{"id", t.id}, {"example", true}, {"level", t.level}, {"origin", t.origin}}.dump()
                  << "\n";
      for (const auto& t : selected) std::cout << tg::to_json(t).dump() << "\n";
    } else {
      std::cout << fmt::format("{:<34} {:<18} {:<9} {:<8} {:<8} {:<22} {:>12} {:>12}\n", "id", "op", "split", "variant",
                               "dtype", "output shape", "bytes", "flops");
      for (const auto& t : examples)
        std::cout << fmt::format("{:<34} {:<18} {:<9} {:<8} {:<8} {:<22} {:>12} {:>12}\n", t.id, "(example)", "-", "-",
                                 "-", "-", "-", "-");
      for (const auto& t : selected)
        std::cout << fmt::format("{:<34} {:<18} {:<9} {:<8} {:<8} {:<22} {:>12.4g} {:>12.4g}\n", t.task.id, t.op,
                                 tg::to_string(t.split), tg::to_string(t.variant), t.dtype, shape_text(t.output.shape),
                                 t.cost.bytes, t.cost.flops);
      if (examples.empty())
        std::cout << selected.size() << " tasks\n";
      else
        std::cout << fmt::format("{} tasks: {} examples ({}) and {} generated\n", examples.size() + selected.size(),
                                 examples.size(), examples_root, selected.size());
    }
    exit_code = kExitOk;
  });
}

/// `kgym tasks show ID`: one generated task's metadata and sources (--part picks one).
void add_tasks_show(CLI::App* tasks, int& exit_code) {
  auto* show = tasks->add_subcommand("show", "Show one generated task: metadata and sources");
  auto show_id = std::make_shared<std::string>();
  auto show_what = std::make_shared<std::string>("all");
  show->add_option("id", *show_id, "Task id, e.g. gen/softmax/42 or gen/conv2d/900001-small")->required();
  show->add_option("--part", *show_what, "all | json | source | solution | scaffold | trivial");
  show->callback([show_id, show_what, &exit_code] {
    auto t = tg::generate_from_id(*show_id);
    const std::string& w = *show_what;
    if (w == "json") std::cout << tg::to_json(t, true).dump(2) << "\n";
    else if (w == "source") std::cout << t.task.source;
    else if (w == "solution") std::cout << t.solution;
    else if (w == "scaffold") {
      if (t.scaffold.empty())
        throw Error(ErrorKind::input, *show_id + " has no scaffold; generate the -scaffold variant (e.g. " +
                                          tg::make_id(t.family, t.seed, {tg::Variant::scaffold, ""}, t.dtype) + ")");
      std::cout << t.scaffold;
    } else if (w == "trivial") {
      for (const auto& [name, src] : tg::trivial_candidates(t)) std::cout << "# ---- trivial: " << name << "\n" << src;
    } else if (w == "all") {
      std::cout << tg::to_json(t).dump(2) << "\n\n# ---- reference\n" << t.task.source
                << "\n# ---- honest solution\n" << t.solution;
      if (!t.scaffold.empty()) std::cout << "\n# ---- scaffold\n" << t.scaffold;
    } else {
      throw Error(ErrorKind::usage, "unknown --part '" + w + "'; use all, json, source, solution, scaffold or trivial");
    }
    exit_code = kExitOk;
  });
}

/// `kgym tasks audit`: the degenerate-task audit of the selected tasks, or with --suite the reference
/// probe of a KernelBench-format suite.
void add_tasks_audit(CLI::App* tasks, int& exit_code) {
  auto* aud = tasks->add_subcommand("audit",
                                    "Degenerate-task audit: judge trivial answers (zeros, ones, the input, its mean) and "
                                    "the honest solution of each task with the engine; exit 1 if any task is degenerate "
                                    "or an honest solution fails");
  auto aud_sel = std::make_shared<Selection>();
  auto aud_args = std::make_shared<AuditArgs>();
  auto aud_json = std::make_shared<bool>(false);
  add_selection(aud, *aud_sel);
  add_audit_options(aud, *aud_args);
  aud->add_flag("--json", *aud_json, "One JSON object per task on stdout");
  // With --suite: the reference probe of a KernelBench-format suite instead (suite_probe.hpp).
  auto aud_probe = std::make_shared<SuiteProbeArgs>();
  aud->add_option("--suite", aud_probe->suite,
                  "Probe a KernelBench-format suite instead: list which of its tasks' references run at --scale, "
                  "and why the others do not");
  aud->add_option("--scale", aud_probe->scale, "With --suite: the size factor the tasks are probed at")
      ->capture_default_str()->check(CLI::PositiveNumber);
  aud->add_option("--tasks", aud_probe->tasks, "With --suite: task ids, globs or levels (default: all)")->delimiter(',');
  aud->callback([aud_sel, aud_args, aud_json, aud_probe, &exit_code] {
    if (!aud_probe->suite.empty()) {
      aud_probe->device = aud_args->device;
      aud_probe->python = aud_args->python;
      aud_probe->json = *aud_json;
      exit_code = run_suite_probe_audit(*aud_probe);
      return;
    }
    auto selected = select(*aud_sel);
    auto results = run_audit(*aud_args, selected);
    bool findings = false;
    for (const auto& r : results) {
      findings |= r.degenerate || !r.solution_ok;
      if (*aud_json) std::cout << r.to_json().dump() << "\n";
    }
    exit_code = findings ? kExitFindings : kExitOk;
  });
}

/// `kgym tasks export DIR`: the selected tasks as KernelBench-format .py files with a manifest.
void add_tasks_export(CLI::App* tasks, int& exit_code) {
  auto* exp = tasks->add_subcommand("export", "Write tasks as KernelBench-format .py files");
  auto exp_sel = std::make_shared<Selection>();
  auto exp_dir = std::make_shared<std::string>();
  auto exp_layout = std::make_shared<std::string>("family");
  auto exp_solutions = std::make_shared<bool>(false);
  auto exp_trivial = std::make_shared<bool>(false);
  auto exp_audit = std::make_shared<bool>(false);
  auto exp_audit_args = std::make_shared<AuditArgs>();
  add_selection(exp, *exp_sel);
  exp->add_flag("--audit", *exp_audit,
                "Run the degenerate-task audit (needs python3 + torch) and leave out the tasks it rejects");
  add_audit_options(exp, *exp_audit_args);
  exp->add_flag("--trivial", *exp_trivial,
                "Also write the degenerate-task audit's trivial answers next to each task "
                "(<name>.trivial-<zeros|constant|input|mean>.py)");
  exp->add_option("dir", *exp_dir, "Output directory")->required();
  exp->add_option("--layout", *exp_layout,
                  "family: DIR/<family>/<id-stem>.py; flat: DIR/<family>_<id-stem>.py (loadable as a --suite)");
  exp->add_flag("--solutions", *exp_solutions,
                "Also write each honest solution (family: <stem>.solution.py; flat: DIR/solutions/<name>.py)");
  exp->callback([exp_sel, exp_dir, exp_layout, exp_solutions, exp_trivial, exp_audit, exp_audit_args, &exit_code] {
    nlohmann::json report;
    auto selected = select(*exp_sel, &report);
    nlohmann::json audit;
    if (*exp_audit) {
      audit = nlohmann::json::array();
      for (const auto& r : run_audit(*exp_audit_args, selected)) audit.push_back(r.to_json());
    }
    auto written = tg::export_tasks(selected, *exp_dir, *exp_layout, *exp_solutions);
    if (*exp_trivial)
      for (std::size_t i = 0; i < selected.size(); ++i)
        for (const auto& [name, src] : tg::trivial_candidates(selected[i])) {
          auto path = written[i];
          path.replace_extension(".trivial-" + name + ".py");
          std::ofstream(path) << src;
        }
    // A manifest with every task's metadata, so other harnesses get shapes and cost models too.
    nlohmann::json manifest = {{"tasks", nlohmann::json::array()}, {"layout", *exp_layout}};
    for (std::size_t i = 0; i < selected.size(); ++i) {
      auto j = tg::to_json(selected[i]);
      j["path"] = std::filesystem::relative(written[i], *exp_dir).string();
      manifest["tasks"].push_back(j);
    }
    if (!report.is_null()) manifest["decontamination"] = report;
    if (!audit.is_null()) manifest["audit"] = audit;
    std::ofstream(std::filesystem::path(*exp_dir) / "manifest.json") << manifest.dump(2) << "\n";
    std::fprintf(stderr, "wrote %zu tasks to %s (layout %s)\n", written.size(), exp_dir->c_str(), exp_layout->c_str());
    exit_code = kExitOk;
  });
}

}  // namespace

void add_tasks_command(CLI::App& app, int& exit_code) {
  auto* tasks = app.add_subcommand("tasks", "Tasks: list (the built-in default suite, or generated tasks), show, export (KernelBench format) and audit");
  tasks->require_subcommand(1);
  add_tasks_list(tasks, exit_code);
  add_tasks_show(tasks, exit_code);
  add_tasks_audit(tasks, exit_code);
  add_tasks_export(tasks, exit_code);
}

}  // namespace kgym::cli
