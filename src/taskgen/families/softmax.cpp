// Family `softmax`: softmax, log-softmax and softmin over one dim.
// The softmax dim is at most 8191 long and the logits are N(0, s^2) with s in [1, 3], so the
// largest probability of each row stays well above the float32 tolerance (zeros do not pass).
#include <map>

#include "../family_kit.hpp"

using namespace kgym::taskgen;

namespace {

struct Soft {
  const char* reference;
  const char* solution;  // lines, 8-space indented, ending in return
  const char* todo;
};

const std::map<std::string, Soft>& softs() {
  static const std::map<std::string, Soft> m = {
      {"softmax", {"torch.softmax(x, dim=self.dim)",
                   "        e = torch.exp(x - x.amax(dim=self.dim, keepdim=True))\n"
                   "        return e / e.sum(dim=self.dim, keepdim=True)\n",
                   "result = exp(x - max) / sum(exp(x - max)) over the row"}},
      {"log_softmax", {"torch.log_softmax(x, dim=self.dim)",
                       "        shifted = x - x.amax(dim=self.dim, keepdim=True)\n"
                       "        return shifted - torch.log(torch.exp(shifted).sum(dim=self.dim, keepdim=True))\n",
                       "result = x - max - log(sum(exp(x - max))) over the row"}},
      {"softmin", {"F.softmin(x, dim=self.dim)",
                   "        e = torch.exp(x.amin(dim=self.dim, keepdim=True) - x)\n"
                   "        return e / e.sum(dim=self.dim, keepdim=True)\n",
                   "result = softmax of -x over the row"}},
  };
  return m;
}

Design design(DesignRequest& r) {
  namespace kit = kgym::taskgen::kit;
  const Soft& s = softs().at(r.op);
  Design d;
  const int rank = static_cast<int>(r.rng.uniform_int(2, 3));
  auto [lo, hi] = element_range(to_string(r.variant), 65);
  const std::int64_t total = r.rng.log_uniform_int(lo, hi);
  const std::int64_t n = r.rng.odd_dim(std::min<std::int64_t>(9, total), std::clamp<std::int64_t>(total / 4, 9, 8191));
  auto rest = draw_shape(r.rng, std::max<std::int64_t>(1, total / n), rank - 1, 1, std::max<std::int64_t>(1, hi / n));
  std::vector<std::int64_t> dims = rest;
  const int dim = r.rng.chance(0.7) ? rank - 1 : static_cast<int>(r.rng.uniform_int(0, rank - 2));
  dims.insert(dims.begin() + dim, n);
  auto x = kit::named_shape(d, kit::standard_names(rank), dims);
  const double scale = 1.0 + 2.0 * r.rng.uniform();
  d.summary = r.op + " over dim " + std::to_string(dim) + " of a " + r.dtype + " tensor (" + x.args() + ")";
  d.init_params = "dim";
  d.init_body = "        self.dim = dim\n";
  d.solution_init_body = d.init_body;
  d.forward_params = "x";
  d.forward_body = std::string("        return ") + s.reference + "\n";
  d.solution_forward_body = s.solution;
  d.inputs_body = "    x = " + kit::randn(x, r.dtype) + " * " + kit::py_float(scale) + "\n    return [x]";
  d.init_inputs = "[" + std::to_string(dim) + "]";
  d.inputs = {{"x", x.dims, r.dtype}};
  d.output = {"out", x.dims, r.dtype};
  d.cost.flops = 5.0 * static_cast<double>(x.numel());
  if (r.variant == Variant::scaffold)
    d.scaffold = kit::row_scaffold(d, "self.dim", false, r.op == "softmin" ? "float('inf')" : "-float('inf')", {}, s.todo);
  return d;
}

}  // namespace

KGYM_TASKGEN_FAMILY(softmax) {
  Family f;
  f.name = "softmax";
  f.description = "softmax, log-softmax and softmin over one dim";
  f.level = 1;
  for (const auto& [name, s] : softs()) f.ops.push_back(name);
  f.transfer_ops = {"softmin"};
  f.variants = {Variant::full, Variant::small, Variant::scaffold};
  f.dtypes = {"float32", "float16", "bfloat16"};
  f.design = design;
  return f;
}
