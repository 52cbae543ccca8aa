// Family `data_movement`: transpose, permute, index_select, gather and roll. No arithmetic: the
// cost is bytes only. Every dim is at least 3 long, so no permutation is the identity in memory
// (returning the input reshaped is wrong).
#include "../family_kit.hpp"

using namespace kgym::taskgen;

namespace {

Design design(DesignRequest& r) {
  namespace kit = kgym::taskgen::kit;
  Design d;
  const std::string& op = r.op;
  const std::string dt = kit::torch_dtype(r.dtype);
  d.forward_params = "x";
  d.init_inputs = "[]";
  if (op == "transpose" || op == "permute") {
    const int rank = op == "transpose" ? 2 : static_cast<int>(r.rng.uniform_int(3, 4));
    auto x = kit::named_shape(d, kit::standard_names(rank), kit::variant_shape(r, rank, 3, 65));
    std::vector<int> perm(rank);
    for (int i = 0; i < rank; ++i) perm[i] = i;
    if (rank == 2) {
      std::swap(perm[0], perm[1]);
    } else {
      while (true) {  // a non-identity permutation that moves the last dim (a real reshuffle)
        for (int i = rank - 1; i > 0; --i) std::swap(perm[i], perm[r.rng.uniform_int(0, i)]);
        if (perm[rank - 1] != rank - 1) break;
      }
    }
    std::vector<std::string> ps;
    std::vector<std::int64_t> out;
    for (int p : perm) ps.push_back(std::to_string(p)), out.push_back(x.dims[p]);
    d.summary = op + " " + kit::tuple(ps) + " of x (" + x.args() + "), " + r.dtype;
    d.init_params = "dims";
    d.init_inputs = "[" + kit::tuple(ps) + "]";
    d.init_body = "        self.dims = dims\n";
    d.forward_body = "        return x.permute(*self.dims).contiguous()\n";
    d.solution_forward_body =
        "        out = torch.empty([x.shape[p] for p in self.dims], dtype=x.dtype, device=x.device)\n"
        "        out.copy_(x.permute(*self.dims))\n"
        "        return out\n";
    d.inputs_body = "    x = " + kit::randn(x, r.dtype) + "\n    return [x]";
    d.inputs = {{"x", x.dims, r.dtype}};
    d.output = {"out", out, r.dtype};
  } else if (op == "index_select") {
    auto x = kit::named_shape(d, {"num_rows", "dim"}, kit::variant_shape(r, 2, 3, 65));
    const std::int64_t hi = element_range(to_string(r.variant), 65).second;
    const std::int64_t m = r.rng.odd_dim(3, std::max<std::int64_t>(3, std::min(x.dims[0] * 2, hi / x.dims[1])));
    kit::constant(d, "num_indices", m);
    d.summary = "index_select rows of x (" + x.args() + ") by num_indices random indices, " + r.dtype;
    d.forward_params = "x, idx";
    d.forward_body = "        return torch.index_select(x, 0, idx)\n";
    d.solution_forward_body = "        return x[idx]\n";
    d.inputs_body = "    x = " + kit::randn(x, r.dtype) + "\n    idx = torch.randint(0, num_rows, (num_indices,))\n    return [x, idx]";
    d.inputs = {{"x", x.dims, r.dtype}, {"idx", {m}, "int64"}};
    d.output = {"out", {m, x.dims[1]}, r.dtype};
  } else if (op == "gather") {
    auto x = kit::named_shape(d, {"batch_size", "dim"}, kit::variant_shape(r, 2, 3, 65));
    const std::int64_t k = r.rng.odd_dim(3, std::max<std::int64_t>(3, x.dims[1]));
    kit::constant(d, "num_indices", k);
    d.summary = "gather along dim 1 of x (" + x.args() + ") with (batch_size, num_indices) indices, " + r.dtype;
    d.forward_params = "x, idx";
    d.forward_body = "        return torch.gather(x, 1, idx)\n";
    d.solution_forward_body = "        rows = torch.arange(x.shape[0], device=x.device).unsqueeze(1)\n        return x[rows, idx]\n";
    d.inputs_body = "    x = " + kit::randn(x, r.dtype) + "\n    idx = torch.randint(0, dim, (batch_size, num_indices))\n    return [x, idx]";
    d.inputs = {{"x", x.dims, r.dtype}, {"idx", {x.dims[0], k}, "int64"}};
    d.output = {"out", {x.dims[0], k}, r.dtype};
  } else {  // roll
    const int rank = static_cast<int>(r.rng.uniform_int(2, 3));
    auto x = kit::named_shape(d, kit::standard_names(rank), kit::variant_shape(r, rank, 3, 65));
    const int dim = static_cast<int>(r.rng.uniform_int(0, rank - 1));
    const std::int64_t shift = r.rng.uniform_int(1, x.dims[dim] - 1);
    d.summary = "roll x (" + x.args() + ") by " + std::to_string(shift) + " along dim " + std::to_string(dim) + ", " + r.dtype;
    d.init_params = "shift, dim";
    d.init_inputs = "[" + std::to_string(shift) + ", " + std::to_string(dim) + "]";
    d.init_body = "        self.shift, self.dim = shift, dim\n";
    d.forward_body = "        return torch.roll(x, self.shift, self.dim)\n";
    d.solution_forward_body =
        "        n = x.shape[self.dim]\n"
        "        s = self.shift % n\n"
        "        return torch.cat([x.narrow(self.dim, n - s, s), x.narrow(self.dim, 0, n - s)], dim=self.dim)\n";
    d.inputs_body = "    x = " + kit::randn(x, r.dtype) + "\n    return [x]";
    d.inputs = {{"x", x.dims, r.dtype}};
    d.output = {"out", x.dims, r.dtype};
  }
  d.solution_init_body = d.init_body;
  d.cost.flops = 0;
  return d;
}

}  // namespace

KGYM_TASKGEN_FAMILY(data_movement) {
  Family f;
  f.name = "data_movement";
  f.description = "data movement: transpose, permute, index_select, gather, roll";
  f.level = 1;
  f.ops = {"gather", "index_select", "permute", "roll", "transpose"};
  f.transfer_ops = {"roll"};
  f.variants = {Variant::full, Variant::small};
  f.dtypes = {"float32", "float16", "bfloat16"};
  f.design = design;
  return f;
}
