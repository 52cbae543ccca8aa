// Family `reduction`: sum, mean, max, min, argmax, argmin over one dim.
// Inputs are N(0,1) plus a per-output offset N(0, 2^2) that is constant along the reduced dim, so
// outputs differ from one another (the mean of the input everywhere is wrong) and are not near 0.
#include <map>

#include "../family_kit.hpp"

using namespace kgym::taskgen;

namespace {

struct Red {
  const char* reference;  // of x and self.dim
  const char* solution;
  bool index;             // output int64
  const char* todo;
};

const std::map<std::string, Red>& reds() {
  static const std::map<std::string, Red> m = {
      {"sum", {"torch.sum(x, dim=self.dim)",
               "x.movedim(self.dim, -1) @ torch.ones(x.shape[self.dim], dtype=x.dtype, device=x.device)", false,
               "result = sum of the row"}},
      {"mean", {"torch.mean(x, dim=self.dim)",
                "(x.movedim(self.dim, -1) @ torch.ones(x.shape[self.dim], dtype=x.dtype, device=x.device)) / x.shape[self.dim]",
                false, "result = mean of the row"}},
      {"max", {"torch.amax(x, dim=self.dim)", "torch.sort(x.movedim(self.dim, -1), dim=-1).values[..., -1]", false,
               "result = max of the row (masked lanes load -inf)"}},
      {"min", {"torch.min(x, dim=self.dim).values", "-torch.sort(-x.movedim(self.dim, -1), dim=-1).values[..., -1]",
               false, "result = min of the row"}},
      {"argmax", {"torch.argmax(x, dim=self.dim)", "torch.sort(x.movedim(self.dim, -1), dim=-1).indices[..., -1]", true,
                  "result = index of the row's max"}},
      {"argmin", {"torch.argmin(x, dim=self.dim)", "torch.sort(x.movedim(self.dim, -1), dim=-1).indices[..., 0]", true,
                  "result = index of the row's min"}},
  };
  return m;
}

Design design(DesignRequest& r) {
  namespace kit = kgym::taskgen::kit;
  const Red& red = reds().at(r.op);
  Design d;
  const int rank = static_cast<int>(r.rng.uniform_int(2, 4));
  auto x = kit::named_shape(d, kit::standard_names(rank), kit::variant_shape(r, rank, 3, 65));
  const int dim = static_cast<int>(r.rng.uniform_int(0, rank - 1));
  std::vector<std::string> off = x.names;
  off[dim] = "1";
  std::vector<std::int64_t> out_dims;
  for (int i = 0; i < rank; ++i)
    if (i != dim) out_dims.push_back(x.dims[i]);
  d.summary = r.op + " over dim " + std::to_string(dim) + " of a " + r.dtype + " tensor (" + x.args() + ")";
  d.init_params = "dim";
  d.init_body = "        self.dim = dim\n";
  d.solution_init_body = d.init_body;
  d.forward_params = "x";
  d.forward_body = std::string("        return ") + red.reference + "\n";
  d.solution_forward_body = std::string("        return ") + red.solution + "\n";
  d.inputs_body = "    x = " + kit::randn(x, r.dtype) + " + 2.0 * torch.randn(" + kit::join(off) +
                  ", dtype=" + kit::torch_dtype(r.dtype) + ")\n    return [x]";
  d.init_inputs = "[" + std::to_string(dim) + "]";
  d.inputs = {{"x", x.dims, r.dtype}};
  d.output = {"out", out_dims, red.index ? "int64" : r.dtype};
  d.cost.flops = static_cast<double>(x.numel());
  if (r.variant == Variant::scaffold)
    d.scaffold = kit::row_scaffold(d, "self.dim", true, r.op == "max" || r.op == "argmax" ? "-float('inf')"
                                                        : r.op == "min" || r.op == "argmin" ? "float('inf')" : "0.0",
                                   {}, red.todo);
  return d;
}

}  // namespace

KGYM_TASKGEN_FAMILY(reduction) {
  Family f;
  f.name = "reduction";
  f.description = "reductions over one dim (sum, mean, max, min, argmax, argmin)";
  f.level = 1;
  for (const auto& [name, r] : reds()) f.ops.push_back(name);
  f.transfer_ops = {"argmin"};
  f.variants = {Variant::full, Variant::small, Variant::scaffold};
  f.dtypes = {"float32"};  // float32 only: half-precision ties make argmax ill-defined
  f.design = design;
  return f;
}
