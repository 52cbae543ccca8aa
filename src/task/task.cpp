#include <cctype>
#include "kgym/task.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include "kgym/error.hpp"

namespace kgym {
namespace fs = std::filesystem;

namespace {

bool looks_like_task(const std::string& source) {
  return source.find("class Model") != std::string::npos &&
         source.find("def get_inputs") != std::string::npos &&
         source.find("def get_init_inputs") != std::string::npos;
}

/// The number a KernelBench file name starts with ("19_ReLU" -> 19), or a large value.
long leading_number(const std::string& stem) {
  std::size_t i = 0;
  while (i < stem.size() && std::isdigit(static_cast<unsigned char>(stem[i]))) ++i;
  return i == 0 ? 1L << 40 : std::stol(stem.substr(0, i));
}

}  // namespace

std::string task_stem(const std::string& id) {
  auto slash = id.rfind('/');
  return slash == std::string::npos ? id : id.substr(slash + 1);
}

bool has_full_size_inputs(const Task& task) {
  // Module-level assignments only (`dim = 393216`, `N = 2048 * 2`), where KernelBench keeps its
  // size constants; a seed or a number in a comment, a docstring or a function body is no size
  // (the generated tasks' seeds, 900000 and up, read as full size before).
  static const std::regex assignment(R"(^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([^#]*))");
  static const std::regex integer(R"(\b[0-9][0-9_]*\b)");
  static const std::regex product_only(R"(^[\s0-9_*()]*$)");
  std::istringstream in(task.source);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, assignment)) continue;
    std::string name = m[1].str();
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    if (name.find("seed") != std::string::npos) continue;
    const std::string rhs = m[2].str();
    double largest = 0, product = 1;
    int literals = 0;
    for (auto it = std::sregex_iterator(rhs.begin(), rhs.end(), integer); it != std::sregex_iterator(); ++it) {
      std::string digits = it->str();
      std::erase(digits, '_');
      const double x = std::stod(digits);
      largest = std::max(largest, x);
      product *= x;
      ++literals;
    }
    if (literals == 0) continue;
    const double size = std::regex_match(rhs, product_only) ? product : largest;
    if (size >= 65536) return true;
  }
  return false;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::input, "cannot read file " + path.string() + ": check the path and permissions");
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

const Task* Suite::find(std::string_view id) const noexcept {
  for (const auto& t : tasks)
    if (t.id == id) return &t;
  return nullptr;
}

Suite load_suite(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw Error(ErrorKind::input, "suite directory " + dir.string() +
                                      " does not exist; pass --suite DIR with KernelBench problems "
                                      "(e.g. ../shared/data/kernelbench)");
  Suite suite;
  suite.root = dir;
  auto add_file = [&](const fs::path& file, int level) {
    if (file.extension() != ".py") return;
    std::string source = read_file(file);
    if (!looks_like_task(source)) return;
    std::string stem = file.stem().string();
    suite.tasks.push_back(Task{level > 0 ? "L" + std::to_string(level) + "/" + stem : stem,
                               std::move(source), file.string(), level});
  };
  static const std::regex level_dir(R"(level(\d+))");
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::smatch m;
    std::string name = entry.path().filename().string();
    if (entry.is_directory() && std::regex_match(name, m, level_dir)) {
      int level = std::stoi(m[1]);
      for (const auto& f : fs::directory_iterator(entry.path()))
        if (f.is_regular_file()) add_file(f.path(), level);
    } else if (entry.is_regular_file()) {
      add_file(entry.path(), 0);
    }
  }
  if (suite.tasks.empty())
    throw Error(ErrorKind::input, "suite directory " + dir.string() +
                                      " holds no KernelBench problems (level<N>/<name>.py files "
                                      "defining Model, get_inputs and get_init_inputs)");
  std::sort(suite.tasks.begin(), suite.tasks.end(), [](const Task& a, const Task& b) {
    auto sa = task_stem(a.id), sb = task_stem(b.id);
    return std::tuple(a.level, leading_number(sa), sa) < std::tuple(b.level, leading_number(sb), sb);
  });
  return suite;
}

bool task_matches(const Task& task, std::string_view pattern_view) {
  std::string pattern(pattern_view);
  if (pattern == task.id) return true;
  static const std::regex level_only(R"((?:L|level)(\d+))", std::regex::icase);
  static const std::regex level_number(R"((?:L|level)(\d+)/(\d+))", std::regex::icase);
  std::smatch m;
  if (std::regex_match(pattern, m, level_only)) return task.level == std::stoi(m[1]);
  if (std::regex_match(pattern, m, level_number))
    return task.level == std::stoi(m[1]) &&
           (task_stem(task.id) == std::string(m[2]) || task_stem(task.id).starts_with(std::string(m[2]) + "_"));
  if (pattern.find_first_of("*?[") != std::string::npos)
    return fnmatch(pattern.c_str(), task.id.c_str(), 0) == 0;
  // A problem's file name without its level (19_ReLU): KernelBench's names are unique across
  // levels, and it is what a user copies from the suite's folder listing.
  return pattern.find('/') == std::string::npos && task_stem(task.id) == pattern;
}

const Task* resolve_task(const std::vector<Task>& tasks, std::string_view id, int* matched) {
  if (matched) *matched = 0;
  for (const auto& t : tasks)
    if (t.id == id) return &t;
  if (id.find_first_of("*?[") != std::string_view::npos) return nullptr;
  const Task* found = nullptr;
  int n = 0;
  for (const auto& t : tasks)
    if (task_matches(t, id) && ++n == 1) found = &t;
  if (matched) *matched = n;
  return n == 1 ? found : nullptr;
}

std::vector<Task> select_tasks(const Suite& suite, const std::vector<std::string>& patterns) {
  if (patterns.empty()) return suite.tasks;
  std::vector<Task> out;
  for (const auto& p : patterns) {
    bool any = false;
    for (const auto& t : suite.tasks)
      if (task_matches(t, p)) any = true;
    if (!any) {
      // A near miss: the same id but for letter case (L1/19_Relu), named in the message.
      auto lower = [](std::string v) {
        for (auto& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        return v;
      };
      std::string hint;
      for (const auto& t : suite.tasks)
        if (lower(t.id) == lower(p)) hint = "; did you mean '" + t.id + "'?";
      if (hint.empty() && p.size() > 3 && p[0] == 'L' && p.find('/') != std::string::npos) {
        const std::string rest = p.substr(p.find('/') + 1);
        for (const auto& t : suite.tasks)
          if (t.id.find('/') == std::string::npos && (t.id == rest || t.id.starts_with(rest + "_"))) {
            hint = "; this suite's ids have no level prefix (--suite names a level folder): use '" + t.id +
                   "', or pass the folder above it as --suite";
            break;
          }
      }
      if (suite.tasks.empty())
        hint = "; the suite holds no task: --suite is the folder that holds level1/, level2/, ... (not a level "
               "folder itself)";
      throw Error(ErrorKind::input, "--tasks pattern '" + p + "' matches no task in " + suite.root.string() +
                                        " (ids look like L1/19_ReLU; also 19_ReLU, L1, L1/19, globs)" + hint);
    }
  }
  for (const auto& t : suite.tasks)
    for (const auto& p : patterns)
      if (task_matches(t, p)) {
        out.push_back(t);
        break;
      }
  return out;
}

}  // namespace kgym
