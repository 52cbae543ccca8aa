// The policy analysis's structural matchers over the Python: syntax, the ModelNew contract, the
// reference's names, try/pass, imports, patching of modules, Tensor subclasses, precision and
// output caches.
#include <functional>

#include "analysis.hpp"

namespace kgym::policy::detail {

void Analysis::match_syntax_error() {
  TSNode bad{};
  bool found = false;
  walk(syntax_.root(), [&](TSNode n) {
    if (found) return false;
    if (ts_node_is_error(n) || ts_node_is_missing(n)) {
      bad = n;
      found = true;
      return false;
    }
    return ts_node_has_error(n);
  });
  if (!found) {  // a MISSING node may be unnamed; search all children
    std::function<void(TSNode)> any = [&](TSNode n) {
      if (found) return;
      if (ts_node_is_missing(n) || ts_node_is_error(n)) { bad = n; found = true; return; }
      for (uint32_t i = 0; i < ts_node_child_count(n) && !found; ++i) any(ts_node_child(n, i));
    };
    any(syntax_.root());
  }
  TSNode at = found ? bad : syntax_.root();
  add("syntax_error", at, found && ts_node_is_missing(at) ? std::string("missing ") + ts_node_type(at) : "");
}

void Analysis::match_model_new() {
  if (has_model_new_) return;
  // `ModelNew = SomeClass` at module level also defines the name the harness looks up.
  for (TSNode c : named_children(syntax_.root()))
    if (type(c) == "expression_statement")
      for (TSNode a : named_children(c))
        if (type(a) == "assignment" && text(field(a, "left")) == "ModelNew") return;
  add_at("model_new_missing", 0, 0, "", "");
}

void Analysis::match_reference() {
  // Names the reference defines (its classes other than ModelNew); `Model` always counts.
  Names ref_names = {"Model"};
  if (!ctx_.reference_source.empty()) {
    PythonSyntax ref(ctx_.reference_source);
    for (TSNode c : named_children(ref.root()))
      if (type(c) == "class_definition") ref_names.insert(std::string(ref.text(field(c, "name"))));
  }
  ref_names.erase("ModelNew");
  for (const auto& [name, info] : classes_)
    for (size_t i = 0; i < info.bases.size(); ++i)
      if (ref_names.count(info.bases[i]) || ref_names.count(text(info.base_nodes[i])))
        add("reference_inherit", info.base_nodes[i], "class " + name + " inherits " + text(info.base_nodes[i]));
  walk(syntax_.root(), [&](TSNode n) {
    std::string_view t = type(n);
    if (t == "class_definition" && ref_names.count(text(field(n, "name")))) return false;  // its own body
    if (t == "argument_list" && valid(ts_node_parent(n)) && type(ts_node_parent(n)) == "class_definition")
      return false;  // base list: reference_inherit
    if (t == "identifier" && ref_names.count(text(n))) {
      TSNode p = ts_node_parent(n);
      bool is_attr_name = valid(p) && type(p) == "attribute" && ts_node_eq(field(p, "attribute"), n);
      bool is_kw = valid(p) && type(p) == "keyword_argument" && ts_node_eq(field(p, "name"), n);
      if (!is_attr_name && !is_kw) add("reference_fallback", n, "uses " + text(n));
    }
    return true;
  });
}

void Analysis::match_try_pass() {
  auto pass_like = [&](TSNode body) {
    if (!valid(body)) return false;
    auto stmts = named_children(body);
    bool any_pass = false;
    for (TSNode s : stmts) {
      std::string_view t = type(s);
      if (t == "comment") continue;
      if (t == "pass_statement") { any_pass = true; continue; }
      if (t == "expression_statement") {
        auto e = named_children(s);
        if (e.size() == 1 && (type(e[0]) == "string" || type(e[0]) == "ellipsis")) {
          if (type(e[0]) == "ellipsis") any_pass = true;
          continue;
        }
      }
      return false;
    }
    return any_pass;
  };
  walk(syntax_.root(), [&](TSNode n) {
    std::string_view t = type(n);
    if (t == "try_statement") {
      bool has_except = false;
      for (TSNode c : named_children(n))
        if (type(c) == "except_clause" || type(c) == "except_group_clause") has_except = true;
      if (has_except) add("try_except", n);
    } else if (t == "pass_statement") {
      add("pass_statement", n);
    } else if (t == "class_definition" && text(field(n, "name")) == "ModelNew" && pass_like(field(n, "body"))) {
      add("bare_pass", n, "ModelNew has no body");
    } else if (t == "function_definition" && pass_like(field(n, "body"))) {
      bool replaced = forward_replaced_ && text(field(n, "name")) == "forward";
      for (TSNode r : reachable_nodes_)
        if (ts_node_eq(r, n) && !replaced) add("bare_pass", n, text(field(n, "name")) + " does nothing");
    }
    return true;
  });
}

void Analysis::match_imports() {
  for (const auto& [node, mod] : imports_) {
    bool specific = false;
    for (const auto& rule : kNameRules)
      for (auto p : rule.prefixes)
        if (p.front() != '.' && matches_prefix(mod, p)) {
          add(rule.rule_id, node, "import " + mod);
          specific = true;
        }
    std::string top = mod.substr(0, mod.find('.'));
    if (!specific && !kImportAllowlist.count(top)) add("import_not_allowed", node, "import " + mod);
  }
}

void Analysis::match_patching() {
  auto check_target = [&](TSNode target, TSNode stmt) {
    std::vector<TSNode> targets;
    if (type(target) == "pattern_list" || type(target) == "tuple_pattern") targets = named_children(target);
    else targets = {target};
    for (TSNode tg : targets) {
      TSNode base = tg;
      while (valid(base) && type(base) == "subscript") base = field(base, "value");
      if (!valid(base) || (type(base) != "attribute" && !(type(base) == "identifier" && !ts_node_eq(base, tg))))
        continue;
      std::string raw = text(base);
      std::string root = raw.substr(0, raw.find('.'));
      if (!aliases_.count(root) && root != "__builtins__") continue;
      std::string name = resolve(base);
      if (name.rfind("os.environ", 0) == 0) continue;  // env access: file_network_env
      if (name.rfind("torch.backends.", 0) == 0) {
        bool tf32 = name.find("allow_tf32") != std::string::npos || name.find("reduced_precision") != std::string::npos ||
                    name.find("fp32_precision") != std::string::npos;
        if (tf32) {
          if (ctx_.task_dtype == "float32") {
            TSNode right = field(stmt, "right");
            if (!valid(right) || text(right) != "False") add("precision_downgrade", stmt, name);
          }
        } else {
          add("global_flag_change", stmt, name);
        }
        continue;
      }
      add("timer_harness_patch", stmt, "assigns " + name);
    }
  };
  walk(syntax_.root(), [&](TSNode n) {
    std::string_view t = type(n);
    if (t == "assignment" || t == "augmented_assignment") {
      TSNode left = field(n, "left");
      if (valid(left)) check_target(left, n);
    } else if (t == "delete_statement") {
      for (TSNode c : named_children(n)) check_target(c, n);
    }
    return true;
  });
}

void Analysis::match_tensor_subclass() {
  for (const auto& [name, info] : classes_) {
    for (size_t i = 0; i < info.bases.size(); ++i) {
      const std::string& b = info.bases[i];
      if (b == "torch.Tensor" || b == "torch._C._TensorBase" || b == "torch._C.TensorBase" ||
          b == "torch.nn.parameter.Parameter" || b == "torch.nn.Parameter" || b == "torch.utils._python_dispatch.TorchDispatchMode" ||
          b == "torch.overrides.TorchFunctionMode" || (b == "Tensor" && !aliases_.count("Tensor")))
        add("tensor_subclass", info.base_nodes[i], "class " + name + "(" + text(info.base_nodes[i]) + ")");
    }
  }
  for (const auto& [key, fn] : functions_) {
    std::string name = text(field(fn.node, "name"));
    if (name == "__torch_function__" || name == "__torch_dispatch__") add("tensor_subclass", fn.node, name);
  }
}

void Analysis::match_precision() {
  if (ctx_.task_dtype != "float32") return;
  static const Names kLowTypes = {"torch.float16", "torch.half", "torch.bfloat16", "torch.HalfTensor",
                                  "torch.BFloat16Tensor", "torch.cuda.HalfTensor", "torch.cuda.BFloat16Tensor",
                                  "triton.language.float16", "triton.language.bfloat16", "tl.float16",
                                  "tl.bfloat16", "torch.float8_e4m3fn", "torch.float8_e5m2",
                                  "triton.language.float8e4nv", "numpy.float16", "cupy.float16"};
  walk(syntax_.root(), [&](TSNode n) {
    std::string_view t = type(n);
    if (t == "call") {
      TSNode fn = field(n, "function");
      std::string name = valid(fn) ? resolve(fn) : "";
      std::string attr = valid(fn) && type(fn) == "attribute" ? text(field(fn, "attribute")) : "";
      if (attr == "half" || attr == "bfloat16") add("precision_downgrade", n, "." + attr + "()");
      if (name == "torch.set_float32_matmul_precision") {
        auto args = named_children(field(n, "arguments"));
        auto v = args.empty() ? std::nullopt : eval_string(args[0]);
        if (!v || *v != "highest") add("precision_downgrade", n, name);
      }
      if (name.rfind("torch.autocast", 0) == 0 || name.rfind("torch.cuda.amp", 0) == 0 || name.rfind("torch.amp", 0) == 0 ||
          name.rfind("torch.cpu.amp", 0) == 0) {
        bool disabled = false;  // autocast(enabled=False) turns mixed precision off
        for (TSNode a : named_children(field(n, "arguments")))
          if (type(a) == "keyword_argument" && text(field(a, "name")) == "enabled" && text(field(a, "value")) == "False")
            disabled = true;
        if (!disabled) add("precision_downgrade", n, name);
      }
      if (attr == "dot" && (name.rfind("triton.language.", 0) == 0 || name.rfind("tl.", 0) == 0)) {
        bool explicit_precision = false;
        for (TSNode a : named_children(field(n, "arguments")))
          if (type(a) == "keyword_argument") {
            std::string k = text(field(a, "name"));
            std::string v = text(field(a, "value"));
            if (k == "allow_tf32" || k == "input_precision") explicit_precision = true;
            if ((k == "allow_tf32" && v != "False") ||
                (k == "input_precision" && v.find("ieee") == std::string::npos))
              add("precision_downgrade", n, "tl.dot " + k + "=" + v);
          }
        if (!explicit_precision) add("triton_dot_default_tf32", n, "tl.dot");
      }
      return true;
    }
    if (t == "attribute" || t == "identifier") {
      TSNode p = ts_node_parent(n);
      if (valid(p) && type(p) == "attribute" && ts_node_eq(field(p, "object"), n)) return true;
      std::string name = resolve(n);
      if (!kLowTypes.count(name)) return true;
      // a dtype given as an argument (to(), dtype=, empty(...)) converts; comparisons only test
      for (TSNode a = p; valid(a); a = ts_node_parent(a)) {
        std::string_view at = type(a);
        if (at == "comparison_operator" || at == "if_statement" || at == "conditional_expression" ||
            at == "boolean_operator")
          return false;
        if (at == "argument_list" || at == "keyword_argument" || at == "assignment" || at == "return_statement") {
          add("precision_downgrade", n, name);
          return false;
        }
        if (at == "function_definition" || at == "block") break;
      }
      return false;
    }
    return true;
  });
}

void Analysis::match_output_cache() {
  for (TSNode fnode : reachable_nodes_)
    walk(field(fnode, "body"), [&](TSNode n) {
      std::string_view t = type(n);
      bool key_like = false;
      std::string what;
      if (t == "attribute" && text(field(n, "attribute")) == "_version") { key_like = true; what = "._version"; }
      if (t == "call") {
        TSNode fn = field(n, "function");
        std::string f = valid(fn) ? text(fn) : "";
        if (f == "id" || (valid(fn) && type(fn) == "attribute" && text(field(fn, "attribute")) == "data_ptr")) {
          what = f == "id" ? "id()" : ".data_ptr()";
          // used as a key: inside a subscript index, an `in` test, a dict .get/.setdefault, or a tuple key
          for (TSNode a = ts_node_parent(n); valid(a); a = ts_node_parent(a)) {
            std::string_view at = type(a);
            bool membership = false;
            if (at == "comparison_operator")
              for (uint32_t k = 0; k < ts_node_child_count(a); ++k) {
                std::string_view op = ts_node_type(ts_node_child(a, k));
                if (op == "in" || op == "not in") membership = true;
              }
            if (at == "subscript" || membership || at == "dictionary" || at == "pair") { key_like = true; break; }
            if (at == "call") {
              TSNode g = field(a, "function");
              if (valid(g) && type(g) == "attribute") {
                std::string m = text(field(g, "attribute"));
                if (m == "get" || m == "setdefault" || m == "pop") { key_like = true; break; }
              }
            }
            if (at == "block" || at == "expression_statement") break;
          }
          if (!key_like) {  // k = (x.data_ptr(), ...) then cache[k]
            TSNode a = ts_node_parent(n);
            while (valid(a) && (type(a) == "tuple" || type(a) == "parenthesized_expression")) a = ts_node_parent(a);
            if (valid(a) && type(a) == "assignment") {
              std::string k = text(field(a, "left"));
              walk(field(fnode, "body"), [&](TSNode m) {
                if (type(m) == "subscript" && text(field(m, "subscript")) == k) key_like = true;
                if (type(m) == "comparison_operator" && text(m).find(k + " in") != std::string::npos) key_like = true;
                return !key_like;
              });
            }
          }
        }
      }
      if (key_like) add("output_cache", n, what);
      return true;
    });
}

}  // namespace kgym::policy::detail
