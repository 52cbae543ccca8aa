// `kgym report`: metrics of a run (per level / family / split), claims, implausible speedups and a
// paired comparison with a baseline run; terminal table, JSON, markdown and an HTML page.

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "commands.hpp"
#include "kgym/error.hpp"
#include "kgym/paths.hpp"
#include "kgym/report.hpp"
#include "kgym/run.hpp"
#include "kgym/task.hpp"

namespace kgym::cli {
namespace fs = std::filesystem;

namespace {

struct ReportArgs {
  std::string run, baseline, claims, floors, json_out, markdown_out, html_out, python = "python3";
  ReportOptions options;
  bool quiet = false;
};

std::string run_name(const fs::path& p) {
  fs::path n = fs::absolute(p).lexically_normal();
  if (n.filename().empty()) n = n.parent_path();
  return fs::is_directory(n) ? n.filename().string() : n.stem().string();
}

void write_text(const std::string& path, const std::string& text) {
  if (fs::path(path).has_parent_path()) fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::trunc);
  out << text;
  if (!out) throw Error(ErrorKind::input, "cannot write " + path);
}

/// Shell-quotes one argument for std::system.
std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

void run_report(ReportArgs& a) {
  if (!a.claims.empty()) a.options.claims = read_claims(a.claims);
  if (!a.floors.empty()) {
    nlohmann::json f = nlohmann::json::parse(read_file(a.floors), nullptr, false);
    if (!f.is_object()) throw Error(ErrorKind::input, a.floors + ": --floors needs a JSON object {task_id: floor_ms}");
    for (auto it = f.begin(); it != f.end(); ++it)
      if (it.value().is_number()) a.options.floor_ms[it.key()] = it.value().get<double>();
  }
  const std::vector<Verdict> verdicts = run::load_verdicts(a.run);
  if (verdicts.empty()) throw Error(ErrorKind::input, a.run + " holds no verdicts");
  Report r = build_report(verdicts, a.options);
  r.name = run_name(a.run);
  if (run::is_run_dir(a.run)) r.manifest = run::read_manifest(a.run);
  if (!a.baseline.empty()) {
    r.comparison = compare_runs(verdicts, run::load_verdicts(a.baseline), a.options);
    r.comparison->baseline_name = run_name(a.baseline);
  }
  if (!a.quiet) std::printf("%s", render_report(r).c_str());
  const nlohmann::json j = to_json(r);
  std::string json_out = a.json_out;
  if (json_out.empty() && !a.html_out.empty()) json_out = a.html_out + ".json";
  if (!json_out.empty()) write_text(json_out, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  if (!a.markdown_out.empty()) write_text(a.markdown_out, render_report_markdown(r));
  if (!a.html_out.empty()) {
    const fs::path tool = install_root() / "scripts" / "report_html.py";
    if (!fs::exists(tool)) throw Error(ErrorKind::input, "HTML tool not found: " + tool.string());
    const std::string cmd = quote(a.python) + " " + quote(tool.string()) + " " + quote(json_out) + " " + quote(a.html_out);
    if (std::system(cmd.c_str()) != 0)
      throw Error(ErrorKind::input, "the HTML page could not be made (" + cmd +
                                        "); is matplotlib installed? (scripts/install.sh installs it)");
    if (!a.quiet) std::printf("html: %s\n", a.html_out.c_str());
  }
  if (!json_out.empty() && !a.quiet) std::printf("json: %s\n", json_out.c_str());
  if (!a.markdown_out.empty() && !a.quiet) std::printf("markdown: %s\n", a.markdown_out.c_str());
}

}  // namespace

void add_report_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand("report", "Metrics of a run: fast_p, pass@k, claims, implausible speedups, comparison");
  cmd->add_option("run", a->run, "Run directory, verdicts .jsonl or results .sqlite")->required();
  cmd->add_option("--baseline", a->baseline, "A second run on the same tasks: paired bootstrap of the differences");
  cmd->add_option("--claims", a->claims, "JSONL with claimed speedups (score_default, score_torch_compile_default)");
  cmd->add_option("--floors", a->floors, "JSON {task_id: roofline floor in ms}: faster runtimes are flagged");
  cmd->add_option("--bandwidth-gbs", a->options.bandwidth_gbs,
                  "Device memory bandwidth (GB/s; H200: 4800): flag runtimes below the output-write floor");
  cmd->add_option("--implausible", a->options.implausible_speedup, "Flag speedups above this")->capture_default_str();
  cmd->add_option("--ps", a->options.ps, "fast_p thresholds")->delimiter(',')->capture_default_str();
  cmd->add_option("--resamples", a->options.resamples, "Bootstrap resamples")->capture_default_str()->check(CLI::Range(100, 1000000));
  cmd->add_option("--seed", a->options.seed, "Bootstrap seed")->capture_default_str();
  cmd->add_option("--json", a->json_out, "Write the report as JSON");
  cmd->add_option("--markdown", a->markdown_out, "Write the main tables as markdown");
  cmd->add_option("--html", a->html_out, "Write a self-contained HTML page with plots (needs matplotlib)");
  cmd->add_option("--python", a->python, "Python for the HTML tool")->capture_default_str();
  cmd->add_flag("-q,--quiet", a->quiet, "No terminal table");
  cmd->callback([a, &exit_code] {
    run_report(*a);
    exit_code = kExitOk;
  });
}

}  // namespace kgym::cli
