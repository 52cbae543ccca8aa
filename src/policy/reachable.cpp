// The policy analysis's forward path: the candidate's functions that ModelNew's forward (or
// __call__) can reach, which the compute and custom-kernel rules then read.
#include <algorithm>
#include <set>

#include "analysis.hpp"

namespace kgym::policy::detail {

/// The forward-path search: a work list of definitions, seeded with ModelNew's call path and the
/// callables Python runs without the path naming them, then drained by walking each body.
struct Analysis::Reach {
  explicit Reach(Analysis& analysis) : a(analysis) {}
  Analysis& a;
  // Work items are definitions, not names: a name defined twice (two nested `wrapper`s, one
  // honest and one not) brings every definition of it.
  std::vector<const Function*> work;
  std::set<uint32_t> visited;  ///< definitions' start bytes
  std::set<std::string> classes_pushed;
  std::vector<TSNode> lambdas;
  std::set<std::string> followed;

  /// Puts every definition of `key` on the path (once each).
  void push(const std::string& key) {
    if (!a.functions_.count(key)) return;
    a.reachable_.insert(key);
    for (const auto& [k, f] : a.defs_)
      if (k == key && visited.insert(ts_node_start_byte(f.node)).second) work.push_back(&f);
  }
  void push_class_path(const std::string& c, bool made);
  void push_class(const std::string& c) { push_class_path(c, true); }
  void push_replaced_forward();
  void push_special_methods();
  void push_functions_used_as_values();
  void push_lambdas();
  void follow(TSNode v, const std::string& cls);
  void visit_self_attribute(const Function& fn, TSNode x, const std::string& attr);
  void visit_body(const Function& fn);
};

/// A class's call path: forward, __call__ (and, for a class made on the path, __init__ and
/// __new__), its own and those of the candidate's classes it derives from (red team rt29: a base
/// class's __call__ ran numpy around ModelNew's forward).
void Analysis::Reach::push_class_path(const std::string& c, bool made) {
  if (!classes_pushed.insert(c + (made ? "+" : "")).second) return;
  for (const char* m : {"forward", "__call__"}) push(c + "." + m);
  if (made)
    for (const char* m : {"__init__", "__new__"}) push(c + "." + m);
  if (auto it = a.classes_.find(c); it != a.classes_.end())
    for (const auto& b : it->second.bases)
      if (a.classes_.count(b)) push_class_path(b, made);
}

/// `self.forward = self._impl` (or a lambda) in __init__ replaces forward.
void Analysis::Reach::push_replaced_forward() {
  for (const char* slot : {"self.forward", "self.__call__"}) {
    auto it = a.assigns_.find(slot);
    if (it == a.assigns_.end()) continue;
    a.forward_replaced_ = true;
    for (TSNode v : it->second) {
      std::string vt = a.text(v);
      if (type(v) == "lambda") lambdas.push_back(v);
      else if (vt.rfind("self.", 0) == 0) push("ModelNew." + vt.substr(5));
      else push(vt);
    }
  }
}

// What Python calls without the path naming it (red team rt29: numpy ran in a __getitem__, a
// forward hook and a decorator's wrapper, none of them reached by name). (1) Every special
// method of every class of the candidate, except those that make a class or an object (a
// class made on the path brings its __init__ and __new__ above). (2) Every function or method
// of the candidate used as a value anywhere in the file, not only called: a hook, a callback, a
// decorator, a function returned or stored. What the file only calls directly at load time
// (module level, ModelNew.__init__) stays off the path.
void Analysis::Reach::push_special_methods() {
  static const Names kMakingDunders = {"__init__", "__new__", "__init_subclass__", "__set_name__", "__prepare__",
                                       "__post_init__"};
  for (const auto& [key, f] : a.defs_) {
    if (f.cls.empty()) continue;
    const std::string m = key.substr(key.rfind('.') + 1);
    if (m.size() > 4 && m.rfind("__", 0) == 0 && m.compare(m.size() - 2, 2, "__") == 0 && !kMakingDunders.count(m))
      push(key);
  }
}

void Analysis::Reach::push_functions_used_as_values() {
  std::set<std::string> methods;  // method names of the candidate's classes
  for (const auto& [key, f] : a.defs_)
    if (!f.cls.empty()) methods.insert(key.substr(key.rfind('.') + 1));
  a.walk(a.syntax_.root(), [&](TSNode x) {
    std::string_view tx = type(x);
    if (tx == "import_statement" || tx == "import_from_statement" || tx == "future_import_statement") return false;
    if (tx != "identifier" && tx != "attribute") return true;
    TSNode p = ts_node_parent(x);
    const bool called = valid(p) && type(p) == "call" && ts_node_eq(field(p, "function"), x);
    if (tx == "attribute") {
      const std::string m = a.text(field(x, "attribute"));
      if (!called && methods.count(m))
        for (const auto& [key, f] : a.defs_)
          if (!f.cls.empty() && key == f.cls + "." + m) push(key);
      return true;
    }
    if (called || !valid(p)) return true;
    std::string_view tp = type(p);
    if ((tp == "function_definition" || tp == "class_definition" || tp == "keyword_argument") &&
        ts_node_eq(field(p, "name"), x))
      return true;
    if (tp == "attribute" && ts_node_eq(field(p, "attribute"), x)) return true;
    const std::string name = a.text(x);
    if (a.functions_.count(name)) push(name);
    return true;
  });
}

/// Every lambda counts as forward path: a lambda is a callable value, and where it flows (a
/// container, an attribute, an argument) is not followed. The names a lambda calls are pushed.
void Analysis::Reach::push_lambdas() {
  a.walk(a.syntax_.root(), [&](TSNode x) {
    if (type(x) == "lambda" &&
        std::none_of(lambdas.begin(), lambdas.end(), [&](TSNode l) { return ts_node_eq(l, x); }))
      lambdas.push_back(x);
    return true;
  });
  for (TSNode l : lambdas) {  // names a lambda calls
    a.walk(l, [&](TSNode x) {
      if (type(x) == "identifier") push(a.text(x));
      if (type(x) == "attribute" && a.text(field(x, "object")) == "self")
        push("ModelNew." + a.text(field(x, "attribute")));
      return true;
    });
  }
}

/// Values flow: a name or self.<attr> used on the forward path reaches the functions its assigned
/// values mention (`TABLE = {"f": helper}` ... `TABLE["f"](x)`; `self.ops = [helper]`).
void Analysis::Reach::follow(TSNode v, const std::string& cls) {
  a.walk(v, [&](TSNode x) {
    std::string_view tx = type(x);
    if (tx == "lambda") return false;  // all lambdas are on the path already
    std::string key;
    if (tx == "identifier") {
      key = a.text(x);
      push(key);
      if (a.classes_.count(key)) push_class(key);
    } else if (tx == "attribute" && a.text(field(x, "object")) == "self") {
      key = "self." + a.text(field(x, "attribute"));
      if (!cls.empty()) push(cls + "." + a.text(field(x, "attribute")));
    } else {
      return true;
    }
    if (followed.insert(key).second)
      if (auto it = a.assigns_.find(key); it != a.assigns_.end())
        for (TSNode y : it->second) follow(y, cls);
    return tx != "attribute";
  });
}

/// `self.<attr>` / `cls.<attr>` in a method on the path: the method of that name, what the
/// attribute was assigned (a class made, a bound method, a function), and the methods of that
/// name in the candidate's base classes.
void Analysis::Reach::visit_self_attribute(const Function& fn, TSNode x, const std::string& attr) {
  push(fn.cls + "." + attr);
  follow(x, fn.cls);
  auto it = a.assigns_.find("self." + attr);
  if (it != a.assigns_.end())
    for (TSNode v : it->second) {
      std::string callee = type(v) == "call" ? a.text(field(v, "function")) : a.text(v);
      if (a.classes_.count(callee)) push_class(callee);
      if (callee.rfind("self.", 0) == 0) push(fn.cls + "." + callee.substr(5));
      push(callee);
    }
  // methods of base classes defined in the candidate
  if (a.classes_.count(fn.cls))
    for (const auto& b : a.classes_.at(fn.cls).bases) push(b + "." + attr);
}

/// One definition on the path: its default arguments and every name and attribute in its body.
void Analysis::Reach::visit_body(const Function& fn) {
  follow(field(fn.node, "parameters"), fn.cls);  // default arguments
  a.walk(field(fn.node, "body"), [&](TSNode x) {
    std::string_view t = type(x);
    if (t == "identifier") {
      std::string name = a.text(x);
      push(name);
      if (a.classes_.count(name)) push_class(name);
      if (a.assigns_.count(name)) follow(x, fn.cls);
    } else if (t == "attribute") {
      TSNode obj = field(x, "object");
      std::string attr = a.text(field(x, "attribute"));
      if (valid(obj) && type(obj) == "identifier") {
        std::string o = a.text(obj);
        if (o == "self" || o == "cls") {
          visit_self_attribute(fn, x, attr);
        } else if (a.classes_.count(o)) {
          if (attr == "apply") push_class(o);
          push(o + "." + attr);
        }
      }
    }
    return true;
  });
}

/// Functions on the forward path: ModelNew.forward and __call__, and what they call by name,
/// through self.method, Class.method, Function.apply and submodules built in __init__.
void Analysis::compute_reachable() {
  Reach r(*this);
  r.push_replaced_forward();
  r.push_class_path("ModelNew", false);
  r.push_special_methods();
  r.push_functions_used_as_values();
  r.push_lambdas();
  while (!r.work.empty()) {
    const Function& fn = *r.work.back();
    r.work.pop_back();
    r.visit_body(fn);
  }
  for (const auto& [key, f] : defs_)
    if (r.visited.count(ts_node_start_byte(f.node))) reachable_nodes_.push_back(f.node);
  reachable_nodes_.insert(reachable_nodes_.end(), r.lambdas.begin(), r.lambdas.end());
}

}  // namespace kgym::policy::detail
