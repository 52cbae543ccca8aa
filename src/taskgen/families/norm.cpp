// Family `norm`: layer norm, RMS norm, group norm, batch norm (eval mode, running statistics) and
// instance norm. Affine weights and running statistics are drawn at random in __init__ (so a
// norm is never close to the identity, as eval-mode batch norm with fresh statistics would be);
// ModelNew draws them in the same order, so both modules hold the same values.
#include "../family_kit.hpp"

using namespace kgym::taskgen;

namespace {

const char* kAffine =
    "        self.weight = nn.Parameter(torch.rand(num_features) + 0.5)\n"
    "        self.bias = nn.Parameter(torch.randn(num_features) * 0.5)\n";

Design design(DesignRequest& r) {
  namespace kit = kgym::taskgen::kit;
  Design d;
  const std::string& op = r.op;
  const double eps = r.rng.chance(0.5) ? 1e-5 : 1e-6;
  const std::string dt = kit::torch_dtype(r.dtype);
  kit::NamedShape x;
  std::int64_t features = 0;
  std::string todo;
  if (op == "layer_norm" || op == "rms_norm") {
    const int rank = static_cast<int>(r.rng.uniform_int(2, 3));
    auto dims = kit::variant_shape(r, rank, 2, 65);
    dims.back() = std::max<std::int64_t>(dims.back(), 9);
    x = kit::named_shape(d, kit::standard_names(rank), dims);
    features = dims.back();
    d.init_params = "num_features, eps";
    d.init_inputs = "[" + x.names.back() + ", " + kit::py_float(eps) + "]";
    if (op == "layer_norm") {
      d.init_body = std::string("        self.eps = eps\n") + kAffine;
      d.forward_body = "        return F.layer_norm(x, (x.shape[-1],), self.weight, self.bias, self.eps)\n";
      d.solution_forward_body =
          "        mean = x.mean(dim=-1, keepdim=True)\n"
          "        var = ((x - mean) * (x - mean)).mean(dim=-1, keepdim=True)\n"
          "        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias\n";
      todo = "result = (x - mean) / sqrt(var + eps) * weight + bias over the last dim";
    } else {
      d.init_body = "        self.eps = eps\n        self.weight = nn.Parameter(torch.rand(num_features) + 0.5)\n";
      d.forward_body = "        return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)\n";
      d.solution_forward_body =
          "        ms = (x * x).mean(dim=-1, keepdim=True)\n"
          "        return x * torch.rsqrt(ms + self.eps) * self.weight\n";
      todo = "result = x / sqrt(mean(x^2) + eps) * weight over the last dim";
    }
    d.summary = op + " over the last dim of a " + r.dtype + " tensor (" + x.args() + ")";
  } else {
    // (N, C, H, W) layouts.
    auto dims = kit::variant_shape(r, 4, 2, 97);
    dims[1] = std::max<std::int64_t>(dims[1], 3);
    std::int64_t groups = 1;
    if (op == "group_norm") {
      groups = r.rng.uniform_int(2, 5);
      dims[1] = groups * std::max<std::int64_t>(1, dims[1] / groups);
      if (dims[1] / groups * dims[2] * dims[3] < 8) dims[2] = std::max<std::int64_t>(dims[2], 3), dims[3] = std::max<std::int64_t>(dims[3], 3);
    }
    if (op == "instance_norm") dims[2] = std::max<std::int64_t>(dims[2], 3), dims[3] = std::max<std::int64_t>(dims[3], 3);
    x = kit::named_shape(d, kit::standard_names(4), dims);
    features = dims[1];
    d.summary = op + " of a " + r.dtype + " tensor (" + x.args() + ")";
    if (op == "batch_norm") {
      d.init_params = "num_features, eps";
      d.init_inputs = "[channels, " + kit::py_float(eps) + "]";
      d.init_body = std::string("        self.eps = eps\n") + kAffine +
                    "        self.register_buffer(\"running_mean\", torch.randn(num_features) * 0.5)\n"
                    "        self.register_buffer(\"running_var\", torch.rand(num_features) + 0.5)\n";
      d.forward_body =
          "        return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,\n"
          "                            training=False, eps=self.eps)\n";
      d.solution_forward_body =
          "        scale = self.weight / torch.sqrt(self.running_var + self.eps)\n"
          "        shift = self.bias - self.running_mean * scale\n"
          "        return x * scale.view(1, -1, 1, 1) + shift.view(1, -1, 1, 1)\n";
      todo = "result = (x - running_mean[c]) / sqrt(running_var[c] + eps) * weight[c] + bias[c]";
    } else if (op == "group_norm") {
      d.init_params = "num_groups, num_features, eps";
      d.init_inputs = "[" + std::to_string(groups) + ", channels, " + kit::py_float(eps) + "]";
      d.init_body = std::string("        self.num_groups = num_groups\n        self.eps = eps\n") + kAffine;
      d.forward_body = "        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)\n";
      d.solution_forward_body =
          "        n, c = x.shape[0], x.shape[1]\n"
          "        g = x.reshape(n, self.num_groups, -1)\n"
          "        mean = g.mean(dim=-1, keepdim=True)\n"
          "        var = ((g - mean) * (g - mean)).mean(dim=-1, keepdim=True)\n"
          "        y = ((g - mean) / torch.sqrt(var + self.eps)).reshape(x.shape)\n"
          "        return y * self.weight.view(1, c, 1, 1) + self.bias.view(1, c, 1, 1)\n";
      todo = "group statistics over (C/G, H, W), then the per-channel affine";
    } else {  // instance_norm
      d.init_params = "num_features, eps";
      d.init_inputs = "[channels, " + kit::py_float(eps) + "]";
      d.init_body = "        self.eps = eps\n";
      d.forward_body = "        return F.instance_norm(x, eps=self.eps)\n";
      d.solution_forward_body =
          "        mean = x.mean(dim=(2, 3), keepdim=True)\n"
          "        var = ((x - mean) * (x - mean)).mean(dim=(2, 3), keepdim=True)\n"
          "        return (x - mean) / torch.sqrt(var + self.eps)\n";
      todo = "per (n, c) statistics over (H, W)";
    }
  }
  d.solution_init_body = d.init_body;
  d.forward_params = "x";
  d.inputs_body = "    x = " + kit::randn(x, r.dtype) + " * 2.0 + 0.5\n    return [x]";
  d.inputs = {{"x", x.dims, r.dtype}};
  if (op != "instance_norm") d.parameters.push_back({"weight", {features}, "float32"});
  if (op != "instance_norm" && op != "rms_norm") d.parameters.push_back({"bias", {features}, "float32"});
  if (op == "batch_norm") {
    d.parameters.push_back({"running_mean", {features}, "float32"});
    d.parameters.push_back({"running_var", {features}, "float32"});
  }
  d.output = {"out", x.dims, r.dtype};
  d.cost.flops = 8.0 * static_cast<double>(x.numel());
  if (r.variant == Variant::scaffold && (op == "layer_norm" || op == "rms_norm"))
    d.scaffold = kit::row_scaffold(d, "-1", false, "0.0",
                                   op == "layer_norm" ? std::vector<std::string>{"self.weight", "self.bias"}
                                                      : std::vector<std::string>{"self.weight"},
                                   todo);
  if (r.variant == Variant::scaffold && d.scaffold.empty())
    throw kgym::Error(kgym::ErrorKind::input, "norm op '" + op + "' has no scaffold (layer_norm and rms_norm do)");
  return d;
}

}  // namespace

KGYM_TASKGEN_FAMILY(norm) {
  Family f;
  f.name = "norm";
  f.description = "normalisations (layer, RMS, group, batch in eval mode, instance)";
  f.level = 1;
  f.ops = {"batch_norm", "group_norm", "instance_norm", "layer_norm", "rms_norm"};
  f.transfer_ops = {"instance_norm"};
  f.variants = {Variant::full, Variant::small, Variant::scaffold};
  f.dtypes = {"float32"};  // parameters are float32; mixed-dtype norms are a later extension
  f.design = design;
  f.has_variant = [](std::string_view op, Variant v) {
    return v != Variant::scaffold || op == "layer_norm" || op == "rms_norm";
  };
  return f;
}
