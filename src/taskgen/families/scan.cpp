// Family `scan`: prefix scans over one dim (cumsum, reverse cumsum, cumprod, logcumsumexp,
// cummax). Value distributions keep results well inside float32 tolerance: cumsum inputs are
// U(0.1, 1.1) (no cancellation near zero), cumprod inputs U(0.9, 1.1) over at most 63 steps
// (products neither vanish nor explode, even after the gym's 3x value transform).
#include <map>

#include "../family_kit.hpp"

using namespace kgym::taskgen;

namespace {

struct Scan {
  const char* reference;  // of x and self.dim
  const char* solution;   // lines (8-space), x moved so the scan dim is last as `xm`, result in `out`
  const char* inputs;     // "randn" | "rand01" | "near_one"
  std::int64_t max_len;
  const char* todo;
};

const std::map<std::string, Scan>& scans() {
  static const std::map<std::string, Scan> m = {
      {"cumsum", {"torch.cumsum(x, dim=self.dim)",
                  "        n = xm.shape[-1]\n"
                  "        out = xm @ torch.triu(torch.ones(n, n, dtype=x.dtype, device=x.device))\n",
                  "rand01", 8191, "result = inclusive prefix sum of the row (tl.cumsum)"}},
      {"cumsum_reverse", {"torch.flip(torch.cumsum(torch.flip(x, [self.dim]), dim=self.dim), [self.dim])",
                          "        n = xm.shape[-1]\n"
                          "        out = xm @ torch.tril(torch.ones(n, n, dtype=x.dtype, device=x.device))\n",
                          "rand01", 8191, "result = suffix sum of the row"}},
      {"cumprod", {"torch.cumprod(x, dim=self.dim)",
                   "        out = xm.clone()\n"
                   "        for i in range(1, xm.shape[-1]):\n"
                   "            out[..., i] = out[..., i - 1] * xm[..., i]\n",
                   "near_one", 63, "result = inclusive prefix product of the row"}},
      {"logcumsumexp", {"torch.logcumsumexp(x, dim=self.dim)",
                        "        m = xm.amax(dim=-1, keepdim=True)\n"
                        "        n = xm.shape[-1]\n"
                        "        out = torch.log(torch.exp(xm - m) @ torch.triu(torch.ones(n, n, dtype=x.dtype, device=x.device))) + m\n",
                        "randn", 2047, "result = log of the prefix sum of exp(x)"}},
      {"cummax", {"torch.cummax(x, dim=self.dim).values",
                  "        out = xm.clone()\n"
                  "        for i in range(1, xm.shape[-1]):\n"
                  "            out[..., i] = torch.maximum(out[..., i - 1], xm[..., i])\n",
                  "randn", 8191, "result = running maximum of the row"}},
  };
  return m;
}

Design design(DesignRequest& r) {
  namespace kit = kgym::taskgen::kit;
  const Scan& s = scans().at(r.op);
  Design d;
  const int rank = static_cast<int>(r.rng.uniform_int(2, 3));
  auto [lo, hi] = element_range(to_string(r.variant), 65);
  const std::int64_t total = r.rng.log_uniform_int(lo, hi);
  const std::int64_t len_hi = std::clamp<std::int64_t>(total / 2, 9, std::min<std::int64_t>(kit::is_small(r) ? 255 : 8191, s.max_len));
  const std::int64_t n = r.rng.odd_dim(std::min<std::int64_t>(9, len_hi), len_hi);
  auto dims = draw_shape(r.rng, std::max<std::int64_t>(1, total / n), rank - 1, 1, std::max<std::int64_t>(1, hi / n));
  const int dim = r.rng.chance(0.6) ? rank - 1 : static_cast<int>(r.rng.uniform_int(0, rank - 2));
  dims.insert(dims.begin() + dim, n);
  auto x = kit::named_shape(d, kit::standard_names(rank), dims);
  const std::string dt = kit::torch_dtype(r.dtype);
  std::string in = kit::randn(x, r.dtype);
  if (std::string(s.inputs) == "rand01") in = kit::rand(x, r.dtype) + " + 0.1";
  if (std::string(s.inputs) == "near_one") in = kit::rand(x, r.dtype) + " * 0.2 + 0.9";
  d.summary = r.op + " over dim " + std::to_string(dim) + " of a " + r.dtype + " tensor (" + x.args() + ")";
  d.init_params = "dim";
  d.init_body = "        self.dim = dim\n";
  d.solution_init_body = d.init_body;
  d.forward_params = "x";
  d.forward_body = std::string("        return ") + s.reference + "\n";
  d.solution_forward_body = std::string("        xm = x.movedim(self.dim, -1)\n") + s.solution +
                            "        return out.movedim(-1, self.dim).contiguous()\n";
  d.inputs_body = "    x = " + in + "\n    return [x]";
  d.init_inputs = "[" + std::to_string(dim) + "]";
  d.inputs = {{"x", x.dims, r.dtype}};
  d.output = {"out", x.dims, r.dtype};
  d.cost.flops = 2.0 * static_cast<double>(x.numel());
  if (r.variant == Variant::scaffold) d.scaffold = kit::row_scaffold(d, "self.dim", false, "0.0", {}, s.todo);
  return d;
}

}  // namespace

KGYM_TASKGEN_FAMILY(scan) {
  Family f;
  f.name = "scan";
  f.description = "prefix scans over one dim (cumsum, reverse cumsum, cumprod, logcumsumexp, cummax)";
  f.level = 1;
  for (const auto& [name, s] : scans()) f.ops.push_back(name);
  f.transfer_ops = {"logcumsumexp", "cummax"};
  f.variants = {Variant::full, Variant::small, Variant::scaffold};
  f.dtypes = {"float32"};
  f.design = design;
  return f;
}
