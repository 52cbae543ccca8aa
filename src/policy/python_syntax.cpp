// Python parsing for the policy gate (tree-sitter runtime 0.23.2, tree-sitter-python 0.23.6).
#include "python_syntax.hpp"

#include "kgym/error.hpp"

namespace kgym::policy::detail {

PythonSyntax::PythonSyntax(std::string_view source) : source_(source) {
  parser_ = ts_parser_new();
  if (!parser_ || !ts_parser_set_language(parser_, tree_sitter_python())) {
    if (parser_) ts_parser_delete(parser_);
    throw Error(ErrorKind::internal, "cannot set up the tree-sitter Python parser (language ABI mismatch?)");
  }
  tree_ = ts_parser_parse_string(parser_, nullptr, source_.data(), static_cast<uint32_t>(source_.size()));
  if (!tree_) {
    ts_parser_delete(parser_);
    throw Error(ErrorKind::internal, "tree-sitter failed to parse a Python source");
  }
}

PythonSyntax::~PythonSyntax() {
  ts_tree_delete(tree_);
  ts_parser_delete(parser_);
}

std::string PythonSyntax::snippet(TSNode n) const {
  std::string_view t = text(n);
  t = t.substr(0, t.find('\n'));
  size_t first = t.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  t = t.substr(first);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t' || t.back() == '\r')) t.remove_suffix(1);
  std::string s(t.substr(0, 120));
  return s;
}

std::vector<TSNode> named_children(TSNode n) {
  std::vector<TSNode> out;
  uint32_t count = ts_node_named_child_count(n);
  out.reserve(count);
  for (uint32_t i = 0; i < count; ++i) out.push_back(ts_node_named_child(n, i));
  return out;
}

}  // namespace kgym::policy::detail
