#pragma once
// Internal to the policy gate: a parsed Python module (tree-sitter, Python grammar 0.23) and small
// helpers to read its nodes.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <tree_sitter/api.h>

extern "C" const TSLanguage* tree_sitter_python(void);

namespace kgym::policy::detail {

/// One parsed Python source. Owns the tree; nodes stay valid while it lives. Not copyable.
class PythonSyntax {
 public:
  /// Parses `source` (UTF-8). Throws Error(internal) if the parser cannot be set up.
  explicit PythonSyntax(std::string_view source);
  ~PythonSyntax();
  PythonSyntax(const PythonSyntax&) = delete;
  PythonSyntax& operator=(const PythonSyntax&) = delete;

  TSNode root() const { return ts_tree_root_node(tree_); }
  std::string_view source() const { return source_; }

  std::string_view text(TSNode n) const {
    return source_.substr(ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n));
  }
  /// 1-based line and column of the node's start.
  static int line(TSNode n) { return static_cast<int>(ts_node_start_point(n).row) + 1; }
  static int column(TSNode n) { return static_cast<int>(ts_node_start_point(n).column) + 1; }
  /// The first line of the node's text, trimmed, at most 120 characters.
  std::string snippet(TSNode n) const;

 private:
  std::string_view source_;
  TSParser* parser_ = nullptr;
  TSTree* tree_ = nullptr;
};

inline std::string_view type(TSNode n) { return ts_node_type(n); }
inline TSNode field(TSNode n, const char* name) {
  return ts_node_child_by_field_name(n, name, static_cast<uint32_t>(std::char_traits<char>::length(name)));
}
inline bool valid(TSNode n) { return !ts_node_is_null(n); }
/// Named children of `n`, in order.
std::vector<TSNode> named_children(TSNode n);

}  // namespace kgym::policy::detail
