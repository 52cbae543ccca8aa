// `kgym check FILE|DIR|JSONL [--profile strict|hybrid|kernelbench|off] [--format text|jsonl]`:
// runs the policy gate (gate 1) on candidates without running them. Exit 1 when any candidate is
// rejected, 0 otherwise, 2 on bad input. `kgym check --built DIR|FILE.so`: the link check
// (gate 2) on shared objects already built (e.g. kgym's build cache), same exit codes.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "kgym/error.hpp"
#include "kgym/candidate.hpp"
#include "kgym/engine.hpp"
#include "kgym/policy.hpp"
#include "kgym/subprocess.hpp"

namespace kgym::cli {
namespace {

/// `kgym check --built`: the link check (policy::check_linked_symbols) on every `.so` file at or
/// below `path`. Returns the exit code (1 when any is rejected).
int check_built(const std::string& path, policy::Profile profile, bool jsonl) {
  namespace fs = std::filesystem;
  std::vector<fs::path> objects;
  std::size_t triton_skipped = 0;
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    objects.push_back(path);
  } else if (fs::is_directory(path, ec)) {
    for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->is_regular_file() && it->path().extension() == ".so") {
        // Triton's own launchers (kgym's cache keeps them under <build>/triton/): Triton builds
        // them, and they load the driver API by design; eval does not check them either.
        const std::string rel = it->path().lexically_relative(path).generic_string();
        if (("/" + rel).find("/triton/") != std::string::npos) {
          ++triton_skipped;
          continue;
        }
        objects.push_back(it->path());
      }
  } else {
    throw Error(ErrorKind::usage, "--built: '" + path + "' is neither a file nor a folder");
  }
  std::sort(objects.begin(), objects.end());
  if (objects.empty())
    throw Error(ErrorKind::usage, "--built: no .so file under '" + path + "'" +
                                      (triton_skipped ? " but Triton's own launchers (not checked)" : "") +
                                      "; give a build folder (e.g. ~/.cache/kgym/build/<id>/torch_extensions) or a .so file");
  // torch's own C exports (policy::torch_c_exports), from the torch python3 imports: as in eval,
  // an import of any of them (MKL, oneDNN, ...) is library compute.
  const std::set<std::string>* torch_exports = nullptr;
  {
    const ProcessResult r = run_process(
        {"python3", "-c", "import os, torch; print(os.path.join(os.path.dirname(torch.__file__), 'lib'))"}, 60000);
    std::string dir = r.out;
    while (!dir.empty() && (dir.back() == '\n' || dir.back() == '\r')) dir.pop_back();
    if (r.ok() && !dir.empty()) torch_exports = policy::torch_c_exports(dir);
    if (!torch_exports)
      std::cerr << "kgym check --built: torch's own exports could not be read (python3 cannot import torch?); "
                   "the symbol rules stand alone\n";
  }
  int rejected = 0;
  for (const fs::path& o : objects) {
    std::string error;
    const auto symbols = policy::undefined_symbols(o.string(), &error);
    if (!symbols) {
      if (error.rfind("nm could not run", 0) == 0) throw Error(ErrorKind::usage, error);
      std::replace(error.begin(), error.end(), '\n', ' ');
      if (objects.size() == 1) throw Error(ErrorKind::usage, "--built: " + error + " (not a shared object?)");
      // as in eval, an object nm cannot read is rejected (dynamic_code)
      std::cout << o.string() << ": REJECTED (not readable as a shared object: " << error << ")\n";
      ++rejected;
      continue;
    }
    auto findings = policy::check_linked_symbols(*symbols, o.filename().string(), profile, torch_exports);
    if (const auto needed = policy::needed_libraries(o.string()))
      for (auto& f : policy::check_needed_libraries(*needed, o.filename().string(), profile)) findings.push_back(std::move(f));
    const bool reject = std::any_of(findings.begin(), findings.end(),
                                    [](const policy::Finding& f) { return f.severity == policy::Severity::reject; });
    rejected += reject;
    if (jsonl) {
      std::cout << nlohmann::json{{"id", o.string()}, {"profile", policy::to_string(profile)}, {"rejected", reject},
                                  {"imports", symbols->size()}, {"findings", findings}}.dump() << "\n";
      continue;
    }
    std::cout << o.string() << ": " << (reject ? "REJECTED" : "ok") << " (" << policy::to_string(profile) << ", "
              << symbols->size() << " imports, " << findings.size() << " finding" << (findings.size() == 1 ? "" : "s") << ")\n";
    for (const auto& f : findings)
      std::cout << "  " << policy::to_string(f.severity) << " [" << f.rule_id << "] " << f.message << "\n";
  }
  if (!jsonl)
    std::cout << objects.size() << " checked, " << rejected << " rejected"
              << (triton_skipped ? ", " + std::to_string(triton_skipped) + " of Triton's own launchers skipped" : "") << "\n";
  return rejected > 0 ? kExitFindings : kExitOk;
}

namespace fs = std::filesystem;

/// One source to check. `code` empty (or "None") means there is no candidate (`kgym eval` gives
/// no_candidate): normal in a .jsonl row (CUDA-L1 has such rows), a failed check for a .py file
/// (exit code 1: an empty file is not a candidate that passes).
struct CheckInput {
  std::string id;
  std::string code;
  std::string reference;
  bool row = false;  ///< from a .jsonl file
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::input, "cannot read " + path.string() + ": check the path and permissions");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// JSONL rows: kgym's {"task_id","code","candidate_id"?,"ref_code"?} or CUDA-L1's
/// {"level_id","task_id":N,"custom_code","ref_code"}.
std::vector<CheckInput> read_jsonl(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::input, "cannot read " + path.string() + ": check the path and permissions");
  std::vector<CheckInput> out;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json row;
    try {
      row = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      throw Error(ErrorKind::input, path.string() + ":" + std::to_string(number) + ": not valid JSON (" + e.what() + ")");
    }
    if (!row.is_object())
      throw Error(ErrorKind::input, path.string() + ":" + std::to_string(number) + ": expected a JSON object per line");
    CheckInput c;
    auto str = [&](const char* key) -> std::string {
      auto it = row.find(key);
      if (it == row.end() || it->is_null()) return {};
      return it->is_string() ? it->get<std::string>() : it->dump();
    };
    if (row.contains("code")) c.code = without_bom(str("code"));
    else if (row.contains("custom_code")) c.code = without_bom(str("custom_code"));
    else
      throw Error(ErrorKind::input, path.string() + ":" + std::to_string(number) +
                                        ": no \"code\" or \"custom_code\" field (kgym or CUDA-L1 rows expected)");
    c.reference = str("ref_code");
    std::string id = str("candidate_id");
    if (id.empty()) {
      std::string level = str("level_id"), task = str("task_id");
      id = level.empty() ? task : "L" + level + "/" + task;
    }
    c.id = id.empty() ? path.filename().string() + ":" + std::to_string(number) : id;
    c.row = true;
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<CheckInput> read_inputs(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(path))
      if (e.is_regular_file() && e.path().extension() == ".py") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    if (files.empty()) throw Error(ErrorKind::input, "no .py files under " + path.string());
    std::vector<CheckInput> out;
    for (const auto& f : files) out.push_back({fs::relative(f, path).string(), without_bom(read_text(f)), ""});
    return out;
  }
  if (!fs::exists(path, ec)) throw Error(ErrorKind::input, path.string() + " does not exist: give a .py file, a directory of them, or a .jsonl file");
  if (path.extension() == ".jsonl") return read_jsonl(path);
  return {{path.filename().string(), without_bom(read_text(path)), ""}};
}

/// Python's own words for a syntax error, as `kgym eval` reports them ("\n    Python: line 2,
/// column 15: '(' was never closed"); "" when Python compiles the source or cannot be asked.
/// The report's syntax_error finding takes Python's line and column, where Python gives them:
/// the parser of the scan (tree-sitter) places the error where its recovery starts, which can be
/// the start of the line or an earlier one.
std::string python_says(const std::string& code, policy::PolicyReport& report) {
  const auto says = python_syntax_error("python3", code);
  if (!says) return "";
  static const std::regex where(R"(^line (\d+), column (\d+):)");
  std::smatch m;
  if (std::regex_search(*says, m, where))
    for (auto& f : report.findings)
      if (f.rule_id == "syntax_error") {
        f.line = std::stoi(m[1].str());
        f.column = std::stoi(m[2].str());
      }
  return "\n    Python: " + *says;
}

/// "file:line:column" of a finding, or "file" for one about the whole file (line 0).
std::string where(const std::string& id, const policy::Finding& f) {
  return f.line > 0 ? id + ":" + std::to_string(f.line) + ":" + std::to_string(f.column) : id;
}

bool no_candidate(const std::string& code) {
  auto first = code.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return true;
  auto last = code.find_last_not_of(" \t\r\n");
  return code.substr(first, last - first + 1) == "None";
}

}  // namespace

void add_check_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("check", "Run the policy gate (static checks) on candidates without running them");
  struct Options {
    std::string path, profile = "strict", format = "text", dtype;
    bool no_preprocess = false, built = false;
  };
  auto opts = std::make_shared<Options>();
  cmd->add_option("path", opts->path, "a candidate .py file, a directory of them, or a .jsonl file of rows")->required();
  cmd->add_option("--profile", opts->profile, "strict | hybrid | kernelbench | off")->capture_default_str();
  cmd->add_option("--format", opts->format, "text (one line per finding) | jsonl (one object per candidate)")
      ->capture_default_str();
  cmd->add_option("--dtype", opts->dtype, "the task's dtype (default: inferred from the row's ref_code, else float32)");
  cmd->add_flag("--no-preprocess", opts->no_preprocess,
                "scan embedded C++ without running g++ -E (faster; macro-built names are missed)");
  cmd->add_flag("--built", opts->built,
                "PATH is a built shared object or a folder of them (e.g. ~/.cache/kgym/build): run the link check "
                "(what each imports) instead of the source checks");
  cmd->callback([opts, &exit_code] {
    const auto profile = std::optional<policy::Profile>(parse_profile(opts->profile));
    if (opts->format != "text" && opts->format != "jsonl")
      throw Error(ErrorKind::usage, "unknown --format '" + opts->format + "': use text or jsonl");
    if (opts->built) {
      exit_code = check_built(opts->path, *profile, opts->format == "jsonl");
      return;
    }
    auto inputs = read_inputs(opts->path);
    int rejected = 0, checked = 0, empty = 0, empty_files = 0;
    for (const auto& in : inputs) {
      if (no_candidate(in.code)) {
        ++empty;
        if (!in.row) ++empty_files;
        if (opts->format == "jsonl")
          std::cout << nlohmann::json{{"id", in.id}, {"candidate", false}}.dump() << "\n";
        else
          std::cout << in.id << ": no candidate"
                    << (in.row ? "" : " (the file is empty: `kgym eval` gives no_candidate; write a ModelNew)") << "\n";
        continue;
      }
      policy::PolicyContext ctx;
      ctx.profile = *profile;
      ctx.reference_source = in.reference;
      ctx.task_dtype = !opts->dtype.empty() ? opts->dtype : policy::infer_task_dtype(in.reference);
      ctx.preprocess_cxx = !opts->no_preprocess;
      auto t0 = std::chrono::steady_clock::now();
      auto report = policy::check_candidate(in.code, ctx);
      double check_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      const bool syntax = std::any_of(report.findings.begin(), report.findings.end(),
                                      [](const policy::Finding& f) { return f.rule_id == "syntax_error"; });
      const std::string says = syntax ? python_says(in.code, report) : "";
      ++checked;
      if (report.rejected()) ++rejected;
      if (opts->format == "jsonl") {
        nlohmann::json j = {{"id", in.id},           {"candidate", true},        {"profile", policy::to_string(*profile)},
                            {"parsed", report.parsed}, {"rejected", report.rejected()}, {"findings", report.findings},
                            {"check_ms", check_ms}};
        std::cout << j.dump() << "\n";
        continue;
      }
      if (!report.parsed) {  // under every profile: the one thing to fix before anything else
        for (const auto& f : report.findings)
          if (f.rule_id == "syntax_error") {
            std::cout << in.id << ": DOES NOT PARSE (" << policy::to_string(*profile) << "; `kgym eval` gives build_failed)\n"
                      << "  " << where(in.id, f) << ": [" << f.rule_id << "] " << f.message
                      << (f.snippet.empty() ? "" : "  | " + f.snippet) << says << "\n";
            break;
          }
        continue;
      }
      std::cout << in.id << ": " << (report.rejected() ? "REJECTED" : "ok") << " (" << policy::to_string(*profile)
                << ", " << report.findings.size() << " finding" << (report.findings.size() == 1 ? "" : "s") << ")\n";
      for (const auto& f : report.findings)
        std::cout << "  " << where(in.id, f) << ": " << policy::to_string(f.severity) << " ["
                  << f.rule_id << "] " << f.message << (f.snippet.empty() ? "" : "  | " + f.snippet)
                  << (f.rule_id == "syntax_error" ? says : "") << "\n";
    }
    if (opts->format == "text")
      std::cout << checked << " checked, " << rejected << " rejected, " << empty << " without candidate\n";
    exit_code = rejected > 0 || empty_files > 0 ? kExitFindings : kExitOk;
  });
}

}  // namespace kgym::cli
