// C++ side of the policy gate: preprocessing with g++ -E and tokenising.
#include "cxx_scan.hpp"

#include "kgym/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace kgym::policy::detail {
namespace {

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

/// Blanks `#include` lines (keeping line count) so the preprocessor needs no headers.
std::string stub_includes(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 1);
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    size_t first = line.find_first_not_of(" \t");
    bool include = false;
    if (first != std::string_view::npos && line[first] == '#') {
      size_t word = line.find_first_not_of(" \t", first + 1);
      include = word != std::string_view::npos &&
                (line.substr(word, 7) == "include" || line.substr(word, 6) == "import");
    }
    if (!include) out.append(line);
    out.push_back('\n');
    pos = end + 1;
  }
  return out;
}

}  // namespace

std::vector<CxxToken> tokenize_cxx(std::string_view s) {
  std::vector<CxxToken> tokens;
  size_t i = 0, n = s.size();
  static const char* kPunct3[] = {"<<<", ">>>", "...", "<<=", ">>=", "->*"};
  static const char* kPunct2[] = {"::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&",
                                  "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "##"};
  while (i < n) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c)) || c == '\\') { ++i; continue; }
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      size_t end = s.find("*/", i + 2);
      i = end == std::string_view::npos ? n : end + 2;
      continue;
    }
    // Raw string literal R"delim( ... )delim"
    if (c == 'R' && i + 1 < n && s[i + 1] == '"') {
      size_t open = s.find('(', i + 2);
      if (open != std::string_view::npos) {
        std::string delim = ")" + std::string(s.substr(i + 2, open - i - 2)) + "\"";
        size_t close = s.find(delim, open + 1);
        if (close == std::string_view::npos) close = n;
        std::string body(s.substr(open + 1, std::min(close, n) - open - 1));
        if (!tokens.empty() && tokens.back().kind == 's') tokens.back().text += body;
        else tokens.push_back({'s', body});
        i = close == n ? n : close + delim.size();
        continue;
      }
    }
    if (is_ident_start(c)) {
      size_t j = i;
      while (j < n && is_ident_char(s[j])) ++j;
      // An encoding prefix (u8"..", L"..") belongs to the literal that follows.
      std::string_view word = s.substr(i, j - i);
      if (j < n && s[j] == '"' && (word == "u8" || word == "u" || word == "U" || word == "L")) { i = j; continue; }
      tokens.push_back({'i', std::string(word)});
      i = j;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i + 1 < n && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      size_t j = i + 1;
      while (j < n && (is_ident_char(s[j]) || s[j] == '.' || s[j] == '\'' ||
                       ((s[j] == '+' || s[j] == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E' || s[j - 1] == 'p' || s[j - 1] == 'P'))))
        ++j;
      tokens.push_back({'n', std::string(s.substr(i, j - i))});
      i = j;
      continue;
    }
    if (c == '"' || c == '\'') {
      size_t j = i + 1;
      std::string body;
      while (j < n && s[j] != c && s[j] != '\n') {
        if (s[j] == '\\' && j + 1 < n) {
          char e = s[j + 1];
          body.push_back(e == 'n' ? '\n' : e == 't' ? '\t' : e);
          j += 2;
          continue;
        }
        body.push_back(s[j]);
        ++j;
      }
      i = j < n ? j + 1 : n;
      if (c == '"') {
        if (!tokens.empty() && tokens.back().kind == 's') tokens.back().text += body;  // "a" "b" -> "ab"
        else tokens.push_back({'s', std::move(body)});
      } else {
        tokens.push_back({'c', std::move(body)});
      }
      continue;
    }
    bool matched = false;
    for (const char* p : kPunct3)
      if (s.substr(i, 3) == p) { tokens.push_back({'p', p}); i += 3; matched = true; break; }
    if (matched) continue;
    for (const char* p : kPunct2)
      if (s.substr(i, 2) == p) { tokens.push_back({'p', p}); i += 2; matched = true; break; }
    if (matched) continue;
    tokens.push_back({'p', std::string(1, c)});
    ++i;
  }
  return tokens;
}

Preprocessed preprocess_cxx(std::string_view text, int timeout_ms) {
  Preprocessed result;
  char path[] = "/tmp/kgym-policy-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) { result.error = std::string("mkstemp: ") + std::strerror(errno); return result; }
  std::string input = stub_includes(text);
  for (size_t off = 0; off < input.size();) {
    ssize_t w = write(fd, input.data() + off, input.size() - off);
    if (w <= 0) break;
    off += static_cast<size_t>(w);
  }
  close(fd);

  const char* compiler = std::getenv("KGYM_CXX_PREPROCESSOR");
  const std::string cxx = compiler && *compiler ? compiler : "g++";
  const ProcessResult run = run_process({cxx, "-E", "-P", "-x", "c++", "-w", "-D__CUDACC__", "-D__NVCC__",
                                         "-D__CUDA_ARCH__=900", "-D__CUDACC_VER_MAJOR__=12", "-D__CUDACC_VER_MINOR__=4",
                                         "-DTORCH_EXTENSION_NAME=kgym_ext", path},
                                        timeout_ms);
  unlink(path);
  result.text = run.out;
  result.ok = run.ok();
  if (!run.started) result.error = run.error;
  else if (!result.ok) result.error = run.timed_out ? "preprocessor timed out" : run.err.substr(0, 400);
  return result;
}

}  // namespace kgym::policy::detail
