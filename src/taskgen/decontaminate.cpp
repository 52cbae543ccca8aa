// Decontamination of generated tasks against a benchmark suite: token-set Jaccard similarity of
// the code (comments and string literals removed), threshold 0.6 by default (issue 6).
#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "kgym/error.hpp"
#include "kgym/taskgen.hpp"

namespace kgym::taskgen {

namespace fs = std::filesystem;

std::vector<std::string> code_tokens(std::string_view s) {
  std::vector<std::string> tokens;
  const std::size_t n = s.size();
  std::size_t i = 0;
  auto is_ident_start = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  auto is_ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  auto skip_string = [&](std::size_t q) {  // s[q] is the opening quote; returns index after close
    const char quote = s[q];
    const bool triple = q + 2 < n && s[q + 1] == quote && s[q + 2] == quote;
    std::size_t j = q + (triple ? 3 : 1);
    while (j < n) {
      if (s[j] == '\\') { j += 2; continue; }
      if (triple) {
        if (j + 2 < n && s[j] == quote && s[j + 1] == quote && s[j + 2] == quote) return j + 3;
      } else if (s[j] == quote || s[j] == '\n') {
        return j + 1;
      }
      ++j;
    }
    return n;
  };
  while (i < n) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) { ++i; continue; }
    if (c == '#') {
      while (i < n && s[i] != '\n') ++i;
      continue;
    }
    if (c == '\'' || c == '"') { i = skip_string(i); continue; }
    if (is_ident_start(c)) {
      std::size_t j = i;
      while (j < n && is_ident(s[j])) ++j;
      // String prefixes (r, b, f, u, rb, ...) directly followed by a quote.
      if (j < n && (s[j] == '\'' || s[j] == '"') && j - i <= 2) {
        std::string p(s.substr(i, j - i));
        std::transform(p.begin(), p.end(), p.begin(), [](unsigned char ch) { return std::tolower(ch); });
        if (p.find_first_not_of("rbfu") == std::string::npos) { i = skip_string(j); continue; }
      }
      tokens.emplace_back(s.substr(i, j - i));
      i = j;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i + 1 < n && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      std::size_t j = i;
      while (j < n && (is_ident(s[j]) || s[j] == '.' ||
                       ((s[j] == '+' || s[j] == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E'))))
        ++j;
      tokens.emplace_back(s.substr(i, j - i));
      i = j;
      continue;
    }
    static const char* kTwo[] = {"**", "//", "->", "==", "!=", "<=", ">=", "+=", "-=", "*=", "/=", ":=", "<<", ">>"};
    bool matched = false;
    for (const char* op : kTwo)
      if (s.substr(i, 2) == op) {
        tokens.emplace_back(op);
        i += 2;
        matched = true;
        break;
      }
    if (!matched) tokens.emplace_back(1, s[i++]);
  }
  std::sort(tokens.begin(), tokens.end());
  tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
  return tokens;
}

double jaccard(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  // Both are sorted and unique (code_tokens); count the intersection by merging.
  std::size_t i = 0, j = 0, common = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) ++i;
    else if (b[j] < a[i]) ++j;
    else { ++common; ++i; ++j; }
  }
  const std::size_t uni = a.size() + b.size() - common;
  return uni == 0 ? 0.0 : static_cast<double>(common) / static_cast<double>(uni);
}

static std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw Error(ErrorKind::input, "cannot read benchmark problem " + p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Decontaminator::Decontaminator(const fs::path& dir, double threshold) : threshold_(threshold) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw Error(ErrorKind::input, "decontamination suite '" + dir.string() +
                                      "' is not a directory; give a KernelBench directory (level1/, level2/, ...)");
  std::vector<std::pair<std::string, fs::path>> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".py") {
      files.emplace_back(entry.path().stem().string(), entry.path());
    } else if (entry.is_directory()) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("level", 0) != 0 || name.size() == 5) continue;
      for (const auto& f : fs::directory_iterator(entry.path()))
        if (f.is_regular_file() && f.path().extension() == ".py")
          files.emplace_back("L" + name.substr(5) + "/" + f.path().stem().string(), f.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& [id, path] : files) problems_.emplace_back(id, code_tokens(slurp(path)));
  if (problems_.empty())
    throw Error(ErrorKind::input, "decontamination suite '" + dir.string() + "' holds no .py problems");
}

std::pair<std::string, double> Decontaminator::nearest(std::string_view source) const {
  const auto tokens = code_tokens(source);
  std::pair<std::string, double> best{"", -1.0};
  for (const auto& [id, problem] : problems_) {
    const double sim = jaccard(tokens, problem);
    if (sim > best.second) best = {id, sim};
  }
  return best;
}

void Decontaminator::check(GeneratedTask& t) const {
  t.nearest_benchmark = nearest(t.task.source);
  t.dropped_from_train = t.split == Split::train && t.nearest_benchmark->second > threshold_;
}

nlohmann::json DecontaminationReport::to_json() const {
  nlohmann::json j = {{"checked", checked}, {"train", train}, {"dropped", dropped}};
  j["reasons"] = nlohmann::json::array();
  for (const auto& [id, nearest, sim] : reasons)
    j["reasons"].push_back({{"id", id}, {"nearest", nearest}, {"jaccard", sim}});
  return j;
}

DecontaminationReport decontaminate(std::vector<GeneratedTask>& tasks, const Decontaminator& d) {
  DecontaminationReport report;
  for (auto& t : tasks) {
    d.check(t);
    ++report.checked;
    if (t.split == Split::train) ++report.train;
    if (t.dropped_from_train) {
      ++report.dropped;
      report.reasons.emplace_back(t.task.id, t.nearest_benchmark->first, t.nearest_benchmark->second);
    }
  }
  return report;
}

}  // namespace kgym::taskgen
