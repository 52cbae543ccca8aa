// The policy analysis's name matchers: dotted names resolved through imports against the name
// rules (names.cpp), array interop and modules reached as attributes, attribute access by a
// computed name, classes built at run time, and shared-memory or /proc paths in strings.
#include <map>

#include "analysis.hpp"

namespace kgym::policy::detail {

/// Every name rule, then the interop, attribute-access, dynamic-class and path matchers (in
/// that order, so that a position's first finding is the same whichever matcher finds it).
void Analysis::match_names() {
  match_name_rules();
  match_array_interop_and_module_attributes();
  match_dynamic_attribute_calls();
  match_dynamic_classes();
  match_path_strings();
}

/// Maximal dotted chains and bare names, resolved through imports, against kNameRules and the
/// private torch namespaces.
void Analysis::match_name_rules() {
  walk(syntax_.root(), [&](TSNode n) {
    std::string_view t = type(n);
    if (t == "import_statement" || t == "import_from_statement" || t == "future_import_statement") return false;
    bool getattr_call = t == "call" && valid(field(n, "function")) && text(field(n, "function")) == "getattr";
    if (t != "attribute" && t != "identifier" && !getattr_call) return true;
    TSNode p = ts_node_parent(n);
    if (valid(p) && type(p) == "attribute" && ts_node_eq(field(p, "object"), n)) return true;  // not maximal
    if (valid(p) && type(p) == "attribute" && ts_node_eq(field(p, "attribute"), n)) return false;  // x.<name>
    if (t == "identifier") {
      // a bare name only counts when it is a use, not a definition or a keyword/attribute name
      if (valid(p) && (type(p) == "function_definition" || type(p) == "class_definition" ||
                       type(p) == "keyword_argument" || type(p) == "parameters" ||
                       type(p) == "default_parameter" || type(p) == "typed_parameter"))
        return true;
      std::string name = text(n);
      if (functions_.count(name) || (assigns_.count(name) && !aliases_.count(name))) return true;  // shadowed
    }
    std::string name = resolve(n);
    if (name.empty()) return true;
    // Chains whose root is not an import or a builtin (locals, self) only match ".attr" prefixes.
    std::string raw_root = text(n).substr(0, text(n).find_first_of(".("));
    bool rooted = name[0] != '.' && (getattr_call || aliases_.count(raw_root) ||
                                     (kBuiltinsOfInterest.count(raw_root) && !functions_.count(raw_root) &&
                                      !assigns_.count(raw_root)));
    // torch.ops.<ns> of a namespace torch itself registers (mkldnn, quantized, onednn, inductor,
    // ...; aten and prims are in the list above): library compute that passed strict as the
    // candidate's own code (red team rt24: oneDNN's GEMM through torch.ops.mkldnn). Only a
    // namespace the candidate's own TORCH_LIBRARY defines is its code.
    // torch._<name> (torch._softmax, torch._log_softmax, torch._addmm_activation, ...): ATen's
    // private entry points, compute the lists above do not name (red team rt24).
    if (rooted && name.rfind("torch._", 0) == 0 && name.rfind("torch.__", 0) != 0) {
      bool listed = false;  // torch._C, torch._dynamo, ...: the rules below name them
      for (const auto& rule : kNameRules)
        for (auto prefix : rule.prefixes)
          if (prefix.front() != '.' && matches_prefix(name, prefix)) listed = true;
      if (!listed) add("private_torch_internals", n, name + " (a private torch function)");
    }
    if (rooted && matches_prefix(name, "torch.ops") && !own_op_namespace(name) &&
        !matches_prefix(name, "torch.ops.aten") && !matches_prefix(name, "torch.ops.prims"))
      add("private_torch_internals", n,
          name + " (an operator namespace of torch itself; only one your own TORCH_LIBRARY defines is your code)");
    for (const auto& rule : kNameRules)
      for (auto prefix : rule.prefixes) {
        bool hit = prefix.front() == '.' ? matches_prefix("." + name, prefix)
                                         : rooted && matches_prefix(name, prefix);
        if (hit) {
          if (rule.rule_id == "file_network_env" && (prefix == "open" || prefix == "input" || prefix == "json")) {
            // builtin open()/input(): only as a call; json only when imported
            if (prefix == "json" && !aliases_.count("json")) continue;
            if (prefix != "json" && !(valid(p) && type(p) == "call")) continue;
          }
          if (rule.rule_id == "dynamic_code" && (prefix == "compile" || prefix == "eval" || prefix == "exec") &&
              !(valid(p) && type(p) == "call"))
            continue;
          if (rule.rule_id == "introspection" && (prefix == "globals" || prefix == "locals" || prefix == "vars") &&
              !(valid(p) && type(p) == "call"))
            continue;
          // os.fork etc. are more specific than os.*
          if (rule.rule_id == "file_network_env" && prefix == "os") {
            bool more_specific = false;
            for (const auto& r2 : kNameRules)
              if (r2.rule_id != "file_network_env")
                for (auto p2 : r2.prefixes)
                  if (p2.size() > 3 && p2.substr(0, 3) == "os." && matches_prefix(name, p2)) more_specific = true;
            if (more_specific) continue;
          }
          add(rule.rule_id, n, name);
          goto next_rule;
        }
      next_rule:;
      }
    return true;
  });
}

/// Array interop anywhere (red team rt30: a numpy view of a torch buffer made in __init__, then
/// numpy's operators on it in forward, which no name and no ATen trace shows), and modules
/// reached as another module's attribute (rt30: numpy's namespace -> .ctypeslib -> ctypes,
/// ._ctypeslib.os -> os.sys.modules -> any module, past the import and name rules).
void Analysis::match_array_interop_and_module_attributes() {
  static const Names kInterop = {"numpy", "from_numpy", "from_dlpack", "to_dlpack", "__dlpack__", "__dlpack_device__",
                                 "__array__", "__array_interface__", "__array_struct__", "__cuda_array_interface__",
                                 "__array_namespace__", "asarray", "asanyarray", "ascontiguousarray", "frombuffer",
                                 "as_array", "ctypeslib", "_ctypeslib"};
  static const std::map<std::string, std::string_view, std::less<>> kModuleAttrs = {
      {"os", "introspection"}, {"sys", "introspection"}, {"inspect", "introspection"}, {"builtins", "introspection"},
      {"gc", "introspection"}, {"ctypes", "dynamic_code"}, {"CDLL", "dynamic_code"}, {"cdll", "dynamic_code"},
      {"PyDLL", "dynamic_code"}, {"pydll", "dynamic_code"}, {"pythonapi", "dynamic_code"},
      // numpy and threads as attributes of other modules (red team rt31: torch.storage.np,
      // torch.storage.threading)
      {"np", "array_interop"}, {"threading", "threads_processes_async"}, {"_thread", "threads_processes_async"},
      {"multiprocessing", "threads_processes_async"},
      {"LoadLibrary", "dynamic_code"}, {"importlib", "dynamic_code"}, {"subprocess", "subprocess_system"},
      // whether the profiler runs: a candidate that can tell traced calls from the others (rt30)
      {"profiler", "introspection"}, {"_is_profiler_enabled", "introspection"}, {"_profiler_enabled", "introspection"}};
  walk(syntax_.root(), [&](TSNode n) {
    std::string_view t = type(n);
    if (t == "import_statement" || t == "import_from_statement" || t == "future_import_statement") return false;
    std::string attr;
    if (t == "attribute") {
      attr = text(field(n, "attribute"));
    } else if (t == "identifier" && text(n) == "memoryview" && !functions_.count("memoryview") &&
               !assigns_.count("memoryview")) {
      attr = "memoryview";  // the builtin: a view of a buffer's memory (rt31's kind)
      add("array_interop", n, "memoryview");
      return true;
    } else if (t == "identifier" && aliases_.count(text(n))) {  // from numpy import asarray
      const std::string name = resolve(n);
      if (name.find('.') != std::string::npos) attr = name.substr(name.rfind('.') + 1);
      if (attr == "numpy") attr.clear();  // `import numpy` itself
    } else {
      return true;
    }
    if (kInterop.count(attr)) add("array_interop", n, text(n));
    // numpy's ndarray constructor over a buffer (a tensor's bytes or memory) and memoryview
    if (t == "attribute" && attr == "ndarray") {
      TSNode p = ts_node_parent(n);
      if (valid(p) && type(p) == "call" && ts_node_eq(field(p, "function"), n)) add("array_interop", n, text(n) + "(...)");
    }
    if (t == "attribute")
      if (auto it = kModuleAttrs.find(attr); it != kModuleAttrs.end())
        add(it->second, n, text(n) + " (a module reached as an attribute)");
    return true;
  });
}

/// getattr(module, <not a constant>) is dynamic code; setattr/delattr on modules is patching.
void Analysis::match_dynamic_attribute_calls() {
  walk(syntax_.root(), [&](TSNode n) {
    if (type(n) != "call") return true;
    std::string fn = text(field(n, "function"));
    if (fn != "getattr" && fn != "setattr" && fn != "delattr") return true;
    auto args = named_children(field(n, "arguments"));
    if (args.empty()) return true;
    std::string target = resolve(args[0]);
    bool on_module = !target.empty() && target[0] != '.' && aliases_.count(text(args[0]).substr(0, text(args[0]).find('.')));
    if (fn == "getattr" && on_module && (args.size() < 2 || !eval_string(args[1])))
      add("dynamic_code", n, "getattr on " + target + " with a computed name");
    if (fn != "getattr" && (on_module || target.rfind("torch", 0) == 0)) add("timer_harness_patch", n, fn + " on " + target);
    return true;
  });
}

/// type(name, bases, namespace) builds a class at run time (e.g. a hidden Tensor subclass).
void Analysis::match_dynamic_classes() {
  walk(syntax_.root(), [&](TSNode n) {
    if (type(n) != "call" || text(field(n, "function")) != "type" || functions_.count("type")) return true;
    if (named_children(field(n, "arguments")).size() == 3) add("dynamic_code", n, "type() with 3 arguments");
    return true;
  });
}

/// Paths of shared memory, /proc, /sys or /tmp in Python strings.
void Analysis::match_path_strings() {
  walk(syntax_.root(), [&](TSNode n) {
    if (type(n) != "string") return true;
    // A string that is a statement of its own (a docstring, a note) is never used as a path
    // (red team rt33: an honest ReLU rejected for naming /tmp/torch_extensions in its docstring).
    if (TSNode p = ts_node_parent(n); valid(p) && type(p) == "expression_statement" && ts_node_named_child_count(p) == 1)
      return false;
    std::string v = string_value(n);
    for (std::string_view p : {"/dev/shm", "/proc/", "/sys/", "/tmp/"})
      if (v.find(p) != std::string::npos && v.find("__global__") == std::string::npos) {
        add("file_network_env", n, "path " + std::string(p));
        break;
      }
    return false;
  });
}

}  // namespace kgym::policy::detail
