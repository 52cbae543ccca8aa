// Family `activation`: elementwise activations (KernelBench level 1, problems 19-32).
// Inputs are N(0, s^2) with s in [1.5, 4], so both signs and the nonlinear ranges are hit (a
// trivial answer such as the input itself fails on the negative half).
#include <map>

#include "../family_kit.hpp"

using namespace kgym::taskgen;

namespace {

struct Act {
  const char* reference;  // forward expression of x
  const char* solution;   // the same function from its formula
  const char* param;      // name of a scalar __init__ parameter, or ""
  double param_lo, param_hi;
  double flops;           // per element (approximate, for the cost model)
  const char* todo;       // scaffold hint
};

const std::map<std::string, Act>& acts() {
  static const std::map<std::string, Act> m = {
      {"relu", {"torch.relu(x)", "torch.where(x > 0, x, torch.zeros_like(x))", "", 0, 0, 1, "result = max(x, 0)"}},
      {"gelu", {"F.gelu(x)", "0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))", "", 0, 0, 8,
                "result = exact GELU of x (erf form)"}},
      {"silu", {"F.silu(x)", "x / (1.0 + torch.exp(-x))", "", 0, 0, 4, "result = x * sigmoid(x)"}},
      {"sigmoid", {"torch.sigmoid(x)", "1.0 / (1.0 + torch.exp(-x))", "", 0, 0, 4, "result = 1 / (1 + exp(-x))"}},
      {"tanh", {"torch.tanh(x)", "1.0 - 2.0 / (torch.exp(2.0 * x) + 1.0)", "", 0, 0, 5, "result = tanh(x)"}},
      {"leaky_relu", {"F.leaky_relu(x, negative_slope=self.negative_slope)",
                      "torch.where(x >= 0, x, x * self.negative_slope)", "negative_slope", 0.05, 0.3, 2,
                      "result = x if x >= 0 else p0 * x"}},
      {"elu", {"F.elu(x, alpha=self.alpha)", "torch.where(x > 0, x, self.alpha * (torch.exp(x) - 1.0))", "alpha",
               0.5, 1.5, 4, "result = x if x > 0 else p0 * (exp(x) - 1)"}},
      {"softplus", {"F.softplus(x)", "torch.where(x > 20.0, x, torch.log(1.0 + torch.exp(x)))", "", 0, 0, 4,
                    "result = log(1 + exp(x)) (x above 20: x)"}},
      {"hardswish", {"F.hardswish(x)", "x * torch.clamp(x + 3.0, 0.0, 6.0) / 6.0", "", 0, 0, 4,
                     "result = x * clamp(x + 3, 0, 6) / 6"}},
      {"mish", {"F.mish(x)", "x * torch.tanh(torch.where(x > 20.0, x, torch.log(1.0 + torch.exp(x))))", "", 0, 0, 9,
                "result = x * tanh(softplus(x))"}},
  };
  return m;
}

Design design(DesignRequest& r) {
  namespace kit = kgym::taskgen::kit;
  const Act& a = acts().at(r.op);
  Design d;
  const int rank = static_cast<int>(r.rng.uniform_int(1, 4));
  auto shape = kit::named_shape(d, kit::standard_names(rank), kit::variant_shape(r, rank, 1, 33));
  const double scale = 1.5 + 2.5 * r.rng.uniform();
  std::string init_inputs = "[]";
  if (*a.param) {
    const double p = a.param_lo + (a.param_hi - a.param_lo) * r.rng.uniform();
    d.init_params = a.param;
    d.init_body = std::string("        self.") + a.param + " = " + a.param + "\n";
    d.solution_init_body = d.init_body;
    init_inputs = "[" + kit::py_float(p) + "]";
  }
  d.summary = r.op + " of a " + r.dtype + " tensor of shape (" + shape.args() + ")";
  d.forward_params = "x";
  d.forward_body = std::string("        return ") + a.reference + "\n";
  d.solution_forward_body = std::string("        return ") + a.solution + "\n";
  d.inputs_body = "    x = " + kit::randn(shape, r.dtype) + " * " + kit::py_float(scale) + "\n    return [x]";
  d.init_inputs = init_inputs;
  d.inputs = {{"x", shape.dims, r.dtype}};
  d.output = {"out", shape.dims, r.dtype};
  d.cost.flops = a.flops * static_cast<double>(shape.numel());
  if (r.variant == Variant::scaffold)
    d.scaffold = kit::elementwise_scaffold(d, {"x"}, *a.param ? std::vector<std::string>{std::string("self.") + a.param}
                                                              : std::vector<std::string>{},
                                           a.todo);
  return d;
}

}  // namespace

KGYM_TASKGEN_FAMILY(activation) {
  Family f;
  f.name = "activation";
  f.description = "elementwise activations (ReLU, GELU, SiLU, sigmoid, tanh, ...)";
  f.level = 1;
  for (const auto& [name, a] : acts()) f.ops.push_back(name);
  f.transfer_ops = {"hardswish", "mish"};
  f.variants = {Variant::full, Variant::small, Variant::scaffold};
  f.dtypes = {"float32", "float16", "bfloat16"};
  f.design = design;
  return f;
}
