// The policy analysis's compute-as-value matchers: torch compute reachable as a value, not only as
// a direct call (callables stored, aliased, passed or defaulted; unbound Tensor methods; attribute
// access by string), and torch.nn layer instances called on the forward path.
#include <cctype>

#include "analysis.hpp"

namespace kgym::policy::detail {

namespace {

bool parent_is(TSNode n, std::string_view t) {
  TSNode p = ts_node_parent(n);
  return valid(p) && type(p) == t;
}

/// `n` is the function of a call.
bool is_called(TSNode n) {
  TSNode p = ts_node_parent(n);
  return valid(p) && type(p) == "call" && ts_node_eq(field(p, "function"), n);
}

/// `n` is the `.name` part of an attribute.
bool is_attr_name(TSNode n) {
  TSNode p = ts_node_parent(n);
  return valid(p) && type(p) == "attribute" && ts_node_eq(field(p, "attribute"), n);
}

/// "torch.nn.X" (or torch.nn.modules.<path>.X) -> "X" for a torch.nn class; "" otherwise.
std::string nn_layer_of(const std::string& name) {
  if (name.rfind("torch.nn.", 0) != 0 || name.rfind("torch.nn.functional", 0) == 0 ||
      name.rfind("torch.nn.init", 0) == 0 || name.rfind("torch.nn.utils", 0) == 0 ||
      name.rfind("torch.nn.parameter", 0) == 0)
    return "";
  std::string last = name.substr(name.rfind('.') + 1);
  if (name.find('.', 9) != std::string::npos && name.rfind("torch.nn.modules.", 0) != 0) return "";
  if (last.empty() || !std::isupper(static_cast<unsigned char>(last[0]))) return "";
  return last;
}

/// A torch.nn layer without parameters (kNnParamFree, or a name ending in "Loss").
bool param_free(const std::string& layer) {
  return kNnParamFree.count(layer) > 0 || (layer.size() > 4 && layer.compare(layer.size() - 4, 4, "Loss") == 0);
}

}  // namespace

/// True when a method call on `obj` cannot be a Tensor method (modules, literals, handles).
bool Analysis::receiver_harmless(TSNode obj) const {
  if (!valid(obj)) return true;
  std::string o = text(obj);
  std::string root = o.substr(0, o.find('.'));
  if (type(obj) == "string" || type(obj) == "integer" || type(obj) == "float") return true;
  if (kHarmlessReceivers.count(root)) return true;
  if (aliases_.count(root)) {
    std::string r = resolve_name(o);
    return r.rfind("torch", 0) != 0;  // other modules (math.sqrt) are not tensors
  }
  if (ext_handles_.count(o) || ext_handles_.count(root)) return true;
  if (type(obj) == "call") {
    std::string f = text(field(obj, "function"));
    if (ext_factories_.count(f) || ext_factories_.count(f.rfind("self.", 0) == 0 ? f.substr(5) : f)) return true;
  }
  if (classes_.count(o)) return true;
  return false;
}

/// A torch compute callable by its resolved name: torch.* compute ops, everything in
/// torch.nn.functional/linalg/fft/special except F.pad, torch.Tensor.<op or operator dunder>,
/// operator.matmul. `gemm`: a library GEMM/convolution (hybrid's allowance).
bool Analysis::torch_compute_name(const std::string& name, bool* gemm) const {
  *gemm = false;
  if (name == "operator.matmul" || name == "operator.imatmul" || name == "operator.__matmul__" ||
      name == "operator.__imatmul__") {
    *gemm = true;
    return true;
  }
  if (name.rfind("torch.", 0) != 0 || name.rfind("torch.ops.", 0) == 0 || name.find(".cuda.") != std::string::npos)
    return false;
  const std::string attr = name.substr(name.rfind('.') + 1);
  bool ns = false;
  for (std::string_view p : {"torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special."})
    if (name.size() > p.size() && name.compare(0, p.size(), p) == 0) ns = true;
  if (name.rfind("torch.nn.functional.pad", 0) == 0) return false;
  bool tensor_dunder = name.rfind("torch.Tensor.", 0) == 0 && kComputeDunders.count(attr);
  if (!ns && !is_compute_op(attr) && !tensor_dunder) return false;
  *gemm = kGemmConvOps.count(attr) > 0 || attr == "__matmul__" || attr == "__rmatmul__" || attr == "__imatmul__";
  return true;
}

/// Torch compute reachable as a value, not only as a direct call: compute callables stored,
/// aliased, passed or defaulted; unbound Tensor methods; attribute access by string; torch.nn
/// compute modules and library layers called through aliases and containers.
void Analysis::match_compute_values() {
  compute_values_in_module();
  collect_nn_holders();
  compute_values_on_forward_path();
}

/// 1. Names anywhere in the module.
void Analysis::compute_values_in_module() {
  walk(syntax_.root(), [&](TSNode n) {
    std::string_view t = type(n);
    if (t == "import_statement" || t == "import_from_statement" || t == "future_import_statement") return false;
    bool getattr_call = t == "call" && text(field(n, "function")) == "getattr" && !functions_.count("getattr");
    if (t == "attribute" || t == "identifier" || getattr_call) {
      if (is_attr_name(n)) return false;
      if (t == "identifier") {
        TSNode p = ts_node_parent(n);
        if (valid(p) && (type(p) == "function_definition" || type(p) == "class_definition" ||
                         type(p) == "parameters" || type(p) == "lambda_parameters" ||
                         (type(p) == "keyword_argument" && ts_node_eq(field(p, "name"), n)) ||
                         ((type(p) == "default_parameter" || type(p) == "typed_default_parameter" ||
                           type(p) == "typed_parameter") && ts_node_eq(field(p, "name"), n)) ||
                         (type(p) == "assignment" && ts_node_eq(field(p, "left"), n))))
          return true;
        std::string name = text(n);
        if (functions_.count(name) || (assigns_.count(name) && !aliases_.count(name))) return true;  // shadowed
        if (!aliases_.count(name)) return true;
      }
      compute_name_as_value(n, getattr_call);
    }
    // T = type(x) / T = x.__class__ / f(T=x.__class__): a class object kept as a value
    if ((t == "call" && text(field(n, "function")) == "type" && named_children(field(n, "arguments")).size() == 1) ||
        (t == "attribute" && text(field(n, "attribute")) == "__class__")) {
      TSNode p = ts_node_parent(n);
      bool kept = valid(p) && ((type(p) == "assignment" && ts_node_eq(field(p, "right"), n)) ||
                               type(p) == "default_parameter" || type(p) == "typed_default_parameter" ||
                               type(p) == "list" || type(p) == "tuple" || type(p) == "pair" ||
                               (type(p) == "keyword_argument" && ts_node_eq(field(p, "value"), n)));
      if (kept) add("unbound_tensor_method", n, text(n) + " kept as a value");
    }
    if (getattr_call) {
      // getattr on a non-module: a computed name, or the name of a compute method
      auto args = named_children(field(n, "arguments"));
      if (!args.empty()) {
        std::string recv = text(args[0]);
        std::string root = recv.substr(0, recv.find_first_of(".(["));
        bool on_module = aliases_.count(root) > 0;
        bool on_handle = ext_handles_.count(recv) || ext_handles_.count(root) ||
                         (recv.rfind("self.", 0) == 0 && ext_handles_.count(recv)) ||
                         (type(args[0]) == "call" && receiver_harmless(args[0]));
        if (!on_module && !on_handle) {
          auto s = args.size() >= 2 ? eval_string(args[1]) : std::nullopt;
          if (!s) add("string_attribute_access", n, "getattr with a computed name");
          else if (is_compute_op(*s) || kComputeDunders.count(*s) || *s == "forward" || *s == "__call__")
            add("string_attribute_access", n, "getattr(..., \"" + *s + "\")");
        }
      }
    }
    return true;
  });
}

/// One name, attribute chain or getattr call of the module (not a definition, not shadowed):
/// an unbound Tensor method, an array library's or torch's compute callable used as a value,
/// operator.methodcaller/attrgetter, a parameter-free torch.nn module, `__getattribute__`, and
/// the Tensor class's methods through type(x) or x.__class__.
void Analysis::compute_name_as_value(TSNode n, bool getattr_call) {
  const std::string_view t = type(n);
  std::string name = resolve(n);
  bool gemm = false;
  if (!name.empty() && name[0] != '.') {
    if (name.rfind("torch.Tensor.", 0) == 0 && torch_compute_name(name, &gemm)) {
      add("unbound_tensor_method", n, name);
    } else if ((name.rfind("numpy.", 0) == 0 || name.rfind("cupy.", 0) == 0) && name.rfind("cupy.cuda.", 0) != 0 &&
               !is_called(n) && is_compute_op(name.substr(name.rfind('.') + 1)) &&
               name.find('.', name.find('.') + 1) == std::string::npos) {
      // An array library's compute function as a value (a hook, functools.partial): it runs
      // where no call on the path is seen (red team rt29's kind; numpy is invisible to the op trace).
      add("torch_compute_as_value", n, name + " used as a value");
    } else if (torch_compute_name(name, &gemm) && (getattr_call || !is_called(n))) {
      if (gemm) gemm_sites_.push_back({n, name, "torch_compute_as_value"});
      else add("torch_compute_as_value", n, name + " used as a value");
    }
    if (name == "operator.methodcaller" || name == "operator.attrgetter")
      add("string_attribute_access", n, name);
    std::string layer = nn_layer_of(name);
    bool maximal = !(valid(ts_node_parent(n)) && type(ts_node_parent(n)) == "attribute");
    if (!layer.empty() && param_free(layer) && maximal) add("nn_compute_module", n, name);
  }
  if (t == "attribute") {
    std::string attr = text(field(n, "attribute"));
    TSNode obj = field(n, "object");
    if (attr == "__getattribute__" || attr == "__getattr__") add("string_attribute_access", n, "." + attr);
    // type(x).relu / x.__class__.relu: the Tensor class's unbound methods
    bool class_obj = (type(obj) == "call" && text(field(obj, "function")) == "type" &&
                      named_children(field(obj, "arguments")).size() == 1) ||
                     (type(obj) == "attribute" && text(field(obj, "attribute")) == "__class__");
    if (class_obj && !kClassNameAttrs.count(attr) && attr != "__class__")
      add("unbound_tensor_method", n, text(obj) + "." + attr);
  }
}

/// 2. Names holding a torch.nn layer instance (built from torch.nn.X(...), or copied from such a
///    name, or a container of them), unless the value also builds one of the candidate's classes.
void Analysis::collect_nn_holders() {
  for (int round = 0; round < 5; ++round) {
    size_t before = nn_holders_.size();
    for (const auto& [target, values] : assigns_) {
      if (nn_holders_.count(target)) continue;
      for (TSNode v : values) {
        bool layer = false, own = false;
        walk(v, [&](TSNode x) {
          std::string_view tx = type(x);
          if (tx == "lambda") return false;
          if (tx == "call") {
            std::string callee = resolve(field(x, "function"));
            std::string l = nn_layer_of(callee);
            if (!l.empty() && !kNnContainers.count(l) && l != "Sequential" && l != "ModuleList" && l != "ModuleDict")
              layer = true;
            if (classes_.count(text(field(x, "function")))) own = true;
            return true;
          }
          if ((tx == "identifier" || tx == "attribute") && nn_holders_.count(text(x))) {
            TSNode p = ts_node_parent(x);
            if (!(valid(p) && type(p) == "attribute" && ts_node_eq(field(p, "object"), x))) layer = true;
            return false;
          }
          return true;
        });
        if (layer && !own) nn_holders_.insert(target);
      }
    }
    if (nn_holders_.size() == before) break;
  }
}

/// The holder a callee expression reaches ("" when none): `self.lin`, `self.layers[i]`,
/// `self.lin.forward`, getattr(self, "lin"), or a layer built in place (`nn.Linear(4, 4)(x)`).
std::string Analysis::nn_holder_of(TSNode f) const {
  while (valid(f) && (type(f) == "subscript" || type(f) == "parenthesized_expression"))
    f = type(f) == "subscript" ? field(f, "value") : named_children(f).front();
  if (valid(f) && type(f) == "attribute") {
    std::string a = text(field(f, "attribute"));
    if (a == "forward" || a == "__call__" || a == "_call_impl") f = field(f, "object");
  }
  if (!valid(f)) return "";
  if (type(f) == "call" && text(field(f, "function")) == "getattr") {  // getattr(self, "lin")
    auto args = named_children(field(f, "arguments"));
    if (args.size() >= 2)
      if (auto s = eval_string(args[1])) {
        std::string key = text(args[0]) + "." + *s;
        if (nn_holders_.count(key)) return key;
      }
    return "";
  }
  if (type(f) == "call") {  // nn.Linear(4, 4)(x)
    std::string l = nn_layer_of(resolve(field(f, "function")));
    if (!l.empty() && !kNnContainers.count(l)) return resolve(field(f, "function"));
    return "";
  }
  std::string s = text(f);
  return nn_holders_.count(s) ? s : "";
}

/// The torch.nn.X a holder builds ("torch.nn layer <holder>" when no constructor is found).
std::string Analysis::nn_layer_built_by(const std::string& holder) const {
  if (holder.rfind("torch.nn.", 0) == 0) return holder;
  auto it = assigns_.find(holder);
  std::string found;
  if (it != assigns_.end())
    for (TSNode v : it->second)
      walk(v, [&](TSNode x) {
        if (found.empty() && type(x) == "call") {
          std::string c = resolve(field(x, "function"));
          if (!nn_layer_of(c).empty() && !kNnContainers.count(nn_layer_of(c))) found = c;
        }
        return found.empty();
      });
  return found.empty() ? "torch.nn layer " + holder : found;
}

/// 3. On the forward path: calls reaching a layer instance, bound Tensor compute methods kept as
///    values, layers passed as values (map(self.act, ...)).
void Analysis::compute_values_on_forward_path() {
  for (TSNode fnode : reachable_nodes_) {
    walk(field(fnode, "body"), [&](TSNode n) {
      std::string_view t = type(n);
      if (t == "function_definition" || t == "class_definition") return false;
      if (t == "call") {
        std::string h = nn_holder_of(field(n, "function"));
        if (!h.empty()) {
          std::string what = nn_layer_built_by(h);
          std::string l = nn_layer_of(what);
          if (kGemmConvOps.count(l)) gemm_sites_.push_back({n, what, "nn_layer_in_forward"});
          else add("nn_layer_in_forward", n, what + " called through " + text(field(n, "function")));
        }
        return true;
      }
      if ((t == "identifier" || t == "attribute") && nn_holders_.count(text(n)) && !is_called(n)) {
        TSNode p = ts_node_parent(n);
        if (valid(p) && (type(p) == "argument_list" || type(p) == "list" || type(p) == "tuple" || type(p) == "set" ||
                         type(p) == "pair" || (type(p) == "keyword_argument" && ts_node_eq(field(p, "value"), n))))
          add("nn_layer_in_forward", n, text(n) + " passed as a value");
        return true;
      }
      if (t == "attribute" && !is_called(n) && !parent_is(n, "attribute")) {
        // y.clamp kept as a bound method (m = y.clamp; m(min=0))
        std::string attr = text(field(n, "attribute"));
        TSNode obj = field(n, "object");
        std::string o = text(obj);
        std::string name = resolve(n);
        bool torch_rooted = !name.empty() && name[0] != '.' && aliases_.count(o.substr(0, o.find('.')));
        if ((is_compute_op(attr) || kComputeDunders.count(attr)) && !torch_rooted && o != "self" && o != "cls" &&
            !receiver_harmless(obj) && !exported_.count(attr))
          add("torch_compute_as_value", n, "bound method ." + attr + " used as a value");
      }
      return true;
    });
  }
}

}  // namespace kgym::policy::detail
