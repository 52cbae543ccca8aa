// The policy analysis's helpers over the parsed Python: names resolved through imports, constant
// strings evaluated, findings recorded (deduplicated per rule and position).
#include <algorithm>

#include "analysis.hpp"

namespace kgym::policy::detail {

std::string Analysis::resolve_name(std::string_view dotted) const {
  size_t dot = dotted.find('.');
  std::string_view head = dotted.substr(0, dot);
  auto it = aliases_.find(head);
  if (it == aliases_.end()) return std::string(dotted);
  return it->second + (dot == std::string_view::npos ? "" : std::string(dotted.substr(dot)));
}

/// Dotted name of an identifier/attribute chain, resolved through imports ("F.relu" ->
/// "torch.nn.functional.relu"); a chain on a non-name receiver gives ".attr1.attr2".
std::string Analysis::resolve(TSNode expr) const {
  std::vector<std::string> parts;
  TSNode n = expr;
  while (valid(n) && type(n) == "attribute") {
    parts.push_back(text(field(n, "attribute")));
    n = field(n, "object");
  }
  std::string head;
  if (valid(n) && type(n) == "identifier") head = text(n);
  else if (valid(n) && type(n) == "call") {
    // getattr(X, "name") -> X.name
    TSNode fn = field(n, "function");
    TSNode args = field(n, "arguments");
    auto argv = valid(args) ? named_children(args) : std::vector<TSNode>{};
    if (valid(fn) && text(fn) == "getattr" && argv.size() >= 2) {
      if (auto s = eval_string(argv[1])) head = resolve(argv[0]) + "." + *s;
    }
  }
  std::string out = head;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) out += "." + *it;
  if (!head.empty()) return resolve_name(out);
  return out;  // starts with "."
}

std::string Analysis::string_value(TSNode s) const {
  std::string out;
  bool raw = false;
  for (TSNode c : named_children(s)) {
    std::string_view t = type(c);
    if (t == "string_start") {
      std::string p = text(c);
      raw = p.find('r') != std::string::npos || p.find('R') != std::string::npos;
    } else if (t == "string_content") {
      std::string body = text(c);
      if (raw) { out += body; continue; }
      for (size_t i = 0; i < body.size(); ++i) {
        if (body[i] == '\\' && i + 1 < body.size()) {
          char e = body[++i];
          switch (e) {
            case 'n': out += '\n'; break;
            case 't': out += '\t'; break;
            case '\n': break;
            default: out += e;
          }
        } else {
          out += body[i];
        }
      }
    } else if (t == "escape_sequence") {
      std::string e = text(c);
      out += e == "\\n" ? "\n" : e == "\\t" ? "\t" : e.size() > 1 ? e.substr(1) : e;
    }
  }
  return out;
}

/// The value of a string expression: literals, implicit and `+` concatenation, names bound to
/// strings, "".join([...]) and parentheses. nullopt when not a constant string.
std::optional<std::string> Analysis::eval_string(TSNode n, int depth) const {
  if (!valid(n) || depth > 12) return std::nullopt;
  std::string_view t = type(n);
  if (t == "string") return string_value(n);
  if (t == "concatenated_string") {
    std::string out;
    for (TSNode c : named_children(n)) out += string_value(c);
    return out;
  }
  if (t == "parenthesized_expression") {
    auto kids = named_children(n);
    return kids.size() == 1 ? eval_string(kids[0], depth + 1) : std::nullopt;
  }
  if (t == "binary_operator") {
    TSNode op = ts_node_child_by_field_name(n, "operator", 8);
    if (!valid(op) || text(op) != "+") return std::nullopt;
    auto l = eval_string(field(n, "left"), depth + 1);
    auto r = eval_string(field(n, "right"), depth + 1);
    if (l && r) return *l + *r;
    return std::nullopt;
  }
  if (t == "identifier") {
    auto it = assigns_.find(text(n));
    if (it == assigns_.end()) return std::nullopt;
    for (auto v = it->second.rbegin(); v != it->second.rend(); ++v)
      if (ts_node_start_byte(*v) != ts_node_start_byte(n))
        if (auto s = eval_string(*v, depth + 1)) return s;
    return std::nullopt;
  }
  if (t == "call") {
    TSNode fn = field(n, "function");
    if (valid(fn) && type(fn) == "attribute" && text(field(fn, "attribute")) == "join") {
      auto sep = eval_string(field(fn, "object"), depth + 1);
      auto args = named_children(field(n, "arguments"));
      if (sep && args.size() == 1 && (type(args[0]) == "list" || type(args[0]) == "tuple")) {
        std::string out;
        bool first = true;
        for (TSNode e : named_children(args[0])) {
          auto s = eval_string(e, depth + 1);
          if (!s) return std::nullopt;
          if (!first) out += *sep;
          out += *s;
          first = false;
        }
        return out;
      }
    }
  }
  return std::nullopt;
}

void Analysis::add_at(std::string_view rule_id, int line, int column, std::string detail, std::string snippet) {
  const Rule* rule = find_rule(rule_id);
  if (!rule) return;
  auto severity = rule->in(ctx_.profile);
  if (!severity) return;
  for (const auto& f : report_.findings)
    if (f.rule_id == rule_id && f.line == line && f.column == column) return;
  Finding f;
  f.rule_id = std::string(rule_id);
  f.severity = *severity;
  f.message = std::string(rule->message);
  if (!detail.empty()) f.message += " (" + detail + ")";
  f.line = line;
  f.column = column;
  f.snippet = std::move(snippet);
  report_.findings.push_back(std::move(f));
}

void Analysis::add(std::string_view rule_id, TSNode at, std::string detail, std::string snippet) {
  add_at(rule_id, PythonSyntax::line(at), PythonSyntax::column(at), std::move(detail),
         snippet.empty() ? syntax_.snippet(at) : std::move(snippet));
}

void Analysis::add_cxx(std::string_view rule_id, const CxxUnit& u, std::string detail, const std::string& what,
                       std::string_view key) {
  if (key.empty()) key = what;
  if (key.size() >= 2 && key.front() == '"' && key.back() == '"') key = key.substr(1, key.size() - 2);
  const std::string_view file = syntax_.source();
  // Search from where the unit's text begins in the file (its first line of 8+ characters, as
  // written), so that a comment above it naming the same thing is passed over.
  size_t from = 0;
  for (size_t b = 0; b < u.text.size();) {
    size_t e = u.text.find('\n', b);
    if (e == std::string::npos) e = u.text.size();
    std::string_view l(u.text.data() + b, e - b);
    while (!l.empty() && (l.front() == ' ' || l.front() == '\t')) l.remove_prefix(1);
    while (!l.empty() && (l.back() == ' ' || l.back() == '\t' || l.back() == '\r')) l.remove_suffix(1);
    if (l.size() >= 8) {
      if (size_t at = file.find(l); at != std::string_view::npos) from = at;
      break;
    }
    b = e + 1;
  }
  size_t pos = key.empty() ? std::string_view::npos : file.find(key, from);
  if (pos == std::string_view::npos && from > 0) pos = file.find(key);
  if (pos == std::string_view::npos) return add(rule_id, u.at, std::move(detail), what);
  const size_t line_start = file.rfind('\n', pos == 0 ? 0 : pos - 1);
  const int line = 1 + static_cast<int>(std::count(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
  const int column = 1 + static_cast<int>(line_start == std::string_view::npos || pos == 0 ? pos : pos - line_start - 1);
  add_at(rule_id, line, column, std::move(detail), what);
}

bool Analysis::is_ext_call(TSNode call) const {
  std::string name = resolve(field(call, "function"));
  auto ends = [&](std::string_view s) {
    return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  return ends("load_inline") || name == "torch.utils.cpp_extension.load" || name == "cpp_extension.load" ||
         ends("RawKernel") || ends("RawModule") || ends("ElementwiseKernel") || ends("ReductionKernel") ||
         ends(".get_function");
}

}  // namespace kgym::policy::detail
