// The policy analysis's forward-path matchers: torch compute, library layers and the hybrid GEMM
// allowance on the forward path, custom kernels the forward path calls (and decoys it does not),
// library layers run through containers, elementwise torch arithmetic, KernelBench's backend check.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "analysis.hpp"

namespace kgym::policy::detail {

/// Torch compute, nn layers and the hybrid GEMM allowance on the forward path.
void Analysis::match_forward_compute() {
  match_compute_values();
  collect_forward_call_sites();
  collect_cxx_library_sites();
  apply_hybrid_allowance();
  for (const auto& [node, rule, what] : compute_sites_) add(rule, node, what);
}

/// The `@` operators and the calls in the bodies of the forward path's functions.
void Analysis::collect_forward_call_sites() {
  for (TSNode fnode : reachable_nodes_) {
    std::string cls;
    for (const auto& [key, fn] : defs_)
      if (ts_node_eq(fn.node, fnode)) cls = fn.cls;
    walk(field(fnode, "body"), [&](TSNode n) {
      std::string_view t = type(n);
      if (t == "function_definition" || t == "class_definition") return false;  // own reachability
      if (t == "binary_operator" || t == "augmented_assignment") {
        TSNode op = ts_node_child_by_field_name(n, "operator", 8);
        if (valid(op) && (text(op) == "@" || text(op) == "@=")) {
          gemm_sites_.push_back({n, "@"});
        }
        return true;
      }
      if (t == "call") forward_call_site(n, cls);
      return true;
    });
  }
}

/// One call on the forward path (in a method of `cls`): array-library compute and tensors handed
/// to another library, torch compute ops and functional namespaces, `self.layer(x)` with a
/// torch.nn layer, and Tensor compute methods; GEMMs and convolutions go to gemm_sites_ (the
/// hybrid allowance), the rest to compute_sites_.
void Analysis::forward_call_site(TSNode n, const std::string& cls) {
  TSNode fn = field(n, "function");
  if (!valid(fn)) return;
  if (type(fn) != "identifier" && type(fn) != "attribute") return;
  std::string name = resolve(fn);
  std::string attr = name.substr(name.rfind('.') + 1);
  TSNode obj = type(fn) == "attribute" ? field(fn, "object") : TSNode{};
  bool torch_ns = name.rfind("torch.", 0) == 0;
  // numpy/cupy compute on the forward path, and a tensor's crossing into another library
  // (DLPack, from_numpy, .numpy()): under strict np.maximum on a DLPack view of the
  // input passed as the candidate's kernel (red team rt24; the op trace sees no ATen op).
  const bool array_lib = (name.rfind("numpy.", 0) == 0 || name.rfind("cupy.", 0) == 0) &&
                         name.rfind("cupy.cuda.", 0) != 0;  // streams, devices, memory
  if ((array_lib && !kNumpyNonCompute.count(attr)) || attr == "from_dlpack" || attr == "to_dlpack" ||
      attr == "__dlpack__" || attr == "from_numpy" || name.rfind("torch.utils.dlpack", 0) == 0 ||
      (attr == "numpy" && type(fn) == "attribute" && !array_lib)) {
    compute_sites_.push_back({n, "torch_compute_in_forward",
                              name + " (array-library compute or a tensor handed to another library; "
                                     "use math for host arithmetic)"});
    return;
  }
  // operator.matmul(a, b) is `a @ b` (red team rt33: it passed strict while `@` did not)
  if (name == "operator.matmul" || name == "operator.imatmul" || name == "operator.__matmul__" ||
      name == "operator.__imatmul__") {
    gemm_sites_.push_back({n, name});
    return;
  }
  if (type(fn) == "identifier" && !torch_ns) return;
  // torch.ops.<ns>.<op>: the candidate's own operator, whatever its name (rt25: an own op
  // named relu was rejected), or private_torch_internals (match_names)
  if (name.rfind("torch.ops.", 0) == 0) return;
  if (torch_ns) {
    bool functional = name.rfind("torch.nn.functional.", 0) == 0 || name.rfind("torch.linalg.", 0) == 0 ||
                      name.rfind("torch.fft.", 0) == 0 || name.rfind("torch.special.", 0) == 0;
    if (name.rfind("torch.nn.functional.pad", 0) == 0) functional = false;
    if (functional || (is_compute_op(attr) && name.find(".cuda.") == std::string::npos)) {
      if (kGemmConvOps.count(attr)) gemm_sites_.push_back({n, name});
      else compute_sites_.push_back({n, "torch_compute_in_forward", name});
    }
    return;
  }
  // self.layer(x) with layer = nn.<Layer>(...)
  if (valid(obj) && text(obj) == "self" && !functions_.count(cls + "." + attr)) {
    auto it = assigns_.find("self." + attr);
    if (it != assigns_.end())
      for (TSNode v : it->second)
        if (type(v) == "call") {
          std::string callee = resolve(field(v, "function"));
          if (callee.rfind("torch.nn.", 0) == 0) {
            std::string layer = callee.substr(9);
            if (!kNnContainers.count(layer) && layer.find('.') == std::string::npos) {
              if (kGemmConvOps.count(layer)) gemm_sites_.push_back({n, callee});
              else compute_sites_.push_back({n, "nn_layer_in_forward", callee});
            }
          }
        }
    return;
  }
  // tensor methods x.matmul(y), x.sum(), (a+b).relu()
  // (an op of the candidate's own TORCH_LIBRARY namespace may carry any name: rt25)
  if ((is_compute_op(attr) || kComputeDunders.count(attr)) && !receiver_harmless(obj) &&
      !exported_.count(attr) && !own_op_namespace(resolve(obj) + ".")) {
    std::string o = text(obj);
    bool self_method = o == "self" || o == "cls";
    if (!self_method) {
      if (kGemmConvOps.count(attr) || attr == "__matmul__" || attr == "__rmatmul__" || attr == "__imatmul__")
        gemm_sites_.push_back({n, "." + attr});
      else compute_sites_.push_back({n, "torch_compute_in_forward", "." + attr + "()"});
    }
  }
}

/// Hybrid: the first GEMM/conv (in source order) is allowed; strict and the rest reject.
void Analysis::apply_hybrid_allowance() {
  std::stable_sort(gemm_sites_.begin(), gemm_sites_.end(), [](const auto& a, const auto& b) {
    return ts_node_start_byte(a.node) < ts_node_start_byte(b.node);
  });
  // The allowance is one library op: every call site of that op (branches, loops) is covered.
  std::string allowed;
  for (const auto& [node, what, site_rule] : gemm_sites_) {
    std::string rule = !site_rule.empty() ? site_rule
                       : what.rfind("C++ ", 0) == 0 ? "cpp_library_compute"
                       : what.rfind("torch.nn.", 0) == 0 && what.rfind("torch.nn.functional.", 0) != 0
                           ? "nn_layer_in_forward"
                           : "torch_compute_in_forward";
    if (ctx_.profile == Profile::hybrid && (allowed.empty() || allowed == what)) {
      allowed = what;
      add("hybrid_library_call", node, what);
      continue;
    }
    if (rule == "cpp_library_compute") add(rule, node, what.substr(4), what.substr(4));
    else add(rule, node, what);
  }
}

/// forward reaches no custom kernel; kernels defined and never used on the forward path.
void Analysis::match_custom_calls() {
  if (!has_model_new_ || !classes_.count("ModelNew")) return;
  Names used;          // names referenced on the forward path
  bool custom = false;
  for (TSNode fnode : reachable_nodes_) {
    walk(field(fnode, "body"), [&](TSNode n) {
      std::string_view t = type(n);
      if (t == "identifier") used.insert(text(n));
      if (t == "attribute") used.insert(text(field(n, "attribute")));
      if (t == "string") {
        auto s = string_value(n);
        if (exported_.count(s)) used.insert(s);  // getattr(ext, "name")
      }
      if (t != "call") return true;
      TSNode fn = field(n, "function");
      if (!valid(fn)) return true;
      std::string ft = text(fn);
      std::string root = ft.substr(0, ft.rfind('.'));
      std::string attr = type(fn) == "attribute" ? text(field(fn, "attribute")) : ft;
      if (type(fn) == "subscript") {  // kernel[grid](...)
        std::string k = text(field(fn, "value"));
        if (triton_kernels_.count(k) || ext_handles_.count(k)) custom = true;
      } else if (ext_handles_.count(ft) || triton_kernels_.count(ft) || exported_.count(attr) ||
                 (ft.find('.') != std::string::npos && ext_handles_.count(root))) {
        custom = true;
      } else if (type(fn) == "attribute") {
        TSNode obj = field(fn, "object");
        if (type(obj) == "call") {
          std::string f2 = text(field(obj, "function"));
          if (ext_factories_.count(f2) || ext_factories_.count(f2.rfind("self.", 0) == 0 ? f2.substr(5) : f2)) custom = true;
        }
        std::string base = resolve(obj);
        if (own_op_namespace(base)) custom = true;
      }
      return true;
    });
  }
  if (!custom) {
    TSNode at = classes_.at("ModelNew").node;
    if (functions_.count("ModelNew.forward")) at = functions_.at("ModelNew.forward").node;
    add("forward_without_custom_call", at);
  }
  // Decoys: exported functions and Triton kernels never referenced on the forward path.
  for (const auto& k : exported_)
    if (!used.count(k) && !ext_calls_.empty()) add("decoy_kernel", ext_calls_.front(), "exported " + k);
  for (const auto& k : triton_kernels_)
    if (!used.count(k) && functions_.count(k)) add("decoy_kernel", functions_.at(k).node, "@triton.jit " + k);
  // __global__ kernels that nothing launches or exports (counted in the raw tokens).
  for (const CxxUnit& u : cxx_) {
    std::map<std::string, int> count;
    for (size_t i = 0; i < u.raw_count; ++i)
      if (u.tokens[i].kind == 'i') ++count[u.tokens[i].text];
    for (size_t i = 0; i + 1 < u.raw_count; ++i) {
      if (u.tokens[i].text != "__global__") continue;
      // the kernel's name: the first identifier followed by "(" (skipping __launch_bounds__(...))
      std::string name;
      for (size_t j = i + 1; j + 1 < u.raw_count && u.tokens[j].text != ";" && u.tokens[j].text != "{"; ++j) {
        if (u.tokens[j].text == "__launch_bounds__") {
          int depth = 0;
          for (++j; j < u.raw_count; ++j) {
            if (u.tokens[j].text == "(") ++depth;
            if (u.tokens[j].text == ")" && --depth == 0) break;
          }
          continue;
        }
        if (u.tokens[j].kind == 'i' && u.tokens[j + 1].text == "(") { name = u.tokens[j].text; break; }
      }
      if (name.empty()) continue;
      bool used_elsewhere = false;
      for (const CxxUnit& v : cxx_)
        if (&v != &u)
          for (size_t k = 0; k < v.raw_count; ++k)
            if (v.tokens[k].text == name) used_elsewhere = true;
      if (count[name] <= 1 && !used_elsewhere && !exported_.count(name) && !used.count(name))
        add_cxx("decoy_kernel", u, "__global__ " + name + " is never launched", "__global__ " + name, name);
    }
  }
}

/// KernelBench's backend check: a CUDA kernel (__global__, load_inline/cpp_extension, thread
/// indexing or kernel features) or a Triton kernel (@triton.jit, tl.load/store, program_id ...).
void Analysis::match_kernelbench() {
  if (ctx_.profile != Profile::kernelbench) return;
  bool global = false, thread_features = false;
  for (const CxxUnit& u : cxx_)
    for (size_t i = 0; i < u.tokens.size(); ++i) {
      const auto& w = u.tokens[i].text;
      if (w == "__global__") global = true;
      if (((w == "threadIdx" || w == "blockIdx" || w == "blockDim" || w == "gridDim") && i + 1 < u.tokens.size() &&
           u.tokens[i + 1].text == ".") ||
          w == "__syncthreads" || w == "__shared__" || w == "__device__" || w == "atomicAdd" || w == "atomicMax" ||
          w == "atomicMin")
        thread_features = true;
    }
  bool compile = false;
  for (const auto& [alias, full] : aliases_)
    if (full.find("cpp_extension") != std::string::npos || full.find("load_inline") != std::string::npos) compile = true;
  if (!ext_calls_.empty()) compile = true;
  bool cuda_ok = global && compile && thread_features;
  bool tl_mem = false, tl_kernel = false;
  walk(syntax_.root(), [&](TSNode n) {
    if (type(n) == "attribute") {
      std::string r = resolve(n);
      if (r == "triton.language.load" || r == "triton.language.store") tl_mem = true;
      if (r == "triton.language.program_id" || r == "triton.language.num_programs" || r == "triton.language.constexpr" ||
          r == "triton.language.arange" || r == "triton.language.cdiv")
        tl_kernel = true;
    }
    return true;
  });
  bool triton_ok = !triton_kernels_.empty() && tl_mem && tl_kernel;
  if (!cuda_ok && !triton_ok) {
    std::string why = !global ? "no __global__ kernel" : !compile ? "no load_inline/cpp_extension" : "no thread indexing";
    add_at("kb_backend_impl", 0, 0, why, "");
  }
  // torch computation ops and torch.nn compute layers anywhere in the code (warnings).
  walk(syntax_.root(), [&](TSNode n) {
    std::string_view t = type(n);
    if (t == "import_statement" || t == "import_from_statement") return false;
    if (t != "attribute") return true;
    TSNode p = ts_node_parent(n);
    if (valid(p) && type(p) == "attribute" && ts_node_eq(field(p, "object"), n)) return true;
    std::string r = resolve(n);
    if (r.rfind("torch.nn.functional.", 0) == 0 ||
        (r.rfind("torch.", 0) == 0 && std::count(r.begin(), r.end(), '.') == 1 && kKernelBenchTorchOps.count(r.substr(6))))
      add("kb_torch_compute_op", n, r);
    if (r.rfind("torch.nn.", 0) == 0 && r.rfind("torch.nn.functional", 0) != 0) {
      std::string first = r.substr(9, r.find('.', 9) == std::string::npos ? std::string::npos : r.find('.', 9) - 9);
      if (!kNnContainers.count(first) || first == "Buffer" || first == "Identity") add("kb_nn_compute_layer", n, r);
    }
    return true;
  });
}

/// Library layers run through containers (`for layer in self.layers: x = layer(x)`,
/// `self.blocks[i](x)`), and elementwise torch arithmetic on forward's tensor arguments.
void Analysis::match_module_containers_and_elementwise() {
  // self.X whose value builds library layers only (no class of the candidate in it, one level
  // of names and helper functions followed).
  auto library_container = [&](const std::string& attr) {
    auto it = assigns_.find("self." + attr);
    if (it == assigns_.end()) return false;
    bool has_layer = false, has_own_class = false;
    std::function<void(TSNode, int)> scan = [&](TSNode v, int depth) {
      walk(v, [&](TSNode x) {
        if (type(x) == "call") {
          std::string callee = resolve(field(x, "function"));
          std::string raw = text(field(x, "function"));
          if (callee.rfind("torch.nn.", 0) == 0 && callee.find("functional") == std::string::npos) {
            std::string layer = callee.substr(9);
            if (!kNnContainers.count(layer) && layer != "Sequential" && layer != "ModuleList" && layer != "ModuleDict")
              has_layer = true;
          }
          if (classes_.count(raw)) has_own_class = true;
          std::string fn = raw.rfind("self.", 0) == 0 ? raw.substr(5) : raw;
          for (const auto& [key, f] : functions_)
            if (depth < 2 && (key == fn || (key.size() > fn.size() + 1 &&
                                            key.compare(key.size() - fn.size() - 1, std::string::npos, "." + fn) == 0)))
              scan(field(f.node, "body"), depth + 1);
        }
        if (type(x) == "identifier" && depth < 2) {
          auto a = assigns_.find(text(x));
          if (a != assigns_.end())
            for (TSNode y : a->second)
              if (!ts_node_eq(y, v)) scan(y, depth + 1);
          if (classes_.count(text(x))) has_own_class = true;
        }
        return true;
      });
    };
    for (TSNode v : it->second) scan(v, 0);
    return has_layer && !has_own_class;
  };
  std::set<std::string> forward_params;
  if (functions_.count("ModelNew.forward"))
    for (TSNode prm : named_children(field(functions_.at("ModelNew.forward").node, "parameters"))) {
      TSNode id = type(prm) == "identifier" ? prm : field(prm, "name");
      if (valid(id) && type(id) == "identifier" && text(id) != "self") forward_params.insert(text(id));
    }
  // A @triton.jit body is device code: its arithmetic is the kernel's own, even where a variable
  // there shares a name with one of forward's tensor arguments (no false warning for `x - m`).
  auto triton_decorated = [&](TSNode fnode) {
    TSNode parent = ts_node_parent(fnode);
    if (type(fnode) != "function_definition" || !valid(parent) || type(parent) != "decorated_definition") return false;
    for (TSNode d : named_children(parent))
      if (type(d) == "decorator" && decorator_name(d).rfind("triton.", 0) == 0) return true;
    return false;
  };
  for (TSNode fnode : reachable_nodes_) {
    if (triton_decorated(fnode)) continue;
    std::map<std::string, std::string> loop_elements;  // loop variable -> container attribute
    walk(field(fnode, "body"), [&](TSNode n) {
      std::string_view t = type(n);
      if (t == "function_definition" || t == "class_definition") return false;
      if (t == "for_statement") {
        TSNode left = field(n, "left"), right = field(n, "right");
        std::string r = valid(right) ? text(right) : "";
        size_t pos = r.find("self.");
        if (valid(left) && pos != std::string::npos) {
          std::string attr = r.substr(pos + 5);
          attr = attr.substr(0, attr.find_first_of(".)[, "));
          // `for layer in self.layers` or `for i, layer in enumerate(self.layers)`
          std::vector<TSNode> names = type(left) == "identifier" ? std::vector<TSNode>{left} : named_children(left);
          if (!names.empty()) loop_elements[text(names.back())] = attr;
        }
        return true;
      }
      if (t == "call") {
        TSNode fn = field(n, "function");
        std::string attr;
        if (type(fn) == "identifier" && loop_elements.count(text(fn))) attr = loop_elements[text(fn)];
        if (type(fn) == "subscript") {
          std::string v = text(field(fn, "value"));
          if (v.rfind("self.", 0) == 0 && v.find('.', 5) == std::string::npos) attr = v.substr(5);
        }
        if (!attr.empty() && library_container(attr)) add("nn_layer_in_forward", n, "layers of self." + attr);
        return true;
      }
      if (t == "binary_operator" || t == "augmented_assignment") {
        TSNode op = ts_node_child_by_field_name(n, "operator", 8);
        std::string o = valid(op) ? text(op) : "";
        if (o == "@" || o == "@=" || o.empty()) return true;
        for (const char* side : {"left", "right"}) {
          TSNode x = field(n, side);
          if (!valid(x)) continue;
          // a tensor argument of forward, or a tensor method on one (x.unsqueeze(1))
          static const Names kScalarMethods = {"size", "dim", "numel", "stride", "item", "tolist", "data_ptr",
                                               "element_size", "nelement", "is_contiguous", "get_device",
                                               "storage_offset", "ndimension", "__len__"};
          TSNode base = x;
          bool scalar = false;
          while (valid(base) && type(base) == "call" && type(field(base, "function")) == "attribute") {
            if (kScalarMethods.count(text(field(field(base, "function"), "attribute")))) scalar = true;
            base = field(field(base, "function"), "object");
          }
          if (scalar) continue;
          if (valid(base) && type(base) == "identifier" && forward_params.count(text(base)) &&
              (type(x) == "identifier" || type(x) == "call")) {
            add("torch_elementwise_in_forward", n, "'" + o + "' on tensor " + text(base));
            break;
          }
        }
        return true;
      }
      return true;
    });
  }
}

}  // namespace kgym::policy::detail
