#include "kgym/run.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <regex>

#include "kgym/error.hpp"
#include "kgym/store.hpp"
#include "kgym/task.hpp"

namespace kgym::run {
namespace fs = std::filesystem;

bool is_run_dir(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) &&
         (fs::exists(path / kManifest, ec) || fs::exists(path / kCandidates, ec));
}

nlohmann::json read_manifest(const fs::path& run_dir) {
  const fs::path file = run_dir / kManifest;
  if (!fs::exists(file)) return nlohmann::json::object();
  try {
    return nlohmann::json::parse(read_file(file));
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::input, file.string() + " is not valid JSON (" + e.what() + "); fix or delete it");
  }
}

void update_manifest(const fs::path& run_dir, const nlohmann::json& patch) {
  fs::create_directories(run_dir);
  nlohmann::json m = read_manifest(run_dir);
  m.merge_patch(patch);
  const fs::path file = run_dir / kManifest, tmp = run_dir / (std::string(kManifest) + ".tmp");
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << m.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    if (!out) throw Error(ErrorKind::input, "cannot write " + tmp.string());
  }
  fs::rename(tmp, file);
}

namespace {

std::vector<Verdict> dedupe(std::vector<Verdict> in) {
  std::map<std::pair<std::string, std::string>, std::size_t> index;
  std::vector<Verdict> out;
  for (auto& v : in) {
    auto key = std::make_pair(v.task_id, v.candidate_id);
    if (auto it = index.find(key); it != index.end()) {
      out[it->second] = std::move(v);
    } else {
      index[key] = out.size();
      out.push_back(std::move(v));
    }
  }
  return out;
}

std::vector<Verdict> read_jsonl(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw Error(ErrorKind::input, "cannot read verdicts file " + file.string());
  std::vector<Verdict> out;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      out.push_back(nlohmann::json::parse(line).get<Verdict>());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "kgym: warning: %s:%d is not a verdict (%s); skipped\n", file.c_str(), number, e.what());
    }
  }
  return dedupe(std::move(out));
}

}  // namespace

std::vector<Verdict> load_verdicts(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (fs::exists(path / kVerdicts)) return read_jsonl(path / kVerdicts);
    if (fs::exists(path / kResults)) return ResultStore(path / kResults, path.filename().string()).verdicts();
    throw Error(ErrorKind::input, path.string() + " holds no verdicts.jsonl or results.sqlite: run `kgym eval --candidates " +
                                      path.string() + "` first");
  }
  if (!fs::exists(path, ec)) throw Error(ErrorKind::input, "no such run or verdicts file: " + path.string());
  const std::string ext = path.extension().string();
  if (ext == ".sqlite" || ext == ".db") {
    ResultStore store(path, "");
    auto runs = store.runs();
    if (runs.size() != 1)
      throw Error(ErrorKind::input, path.string() + " holds " + std::to_string(runs.size()) +
                                        " runs; report a run directory or a single-run store");
    return ResultStore(path, runs.front()).verdicts();
  }
  return read_jsonl(path);
}

std::string make_candidate_id(const std::string& task_id, int sample, int turn) {
  return task_id + "@s" + std::to_string(sample) + "t" + std::to_string(turn);
}

Attempt parse_candidate_id(const std::string& candidate_id) {
  static const std::regex re(R"(@s(\d+)t(\d+)$)");
  std::smatch m;
  if (std::regex_search(candidate_id, m, re)) return {std::stoi(m[1]), std::stoi(m[2]), true};
  return {};
}

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace kgym::run
