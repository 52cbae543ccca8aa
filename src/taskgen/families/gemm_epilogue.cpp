// Family `gemm_epilogue`: a linear layer followed by a fused elementwise tail (KernelBench level
// 2). The epilogue variant keeps the GEMM a library call (hybrid policy): the tail is the model's.
#include <map>

#include "../family_kit.hpp"

using namespace kgym::taskgen;

namespace {

struct Epi {
  const char* reference;  // of y (the linear output), self.scale, r (residual)
  const char* solution;
  bool residual, scale;
  double flops;           // per output element
};

const std::map<std::string, Epi>& epis() {
  static const std::map<std::string, Epi> m = {
      {"linear_relu", {"torch.relu(y)", "y.clamp_min(0.0)", false, false, 1}},
      {"linear_gelu", {"F.gelu(y)", "0.5 * y * (1.0 + torch.erf(y / math.sqrt(2.0)))", false, false, 8}},
      {"linear_sigmoid_scale", {"torch.sigmoid(y) * self.scale", "self.scale / (1.0 + torch.exp(-y))", false, true, 5}},
      {"linear_residual_add", {"y + r", "r + y", true, false, 1}},
      {"linear_silu_scale", {"F.silu(y) * self.scale", "self.scale * y / (1.0 + torch.exp(-y))", false, true, 5}},
      {"linear_tanh_residual", {"torch.tanh(y) + r", "r + 1.0 - 2.0 / (torch.exp(2.0 * y) + 1.0)", true, false, 6}},
  };
  return m;
}

Design design(DesignRequest& r) {
  namespace kit = kgym::taskgen::kit;
  const Epi& e = epis().at(r.op);
  Design d;
  auto [lo, hi] = element_range(to_string(r.variant), 64);
  auto bo = draw_shape(r.rng, r.rng.log_uniform_int(lo, hi), 2, kit::is_small(r) ? 3 : 33, hi);
  const std::int64_t k_hi = std::max<std::int64_t>(4, std::min<std::int64_t>(hi / std::max(bo[0], bo[1]), kit::is_small(r) ? 96 : 8191));
  const std::int64_t in = r.rng.odd_dim(std::min<std::int64_t>(3, k_hi), k_hi);
  kit::constant(d, "batch_size", bo[0]);
  kit::constant(d, "in_features", in);
  kit::constant(d, "out_features", bo[1]);
  const std::string dt = kit::torch_dtype(r.dtype);
  d.summary = r.op + ": linear (batch_size, in_features) -> (batch_size, out_features), then the tail, " + r.dtype;
  d.init_params = "in_features, out_features";
  d.init_inputs = "[in_features, out_features";
  d.init_body = "        self.linear = nn.Linear(in_features, out_features)\n";
  if (e.scale) {
    const double scale = 0.5 + 2.0 * r.rng.uniform();
    d.init_params += ", scale";
    d.init_inputs += ", " + kit::py_float(scale);
    d.init_body += "        self.scale = scale\n";
  }
  d.init_inputs += "]";
  d.solution_init_body = d.init_body;
  d.forward_params = e.residual ? "x, r" : "x";
  d.forward_body = std::string("        y = self.linear(x)\n        return ") + e.reference + "\n";
  d.solution_forward_body = std::string("        y = x @ self.linear.weight.t() + self.linear.bias\n        return ") +
                            e.solution + "\n";
  d.inputs_body = "    x = torch.randn(batch_size, in_features, dtype=" + dt + ")\n";
  d.inputs = {{"x", {bo[0], in}, r.dtype}};
  if (e.residual) {
    d.inputs_body += "    r = torch.randn(batch_size, out_features, dtype=" + dt + ")\n    return [x, r]";
    d.inputs.push_back({"r", {bo[0], bo[1]}, r.dtype});
  } else {
    d.inputs_body += "    return [x]";
  }
  d.parameters = {{"weight", {bo[1], in}, "float32"}, {"bias", {bo[1]}, "float32"}};
  d.output = {"out", {bo[0], bo[1]}, r.dtype};
  d.cost.flops = 2.0 * static_cast<double>(bo[0]) * static_cast<double>(bo[1]) * static_cast<double>(in) +
                 e.flops * static_cast<double>(bo[0] * bo[1]);
  if (r.variant == Variant::epilogue)
    d.library_calls = {"torch.nn.functional.linear", "torch.matmul", "torch.addmm", "torch.nn.Linear"};
  return d;
}

}  // namespace

KGYM_TASKGEN_FAMILY(gemm_epilogue) {
  Family f;
  f.name = "gemm_epilogue";
  f.description = "linear layer + fused elementwise tail (activation, scale, residual add)";
  f.level = 2;
  for (const auto& [name, e] : epis()) f.ops.push_back(name);
  f.transfer_ops = {"linear_tanh_residual"};
  f.variants = {Variant::full, Variant::small, Variant::epilogue};
  f.dtypes = {"float32"};  // nn.Linear holds float32 weights; half variants are a later extension
  f.design = design;
  return f;
}
