// Family `conv2d`: 2-D convolutions (KernelBench level 1, problems 50-87): standard, strided,
// depthwise, pointwise and dilated, with odd channel counts and spatial sizes.
#include "../family_kit.hpp"

using namespace kgym::taskgen;

namespace {

Design design(DesignRequest& r) {
  namespace kit = kgym::taskgen::kit;
  Design d;
  const std::string& op = r.op;
  const std::int64_t k = op == "conv2d_pointwise" ? 1 : (r.rng.chance(0.7) ? 3 : 5);
  const std::int64_t stride = op == "conv2d_strided" ? 2 : 1;
  const std::int64_t dilation = op == "conv2d_dilated" ? 2 : 1;
  const bool bias = r.rng.chance(0.5);
  auto c = kit::draw_conv(r, k, stride, dilation, op == "conv2d_depthwise");
  kit::conv_module(d, c, r.dtype, bias);
  d.init_inputs += "]";
  d.summary = op + ": x (batch_size, in_channels, height, width), kernel " + std::to_string(k) + "x" +
              std::to_string(k) + ", stride " + std::to_string(stride) + ", padding " + std::to_string(c.pad) +
              ", dilation " + std::to_string(dilation) + (c.groups > 1 ? ", depthwise" : "") +
              (bias ? ", bias" : "") + ", " + r.dtype;
  d.solution_init_body = d.init_body;
  d.forward_params = "x";
  d.forward_body = "        return self.conv(x)\n";
  d.solution_forward_body = kit::conv_im2col("self.conv", "out") + "        return out\n";
  d.inputs_body += "    return [x]";
  return d;
}

}  // namespace

KGYM_TASKGEN_FAMILY(conv2d) {
  Family f;
  f.name = "conv2d";
  f.description = "2-D convolutions: standard, strided, depthwise, pointwise, dilated";
  f.level = 1;
  f.ops = {"conv2d", "conv2d_depthwise", "conv2d_dilated", "conv2d_pointwise", "conv2d_strided"};
  f.transfer_ops = {"conv2d_dilated"};
  f.variants = {Variant::full, Variant::small};
  f.dtypes = {"float32"};  // nn.Conv2d holds float32 weights
  f.design = design;
  return f;
}
