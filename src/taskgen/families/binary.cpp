// Family `binary`: elementwise binary ops with broadcasting (y has some dims of x set to 1).
// Divisors are drawn away from zero (|y| in [0.5, 1.5)).
#include <map>

#include "../family_kit.hpp"

using namespace kgym::taskgen;

namespace {

struct Bin {
  const char* reference;
  const char* solution;
  double flops;
  const char* todo;
};

const std::map<std::string, Bin>& bins() {
  static const std::map<std::string, Bin> m = {
      {"add", {"torch.add(x, y)", "x - (-y)", 1, "result = x + y"}},
      {"sub", {"torch.sub(x, y)", "x + (-y)", 1, "result = x - y"}},
      {"mul", {"torch.mul(x, y)", "x * y", 1, "result = x * y"}},
      {"div", {"torch.div(x, y)", "x * (1.0 / y)", 1, "result = x / y"}},
      {"maximum", {"torch.maximum(x, y)", "torch.where(x >= y, x, y.expand_as(x))", 1, "result = max(x, y)"}},
      {"minimum", {"torch.minimum(x, y)", "torch.where(x <= y, x, y.expand_as(x))", 1, "result = min(x, y)"}},
      {"squared_difference", {"torch.pow(x - y, 2)", "(x - y) * (x - y)", 2, "result = (x - y) ** 2"}},
  };
  return m;
}

Design design(DesignRequest& r) {
  namespace kit = kgym::taskgen::kit;
  const Bin& b = bins().at(r.op);
  Design d;
  const int rank = static_cast<int>(r.rng.uniform_int(2, 4));
  auto dims = kit::variant_shape(r, rank, 2, 65);
  auto x = kit::named_shape(d, kit::standard_names(rank), dims);
  // y broadcasts: each dim kept or set to 1 (at least one of each, so it really broadcasts).
  std::vector<std::string> y_names;
  std::vector<std::int64_t> y_dims;
  const int ones = static_cast<int>(r.rng.uniform_int(1, rank - 1));
  std::vector<int> order(rank);
  for (int i = 0; i < rank; ++i) order[i] = i;
  for (int i = rank - 1; i > 0; --i) std::swap(order[i], order[r.rng.uniform_int(0, i)]);
  std::vector<bool> is_one(rank, false);
  for (int i = 0; i < ones; ++i) is_one[order[i]] = true;
  for (int i = 0; i < rank; ++i) {
    y_names.push_back(is_one[i] ? "1" : x.names[i]);
    y_dims.push_back(is_one[i] ? 1 : x.dims[i]);
  }
  const std::string y_args = kit::join(y_names);
  const std::string dt = kit::torch_dtype(r.dtype);
  std::string y_expr = "torch.randn(" + y_args + ", dtype=" + dt + ")";
  if (r.op == "div")
    y_expr = "(torch.rand(" + y_args + ", dtype=" + dt + ") + 0.5) * torch.where(torch.rand(" + y_args +
             ") < 0.5, -1.0, 1.0).to(" + dt + ")";
  d.summary = r.op + " of x (" + x.args() + ") and y (" + y_args + "), broadcast, " + r.dtype;
  d.forward_params = "x, y";
  d.forward_body = std::string("        return ") + b.reference + "\n";
  d.solution_forward_body = std::string("        return ") + b.solution + "\n";
  d.inputs_body = "    x = " + kit::randn(x, r.dtype) + "\n    y = " + y_expr + "\n    return [x, y]";
  d.init_inputs = "[]";
  d.inputs = {{"x", x.dims, r.dtype}, {"y", y_dims, r.dtype}};
  d.output = {"out", x.dims, r.dtype};
  d.cost.flops = b.flops * static_cast<double>(x.numel());
  if (r.variant == Variant::scaffold) d.scaffold = kit::elementwise_scaffold(d, {"x", "y"}, {}, b.todo);
  return d;
}

}  // namespace

KGYM_TASKGEN_FAMILY(binary) {
  Family f;
  f.name = "binary";
  f.description = "elementwise binary ops with broadcasting (add, sub, mul, div, maximum, ...)";
  f.level = 1;
  for (const auto& [name, b] : bins()) f.ops.push_back(name);
  f.transfer_ops = {"minimum", "squared_difference"};
  f.variants = {Variant::full, Variant::small, Variant::scaffold};
  f.dtypes = {"float32", "float16", "bfloat16"};
  f.design = design;
  return f;
}
