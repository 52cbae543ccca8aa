// The policy analysis's fact collection: imports and aliases, classes and functions, assigned
// values, extension builds (load_inline & co) and the C++ they compile, preprocessed and tokenised.
#include <set>

#include "analysis.hpp"

namespace kgym::policy::detail {

void Analysis::collect_import(TSNode n) {
  std::string_view t = type(n);
  if (t == "import_statement") {
    for (TSNode c : named_children(n)) {
      if (type(c) == "dotted_name") {
        std::string mod = text(c);
        aliases_[mod.substr(0, mod.find('.'))] = mod.substr(0, mod.find('.'));
        imports_.push_back({c, mod});
      } else if (type(c) == "aliased_import") {
        std::string mod = text(field(c, "name"));
        aliases_[text(field(c, "alias"))] = mod;
        imports_.push_back({c, mod});
      }
    }
  } else if (t == "import_from_statement" || t == "future_import_statement") {
    TSNode m = field(n, "module_name");
    std::string mod = valid(m) ? text(m) : "__future__";
    bool any = false;
    for (TSNode c : named_children(n)) {
      if (valid(m) && ts_node_eq(c, m)) continue;
      if (type(c) == "dotted_name") {
        std::string name = text(c);
        aliases_[name] = mod + "." + name;
        imports_.push_back({c, mod + "." + name});
        any = true;
      } else if (type(c) == "aliased_import") {
        std::string name = text(field(c, "name"));
        aliases_[text(field(c, "alias"))] = mod + "." + name;
        imports_.push_back({c, mod + "." + name});
        any = true;
      }
    }
    if (!any) imports_.push_back({n, mod});  // wildcard
  }
}

void Analysis::collect(TSNode n, const std::string& cls, const std::string& func, int depth) {
  std::string_view t = type(n);
  if (t == "import_statement" || t == "import_from_statement" || t == "future_import_statement") {
    collect_import(n);
    return;
  }
  if (t == "class_definition") {
    std::string name = text(field(n, "name"));
    ClassInfo info{n, {}, {}, func.empty() && cls.empty()};
    TSNode supers = field(n, "superclasses");
    if (valid(supers))
      for (TSNode b : named_children(supers))
        if (type(b) != "keyword_argument") {
          info.bases.push_back(resolve(b));
          info.base_nodes.push_back(b);
        }
    if (name == "ModelNew" && info.top_level) has_model_new_ = true;
    classes_[name] = info;
    TSNode body = field(n, "body");
    if (valid(body)) collect(body, name, "", depth + 1);
    return;
  }
  if (t == "function_definition") {
    std::string name = text(field(n, "name"));
    std::string key = (!cls.empty() && func.empty()) ? cls + "." + name : name;
    functions_[key] = {n, cls};
    defs_.push_back({key, {n, cls}});
    TSNode parent = ts_node_parent(n);
    if (valid(parent) && type(parent) == "decorated_definition")
      for (TSNode d : named_children(parent))
        if (type(d) == "decorator") {
          std::string resolved = decorator_name(d);
          if (resolved.rfind("triton.", 0) == 0 || resolved == "jit" || resolved.find("triton.jit") != std::string::npos)
            triton_kernels_.insert(name);
        }
    TSNode body = field(n, "body");
    if (valid(body)) collect(body, cls, key, depth + 1);
    return;
  }
  if (t == "assignment") {
    TSNode left = field(n, "left"), right = field(n, "right");
    if (valid(left) && valid(right)) {
      std::string target = text(left);
      assigns_[target].push_back(right);
      // k = triton.jit(f) / triton.autotune(...)(f): a Triton kernel by assignment
      if (type(right) == "call") {
        TSNode f = field(right, "function");
        while (valid(f) && type(f) == "call") f = field(f, "function");
        std::string r = valid(f) ? resolve(f) : "";
        if (r == "triton.jit" || r == "triton.autotune" || r == "triton.heuristics") triton_kernels_.insert(target);
      }
      // `x = torch.cuda` makes x an alias of a module-level name.
      if (type(left) == "identifier" && (type(right) == "attribute" || type(right) == "identifier")) {
        std::string r = resolve(right);
        std::string head = r.substr(0, r.find('.'));
        if (!r.empty() && r[0] != '.' && aliases_.count(text(right).substr(0, text(right).find('.'))) &&
            !head.empty())
          aliases_[target] = r;
      }
    }
  }
  if (t == "call") {  // list.append(v) / extend / insert: v flows into the list's name
    TSNode fn = field(n, "function");
    if (valid(fn) && type(fn) == "attribute") {
      std::string m = text(field(fn, "attribute"));
      TSNode obj = field(fn, "object");
      if ((m == "append" || m == "extend" || m == "insert" || m == "add_module") && valid(obj) &&
          (type(obj) == "identifier" || type(obj) == "attribute")) {
        auto args = named_children(field(n, "arguments"));
        if (!args.empty()) assigns_[text(obj)].push_back(args.back());
      }
    }
  }
  if (t == "call" && is_ext_call(n)) {
    ext_calls_.push_back(n);
    if (!func.empty()) ext_factories_.insert(func.substr(func.find('.') == std::string::npos ? 0 : func.find('.') + 1));
    TSNode args = field(n, "arguments");
    if (valid(args))
      for (TSNode a : named_children(args))
        if (type(a) == "keyword_argument" && text(field(a, "name")) == "functions") {
          TSNode v = field(a, "value");
          if (type(v) == "identifier") {
            auto it = assigns_.find(text(v));
            if (it != assigns_.end() && !it->second.empty()) v = it->second.back();
          }
          if (auto s = eval_string(v)) exported_.insert(*s);
          else
            for (TSNode e : named_children(v))
              if (auto s2 = eval_string(e)) exported_.insert(*s2);
        }
  }
  uint32_t count = ts_node_named_child_count(n);
  for (uint32_t i = 0; i < count; ++i) collect(ts_node_named_child(n, i), cls, func, depth + 1);
}

/// Names bound to an extension or kernel object: the results of load_inline & co, of functions
/// that build one, and names copied from those (`self.ext = ext`, `fn = ext.relu`).
void Analysis::resolve_extensions() {
  for (int round = 0; round < 4; ++round) {
    size_t before = ext_handles_.size() + ext_factories_.size();
    for (const auto& [target, values] : assigns_) {
      for (TSNode v : values) {
        bool handle = false;
        if (type(v) == "call") {
          TSNode fn = field(v, "function");
          std::string fname = text(fn);
          if (is_ext_call(v)) handle = true;
          std::string base = fname.rfind("self.", 0) == 0 ? fname.substr(5) : fname;
          if (ext_factories_.count(base)) handle = true;
          // ext.get_function("k") on a handle gives a kernel handle (a call of an exported
          // function gives a tensor, not a handle)
          std::string root = fname.substr(0, fname.rfind('.'));
          std::string method = fname.substr(fname.rfind('.') + 1);
          if (fname.find('.') != std::string::npos && ext_handles_.count(root) &&
              (method == "get_function" || method == "get_kernel"))
            handle = true;
        } else if (type(v) == "identifier" || type(v) == "attribute") {
          std::string vt = text(v);
          if (ext_handles_.count(vt)) handle = true;
          std::string root = vt.substr(0, vt.rfind('.'));
          if (vt.find('.') != std::string::npos && ext_handles_.count(root)) handle = true;
          if (triton_kernels_.count(vt)) handle = true;
        }
        if (handle) {
          ext_handles_.insert(target);
          if (target.rfind("self.", 0) == 0) ext_handles_.insert(target);
        }
      }
    }
    // a function returning a handle is a factory
    for (const auto& [key, fn] : functions_) {
      bool returns_handle = false;
      walk(field(fn.node, "body"), [&](TSNode x) {
        if (type(x) == "return_statement")
          for (TSNode r : named_children(x))
            if (ext_handles_.count(text(r)) || (type(r) == "call" && is_ext_call(r))) returns_handle = true;
        return !returns_handle;
      });
      if (returns_handle) ext_factories_.insert(key.substr(key.find('.') == std::string::npos ? 0 : key.find('.') + 1));
    }
    if (ext_handles_.size() + ext_factories_.size() == before) break;
  }
}

void Analysis::collect_cxx() {
  std::set<uint32_t> seen;  // start bytes of nodes already taken
  std::vector<std::pair<TSNode, std::string>> sources;
  auto take = [&](TSNode at, const std::string& s) {
    for (const auto& [node, text] : sources)
      if (text == s) return;
    sources.push_back({at, s});
  };
  // 1. load_inline(cpp_sources=..., cuda_sources=...), positional 2nd/3rd argument, and lists.
  for (TSNode call : ext_calls_) {
    TSNode args = field(call, "arguments");
    if (!valid(args)) continue;
    int positional = 0;
    for (TSNode a : named_children(args)) {
      TSNode value{};
      if (type(a) == "keyword_argument") {
        std::string k = text(field(a, "name"));
        if (k == "cpp_sources" || k == "cuda_sources" || k == "code" || k == "source" || k == "sources" ||
            k == "cuda_source" || k == "cpp_source")
          value = field(a, "value");
      } else {
        ++positional;
        if (positional >= 1 && positional <= 3) value = a;
      }
      if (!valid(value)) continue;
      if (type(value) == "identifier") {
        auto it = assigns_.find(text(value));
        if (it != assigns_.end() && !it->second.empty() &&
            (type(it->second.back()) == "list" || type(it->second.back()) == "tuple"))
          value = it->second.back();
      }
      if (type(value) == "list" || type(value) == "tuple") {
        for (TSNode e : named_children(value))
          if (auto s = eval_string(e)) take(call, *s);
      } else if (auto s = eval_string(value)) {
        take(call, *s);
      }
    }
  }
  // 2. Any string expression whose value looks like C/C++/CUDA.
  auto looks_cxx = [](const std::string& s) {
    for (std::string_view m : {"__global__", "#include", "torch::", "at::Tensor", "extern \"C\"", "<<<",
                               "PYBIND11_MODULE", "__device__", "#define", "TORCH_LIBRARY", "cuda_runtime"})
      if (s.find(m) != std::string::npos) return true;
    return false;
  };
  walk(syntax_.root(), [&](TSNode n) {
    std::string_view t = type(n);
    if (t == "string" || t == "concatenated_string" || t == "binary_operator") {
      if (auto s = eval_string(n); s && looks_cxx(*s)) {
        take(n, *s);
        return false;
      }
      if (t != "binary_operator") return false;
    }
    return true;
  });
  for (auto& [at, src] : sources) {
    CxxUnit unit{at, src, detail::tokenize_cxx(src)};
    unit.raw_count = unit.tokens.size();
    detail::Preprocessed pre;
    if (ctx_.preprocess_cxx) pre = detail::preprocess_cxx(src);
    unit.preprocessed = pre.ok;
    if (ctx_.preprocess_cxx && !pre.ok && pre.error.rfind("cannot run", 0) != 0) {
      std::string first = pre.error.substr(0, pre.error.find('\n'));
      size_t colon = first.find("error:");
      add("cxx_preprocess_failed", at, colon == std::string::npos ? first : first.substr(colon));
    }
    if (pre.ok) {
      auto more = detail::tokenize_cxx(pre.text);
      unit.tokens.insert(unit.tokens.end(), more.begin(), more.end());
    }
    // TORCH_LIBRARY(ns, m) defines the operator namespace ns (torch refuses a second
    // TORCH_LIBRARY for a namespace that exists, so it is never one of torch's own);
    // TORCH_LIBRARY_FRAGMENT and _IMPL only add to one and define nothing.
    for (size_t i = 0; i + 2 < unit.tokens.size(); ++i)
      if (unit.tokens[i].text == "TORCH_LIBRARY" && unit.tokens[i + 1].text == "(" && unit.tokens[i + 2].kind == 'i')
        own_op_namespaces_.insert(unit.tokens[i + 2].text);
    // m.def("name", ...) and TORCH_LIBRARY m.def("name(Tensor x) -> Tensor") export names.
    for (size_t i = 0; i + 3 < unit.tokens.size(); ++i)
      if (unit.tokens[i].text == "def" && unit.tokens[i + 1].text == "(" && unit.tokens[i + 2].kind == 's') {
        std::string name = unit.tokens[i + 2].text;
        name = name.substr(0, name.find('('));
        if (!name.empty()) exported_.insert(name);
      }
    cxx_.push_back(std::move(unit));
  }
}

}  // namespace kgym::policy::detail
