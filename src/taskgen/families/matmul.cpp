// Family `matmul`: plain, batched and transposed-operand matrix products (KernelBench level 1,
// problems 1-18). M, N, K are odd, non-power-of-two sizes; the largest operand or result has
// [1M, 32M] elements (small variant: at most 4096).
#include <map>

#include "../family_kit.hpp"

using namespace kgym::taskgen;

namespace {

struct Mm {
  const char* reference;  // of a, b
  const char* solution;
  bool batched, a_t, b_t;
};

const std::map<std::string, Mm>& mms() {
  static const std::map<std::string, Mm> m = {
      {"matmul", {"torch.matmul(a, b)", "torch.einsum(\"mk,kn->mn\", a, b)", false, false, false}},
      {"bmm", {"torch.bmm(a, b)", "torch.einsum(\"bmk,bkn->bmn\", a, b)", true, false, false}},
      {"matmul_tn", {"torch.matmul(a.T, b)", "torch.einsum(\"km,kn->mn\", a, b)", false, true, false}},
      {"matmul_nt", {"torch.matmul(a, b.T)", "torch.einsum(\"mk,nk->mn\", a, b)", false, false, true}},
      {"matmul_tt", {"torch.matmul(a.T, b.T)", "torch.einsum(\"km,nk->mn\", a, b)", false, true, true}},
  };
  return m;
}

Design design(DesignRequest& r) {
  namespace kit = kgym::taskgen::kit;
  const Mm& mm = mms().at(r.op);
  Design d;
  auto [lo, hi] = element_range(to_string(r.variant), 64);
  const std::int64_t batch = mm.batched ? r.rng.odd_dim(2, kit::is_small(r) ? 4 : 24) : 1;
  const std::int64_t per = std::max<std::int64_t>(lo, r.rng.log_uniform_int(lo, hi) / batch);
  auto mn = draw_shape(r.rng, per, 2, kit::is_small(r) ? 3 : 33, hi / batch);
  const std::int64_t k_hi = std::max<std::int64_t>(4, std::min<std::int64_t>(hi / batch / std::max(mn[0], mn[1]), kit::is_small(r) ? 96 : 8191));
  const std::int64_t k = r.rng.odd_dim(std::min<std::int64_t>(3, k_hi), k_hi);
  if (mm.batched) kit::constant(d, "batch_size", batch);
  kit::constant(d, "M", mn[0]);
  kit::constant(d, "K", k);
  kit::constant(d, "N", mn[1]);
  const std::string pre = mm.batched ? "batch_size, " : "";
  const std::string a_args = pre + (mm.a_t ? "K, M" : "M, K"), b_args = pre + (mm.b_t ? "N, K" : "K, N");
  std::vector<std::int64_t> a_dims = mm.a_t ? std::vector<std::int64_t>{k, mn[0]} : std::vector<std::int64_t>{mn[0], k};
  std::vector<std::int64_t> b_dims = mm.b_t ? std::vector<std::int64_t>{mn[1], k} : std::vector<std::int64_t>{k, mn[1]};
  std::vector<std::int64_t> o_dims = {mn[0], mn[1]};
  if (mm.batched) {
    a_dims.insert(a_dims.begin(), batch);
    b_dims.insert(b_dims.begin(), batch);
    o_dims.insert(o_dims.begin(), batch);
  }
  const std::string dt = kit::torch_dtype(r.dtype);
  d.summary = r.op + ": a (" + a_args + ") and b (" + b_args + "), " + r.dtype;
  d.forward_params = "a, b";
  d.forward_body = std::string("        return ") + mm.reference + "\n";
  d.solution_forward_body = std::string("        return ") + mm.solution + "\n";
  d.inputs_body = "    a = torch.randn(" + a_args + ", dtype=" + dt + ")\n    b = torch.randn(" + b_args + ", dtype=" + dt +
                  ")\n    return [a, b]";
  d.init_inputs = "[]";
  d.inputs = {{"a", a_dims, r.dtype}, {"b", b_dims, r.dtype}};
  d.output = {"out", o_dims, r.dtype};
  d.cost.flops = 2.0 * static_cast<double>(batch) * static_cast<double>(mn[0]) * static_cast<double>(mn[1]) * static_cast<double>(k);
  return d;
}

}  // namespace

KGYM_TASKGEN_FAMILY(matmul) {
  Family f;
  f.name = "matmul";
  f.description = "matrix products: plain, batched, transposed operands";
  f.level = 1;
  for (const auto& [name, m] : mms()) f.ops.push_back(name);
  f.transfer_ops = {"matmul_tt"};
  f.variants = {Variant::full, Variant::small};
  f.dtypes = {"float32", "float16", "bfloat16"};
  f.design = design;
  return f;
}
