#include "kgym/candidate.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <regex>

#include "kgym/error.hpp"
#include "kgym/format.hpp"

namespace kgym {
namespace fs = std::filesystem;

namespace {

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

bool matches_any(const Task& t, const std::vector<std::string>& patterns) {
  if (patterns.empty()) return true;
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& p) { return task_matches(t, p); });
}

/// The body of `Model.forward` with comments, docstrings and all whitespace removed, so that two
/// sources of the same problem compare equal even when formatted differently.
std::string forward_signature(const std::string& source) {
  auto at = source.find("def forward");
  if (at == std::string::npos) return "";
  std::string body;
  std::size_t i = source.find('\n', at);
  for (; i != std::string::npos && i < source.size(); ++i) {
    if (source[i] == '\n' && i + 1 < source.size() && !std::isspace(static_cast<unsigned char>(source[i + 1])))
      break;  // the next top-level statement ends the method
    if (source.compare(i, 3, "\"\"\"") == 0) {  // skip a docstring
      auto end = source.find("\"\"\"", i + 3);
      if (end == std::string::npos) break;
      i = end + 2;
      continue;
    }
    if (source[i] == '#') {  // skip a comment
      while (i < source.size() && source[i] != '\n') ++i;
      continue;
    }
    if (!std::isspace(static_cast<unsigned char>(source[i]))) body.push_back(source[i]);
  }
  return body;
}

/// The suite task for a CUDA-L1 row (level, number), or nullptr.
const Task* find_numbered(const Suite* suite, int level, long number) {
  if (!suite) return nullptr;
  const std::string prefix = "L" + std::to_string(level) + "/" + std::to_string(number) + "_";
  for (const auto& t : suite->tasks)
    if (t.id.starts_with(prefix)) return &t;
  return nullptr;
}

std::vector<Evaluation> load_jsonl(const fs::path& file, const Suite* suite,
                                   const std::vector<std::string>& patterns) {
  std::ifstream in(file);
  if (!in) throw Error(ErrorKind::input, "cannot read candidates file " + file.string());
  std::vector<Evaluation> out;
  std::string line;
  int number = 0;
  const std::string name = file.filename().string();
  while (std::getline(in, line)) {
    ++number;
    if (trim(line).empty()) continue;
    const std::string where = file.string() + ":" + std::to_string(number);
    nlohmann::json row;
    try {
      row = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw Error(ErrorKind::input, where + ": malformed JSON (" + e.what() +
                                        "); each line must be one JSON object");
    }
    if (!row.is_object() || !row.contains("task_id"))
      throw Error(ErrorKind::input, where + ": a row needs \"task_id\" and \"code\" (kgym) or "
                                            "\"level_id\", \"task_id\", \"custom_code\" (CUDA-L1)");
    Evaluation ev;
    auto text = [&](const char* key) -> std::string {
      if (!row.contains(key) || row[key].is_null()) return "";
      if (!row[key].is_string()) throw Error(ErrorKind::input, where + ": \"" + key + "\" must be a string");
      return row[key].get<std::string>();
    };
    const bool cuda_l1 = row.contains("level_id") && row["task_id"].is_number_integer();
    if (cuda_l1) {
      const int level = row["level_id"].get<int>();
      const long task_number = row["task_id"].get<long>();
      ev.candidate.code = without_bom(text("custom_code"));
      const Task* known = find_numbered(suite, level, task_number);
      // The row's ref_code is the reference. Take the suite's name only when it is the same
      // problem (CUDA-L1's task 97 is a cosine-similarity loss, KernelBench's 97 is attention).
      const std::string ref = text("ref_code");
      if (known && !ref.empty() && forward_signature(ref) != forward_signature(known->source)) {
        ev.candidate.extra["suite_task_differs"] = known->id;
        known = nullptr;
      }
      ev.task.id = known ? known->id : "L" + std::to_string(level) + "/" + std::to_string(task_number);
      ev.task.level = level;
    } else {
      ev.task.id = row["task_id"].is_string() ? row["task_id"].get<std::string>()
                                              : row["task_id"].dump();
      if (!row.contains("code"))
        throw Error(ErrorKind::input, where + ": the row has no \"code\" (the candidate's source); a kgym row is "
                                              "{\"task_id\", \"code\", \"candidate_id\"?}, a CUDA-L1 row "
                                              "{\"level_id\", \"task_id\", \"custom_code\", \"ref_code\"}");
      ev.candidate.code = without_bom(text("code"));
      if (const Task* known = suite ? resolve_task(suite->tasks, ev.task.id) : nullptr) ev.task = *known;
    }
    if (std::string ref = text("ref_code"); !ref.empty()) {
      ev.task.source = ref;
      ev.task.origin = where;
      ev.candidate.ref_code = ref;
    } else if (const Task* known = suite ? resolve_task(suite->tasks, ev.task.id) : nullptr) {
      ev.task = *known;
    } else {
      int named = 0;
      if (suite) resolve_task(suite->tasks, ev.task.id, &named);
      if (named > 1)
        throw Error(ErrorKind::input, where + ": task '" + ev.task.id + "' names " + std::to_string(named) +
                                          " tasks of the suite; a row is for one task (e.g. '" +
                                          suite->tasks.front().id + "')");
      throw Error(ErrorKind::input, where + ": unknown task '" + ev.task.id +
                                        "' (not in the suite" + (suite ? " " + suite->root.string() : "") +
                                        ", and the row has no ref_code); check --suite");
    }
    ev.candidate.task_id = ev.task.id;
    if (row.contains("format")) {  // the candidate format (format.hpp); default kernelbench_module
      if (!row["format"].is_string()) throw Error(ErrorKind::input, where + ": \"format\" must be a string");
      try {
        ev.candidate.format = std::string(find_format(row["format"].get<std::string>()).name);
      } catch (const Error& e) {
        throw Error(ErrorKind::input, where + ": " + e.what());
      }
    }
    ev.candidate.id = row.contains("candidate_id") && row["candidate_id"].is_string()
                          ? row["candidate_id"].get<std::string>()
                          : name + ":" + std::to_string(number);
    for (auto it = row.begin(); it != row.end(); ++it)
      if (it.key() != "custom_code" && it.key() != "ref_code" && it.key() != "code" && it.key() != "format")
        ev.candidate.extra[it.key()] = it.value();
    if (matches_any(ev.task, patterns)) out.push_back(std::move(ev));
  }
  return out;
}

/// The suite task stem a user most likely meant by `stem`: the same name in other letter case,
/// else the task whose stem starts with the same number ("19_Relu" for 19_ReLU; fresh-user
/// run); "" for none.
std::string near_miss(const std::string& stem, const Suite& suite) {
  auto lower = [](std::string x) {
    for (auto& ch : x) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return x;
  };
  std::string hint;
  const std::string number = stem.substr(0, stem.find('_'));
  for (const auto& t : suite.tasks) {
    const std::string tstem = task_stem(t.id);
    if (lower(tstem) == lower(stem)) return tstem;
    if (hint.empty() && !number.empty() && tstem.substr(0, tstem.find('_')) == number) hint = tstem;
  }
  return hint;
}

/// Whether `name` is a task's file name without its level ("19_ReLU").
bool is_task_stem(const Suite& suite, const std::string& name) {
  return std::any_of(suite.tasks.begin(), suite.tasks.end(), [&](const Task& t) { return task_stem(t.id) == name; });
}

/// A few of the suite's task stems for a message ("19_ReLU, 1_Square_..., ... (250 tasks)").
std::string some_stems(const Suite& suite) {
  std::string out;
  std::size_t shown = 0;
  for (const auto& t : suite.tasks) {
    if (shown == 4) break;
    out += (shown++ ? ", " : "") + task_stem(t.id);
  }
  if (suite.tasks.size() > shown) out += ", ... (" + std::to_string(suite.tasks.size()) + " tasks)";
  return out;
}

/// The suite's task a candidate file is for: `level` 0 by the file's stem (DIR/19_ReLU.py), N > 0
/// by its stem within level N (DIR/level1/19_ReLU.py), -1 by its folder's name
/// (DIR/19_ReLU/honest.py). Throws ErrorKind::input naming the near miss a user most likely
/// meant (the same name in other letter case, else the task whose stem starts with the same
/// number: "19_Relu" for 19_ReLU; fresh-user run).
const Task& task_of_file(const fs::path& file, int level, const Suite& suite) {
  const std::string stem = level < 0 ? file.parent_path().filename().string() : file.stem().string();
  for (const auto& t : suite.tasks)
    if (task_stem(t.id) == stem && (level <= 0 || t.level == level)) return t;
  const std::string hint = near_miss(stem, suite);
  throw Error(ErrorKind::input, "candidate " + file.string() + " matches no task in suite " + suite.root.string() +
                                    ": name a candidate file <task file stem>.py or put it in a folder named so, "
                                    "<task file stem>/<name>.py" +
                                    (hint.empty() ? " (the suite's stems: " + some_stems(suite) + ")"
                                                  : " (did you mean " + hint + ".py?)"));
}

/// One candidate file judged on `task`; its id is its path below `base`.
Evaluation evaluation_of_file(const fs::path& file, const fs::path& base, const Task& task) {
  Evaluation ev{task, Candidate{}};
  ev.candidate.id = fs::relative(file, base).string();
  ev.candidate.task_id = task.id;
  ev.candidate.code = without_bom(read_file(file));
  return ev;
}

/// One .py file given as --candidates: its task by its stem (19_ReLU.py, id "19_ReLU.py"), else by
/// its folder's name (19_ReLU/honest.py, id "19_ReLU/honest.py"): the ids a folder of candidates
/// would give it; where neither names a task and `patterns` select exactly one, that task. A task
/// that `patterns` leaves out is a usage error, not an empty run.
std::vector<Evaluation> load_file(const fs::path& file, const Suite* suite, const std::vector<std::string>& patterns) {
  if (!suite)
    throw Error(ErrorKind::usage, "candidate file " + file.string() + " needs a suite to find its task: pass --suite DIR");
  const fs::path abs = fs::absolute(file);
  auto is_stem = [&](const std::string& name) { return is_task_stem(*suite, name); };
  // By the file's stem; else by its folder's name; neither: the stem's near miss in the error.
  const bool by_stem = is_stem(abs.stem().string());
  const bool by_folder = !by_stem && is_stem(abs.parent_path().filename().string());
  // Neither names a task, but --tasks names exactly one: the file is for that task (fresh-user
  // run, session 18: `--candidates mine.py --tasks L1/19` was refused).
  if (!by_stem && !by_folder && !patterns.empty()) {
    const std::vector<Task> chosen = select_tasks(*suite, patterns);
    if (chosen.size() == 1)
      for (const auto& t : suite->tasks)
        if (t.id == chosen.front().id) return {evaluation_of_file(abs, abs.parent_path(), t)};
  }
  const Task& task = task_of_file(abs, by_folder ? -1 : 0, *suite);
  if (!matches_any(task, patterns))
    throw Error(ErrorKind::usage, "candidate " + file.string() + " is for task " + task.id +
                                      ", which --tasks leaves out");
  return {evaluation_of_file(abs, by_folder ? abs.parent_path().parent_path() : abs.parent_path(), task)};
}

std::vector<Evaluation> load_directory(const fs::path& dir, const Suite* suite,
                                       const std::vector<std::string>& patterns) {
  if (!suite)
    throw Error(ErrorKind::usage, "candidates directory " + dir.string() +
                                      " needs a suite to match files to tasks: pass --suite DIR");
  std::vector<Evaluation> out;
  static const std::regex level_dir(R"(level(\d+))");
  std::vector<std::pair<fs::path, int>> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::smatch m;
    std::string name = entry.path().filename().string();
    if (entry.is_directory() && std::regex_match(name, m, level_dir)) {
      for (const auto& f : fs::directory_iterator(entry.path()))
        if (f.is_regular_file() && f.path().extension() == ".py") files.emplace_back(f.path(), std::stoi(m[1]));
    } else if (entry.is_directory()) {  // <task stem>/<name>.py: several candidates for one task
      for (const auto& f : fs::directory_iterator(entry.path()))
        if (f.is_regular_file() && f.path().extension() == ".py") files.emplace_back(f.path(), -1);
    } else if (entry.is_regular_file() && entry.path().extension() == ".py") {
      files.emplace_back(entry.path(), 0);
    }
  }
  std::sort(files.begin(), files.end());
  // A folder named after a task (examples/candidates/19_ReLU) given itself: its files whose stems
  // name no task are that task's candidates, with the ids its parent folder would give them
  // ("19_ReLU/honest.py"), as a single file there gets (load_file).
  fs::path abs = fs::absolute(dir).lexically_normal();
  if (!abs.has_filename()) abs = abs.parent_path();  // "19_ReLU/": the same ids as "19_ReLU" (rt26)
  const std::string folder = abs.filename().string();
  auto is_stem = [&](const std::string& name) { return is_task_stem(*suite, name); };
  const bool task_folder = is_stem(folder);
  for (const auto& [file, level] : files) {
    const bool by_folder = task_folder && level == 0 && !is_stem(file.stem().string());
    const Task& task = by_folder ? task_of_file(fs::absolute(file).lexically_normal(), -1, *suite)
                                 : task_of_file(file, level, *suite);
    if (!matches_any(task, patterns)) continue;
    out.push_back(by_folder ? evaluation_of_file(fs::absolute(file).lexically_normal(), abs.parent_path(), task)
                            : evaluation_of_file(file, dir, task));
  }
  return out;
}

}  // namespace

std::string without_bom(std::string code) {
  if (code.rfind("\xEF\xBB\xBF", 0) == 0) code.erase(0, 3);
  return code;
}

bool Candidate::empty() const {
  const std::string t = trim(code);
  return t.empty() || t == "None" || t == "null";
}

std::vector<Evaluation> load_evaluations(const fs::path& candidates, const Suite* suite,
                                         const std::vector<std::string>& task_patterns) {
  std::error_code ec;
  if (fs::is_directory(candidates, ec)) return load_directory(candidates, suite, task_patterns);
  if (!fs::exists(candidates, ec)) {
    std::string hint;
    if (candidates.extension() == ".py" && suite) {
      const std::string near = near_miss(candidates.stem().string(), *suite);
      if (!near.empty() && near != candidates.stem().string()) hint = " (did you mean " + near + ".py?)";
    }
    throw Error(ErrorKind::input, "candidates path " + candidates.string() + " does not exist" + hint +
                                      ": give a directory of <task>.py files, one such file, or a .jsonl file");
  }
  if (candidates.extension() == ".py") return load_file(candidates, suite, task_patterns);
  if (candidates.extension() != ".jsonl" && candidates.extension() != ".json")
    throw Error(ErrorKind::usage, "--candidates " + candidates.string() + ": a candidate file must be Python (.py) "
                                      "and a file of rows JSON Lines (.jsonl); rename it, or pass its folder");
  return load_jsonl(candidates, suite, task_patterns);
}

}  // namespace kgym
