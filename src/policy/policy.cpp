// The policy gate (gate 1): facts about a candidate from its parsed Python and preprocessed C++,
// then small matchers, one per rule of rules.cpp, that turn facts into findings. This file holds
// the gate's public entry points and the order of the passes (Analysis::run); analysis.hpp lists
// where each pass and matcher lives.
#include "kgym/policy.hpp"

#include <algorithm>
#include <tuple>

#include "analysis.hpp"

namespace kgym::policy {

std::string_view to_string(Severity severity) { return severity == Severity::reject ? "reject" : "warn"; }

void to_json(nlohmann::json& j, const Finding& f) {
  j = nlohmann::json{{"rule_id", f.rule_id}, {"severity", to_string(f.severity)}, {"message", f.message},
                     {"line", f.line},       {"column", f.column},                {"snippet", f.snippet}};
}

bool PolicyReport::rejected() const {
  return std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.severity == Severity::reject; });
}

std::string infer_task_dtype(std::string_view ref) {
  auto has = [&](std::string_view s) { return ref.find(s) != std::string_view::npos; };
  if (has("bfloat16")) return "bfloat16";
  if (has(".half()") || has("float16") || has("torch.half")) return "float16";
  return "float32";
}

namespace detail {

namespace {

/// Depth of the deepest node, walked without recursion; stops counting at `limit`.
int max_depth(TSNode root, int limit) {
  TSTreeCursor cursor = ts_tree_cursor_new(root);
  int depth = 0, deepest = 0;
  for (;;) {
    if (depth < limit && ts_tree_cursor_goto_first_child(&cursor)) {
      deepest = std::max(deepest, ++depth);
      continue;
    }
    while (!ts_tree_cursor_goto_next_sibling(&cursor)) {
      if (!ts_tree_cursor_goto_parent(&cursor)) {
        ts_tree_cursor_delete(&cursor);
        return deepest;
      }
      --depth;
    }
  }
}

}  // namespace

PolicyReport Analysis::run() {
  // CPython's parser refuses nesting this deep, and the recursive passes below must not meet it.
  constexpr int kMaxDepth = 1500;
  if (max_depth(syntax_.root(), kMaxDepth + 1) > kMaxDepth) {
    report_.parsed = false;
    add_at("syntax_error", 1, 1, "nesting deeper than Python allows", "");
    return report_;
  }
  report_.parsed = !ts_node_has_error(syntax_.root());
  // The grammar also accepts Python 2's `print x` and `exec code`, which Python 3 rejects.
  if (report_.parsed) {
    TSNode py2{};
    bool found = false;
    walk(syntax_.root(), [&](TSNode n) {
      if (found) return false;
      if (type(n) == "print_statement" || type(n) == "exec_statement") { py2 = n; found = true; return false; }
      return true;
    });
    if (found) {
      report_.parsed = false;
      add("syntax_error", py2, "Python 2 statement; Python 3 needs a call");
      return report_;
    }
  }
  if (!report_.parsed) {
    match_syntax_error();
    return report_;
  }
  collect(syntax_.root(), "", "", 0);
  if (ctx_.profile == Profile::off) {  // the basic contract only (Rule::in)
    match_model_new();
    return report_;
  }
  resolve_extensions();
  collect_cxx();
  compute_reachable();
  match_model_new();
  match_reference();
  match_try_pass();
  match_imports();
  match_names();
  match_patching();
  match_tensor_subclass();
  match_forward_compute();
  match_custom_calls();
  match_precision();
  match_cxx();
  match_kernelbench();
  match_output_cache();
  match_module_containers_and_elementwise();
  std::sort(report_.findings.begin(), report_.findings.end(), [](const Finding& a, const Finding& b) {
    return std::tie(a.line, a.column, a.rule_id) < std::tie(b.line, b.column, b.rule_id);
  });
  return report_;
}

const std::vector<std::pair<std::string_view, std::set<std::string, std::less<>>>>& cxx_name_rules() {
  return kCxxNameRules;
}

const std::set<std::string, std::less<>>& compute_op_names() { return kComputeOps; }

bool cpu_library_routine(const std::string& name) { return is_cpu_library_compute(name); }
bool aoti_compute_shim(const std::string& name) { return is_aoti_compute(name); }

}  // namespace detail

PolicyReport check_candidate(std::string_view python_source, const PolicyContext& ctx) {
  detail::Analysis analysis(python_source, ctx);
  return analysis.run();
}

}  // namespace kgym::policy
