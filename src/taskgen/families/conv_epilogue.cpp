// Family `conv_epilogue`: a convolution followed by a fused tail (KernelBench level 2). The
// epilogue variant keeps the convolution a library call (hybrid policy): the tail is the model's.
#include <map>

#include "../family_kit.hpp"

using namespace kgym::taskgen;

namespace {

struct Tail {
  const char* init;       // extra __init__ lines (parameters drawn after the conv's)
  const char* reference;  // of y
  const char* solution;
  bool scale;             // takes a `scale` init argument
  double flops;           // per output element
};

const std::map<std::string, Tail>& tails() {
  static const std::map<std::string, Tail> m = {
      {"conv_relu", {"", "torch.relu(y)", "torch.where(y > 0, y, torch.zeros_like(y))", false, 1}},
      {"conv_scale_bias",
       {"        self.extra_bias = nn.Parameter(torch.randn(out_channels, 1, 1) * 0.5)\n",
        "y * self.scale + self.extra_bias", "self.extra_bias + self.scale * y", true, 2}},
      {"conv_bn_relu",
       {"        self.bn_weight = nn.Parameter(torch.rand(out_channels) + 0.5)\n"
        "        self.bn_bias = nn.Parameter(torch.randn(out_channels) * 0.5)\n"
        "        self.register_buffer(\"bn_mean\", torch.randn(out_channels) * 0.5)\n"
        "        self.register_buffer(\"bn_var\", torch.rand(out_channels) + 0.5)\n",
        "torch.relu(F.batch_norm(y, self.bn_mean, self.bn_var, self.bn_weight, self.bn_bias, training=False, eps=1e-5))",
        "torch.clamp_min((y - self.bn_mean.view(1, -1, 1, 1)) * (self.bn_weight / torch.sqrt(self.bn_var + 1e-5)).view(1, -1, 1, 1)"
        " + self.bn_bias.view(1, -1, 1, 1), 0.0)",
        false, 5}},
      {"conv_tanh_scale", {"", "torch.tanh(y) * self.scale", "self.scale * (1.0 - 2.0 / (torch.exp(2.0 * y) + 1.0))", true, 6}},
  };
  return m;
}

Design design(DesignRequest& r) {
  namespace kit = kgym::taskgen::kit;
  const Tail& t = tails().at(r.op);
  Design d;
  const std::int64_t k = r.rng.chance(0.7) ? 3 : 5;
  auto c = kit::draw_conv(r, k, r.rng.chance(0.25) ? 2 : 1, 1, false);
  kit::conv_module(d, c, r.dtype, true);
  if (t.scale) {
    d.init_params += ", scale";
    d.init_inputs += ", " + kit::py_float(0.5 + 2.0 * r.rng.uniform());
    d.init_body += "        self.scale = scale\n";
  }
  d.init_inputs += "]";
  d.init_body += t.init;
  d.summary = r.op + ": conv " + std::to_string(k) + "x" + std::to_string(k) + " stride " + std::to_string(c.stride) +
              " on x (batch_size, in_channels, height, width), then the tail, " + r.dtype;
  d.solution_init_body = d.init_body;
  d.forward_params = "x";
  d.forward_body = std::string("        y = self.conv(x)\n        return ") + t.reference + "\n";
  d.solution_forward_body = kit::conv_im2col("self.conv", "y") + "        return " + t.solution + "\n";
  d.inputs_body += "    return [x]";
  if (r.op == "conv_scale_bias") d.parameters.push_back({"extra_bias", {c.cout}, "float32"});
  if (r.op == "conv_bn_relu")
    for (const char* n : {"bn_weight", "bn_bias", "bn_mean", "bn_var"}) d.parameters.push_back({n, {c.cout}, "float32"});
  d.cost.flops += t.flops * static_cast<double>(d.output.numel());
  if (r.variant == Variant::epilogue) d.library_calls = {"torch.nn.functional.conv2d", "torch.nn.Conv2d"};
  return d;
}

}  // namespace

KGYM_TASKGEN_FAMILY(conv_epilogue) {
  Family f;
  f.name = "conv_epilogue";
  f.description = "convolution + fused tail (activation, scale and bias, eval batch norm)";
  f.level = 2;
  for (const auto& [name, t] : tails()) f.ops.push_back(name);
  f.transfer_ops = {"conv_tanh_scale"};
  f.variants = {Variant::full, Variant::small, Variant::epilogue};
  f.dtypes = {"float32"};
  f.design = design;
  return f;
}
