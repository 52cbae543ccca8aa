// Family `pooling`: max and average pooling in 1-D and 2-D, and adaptive average pooling
// (KernelBench level 1, problems 41-46).
#include "../family_kit.hpp"

using namespace kgym::taskgen;

namespace {

Design design(DesignRequest& r) {
  namespace kit = kgym::taskgen::kit;
  Design d;
  const std::string& op = r.op;
  const bool two_d = op != "max_pool1d" && op != "avg_pool1d";
  const std::int64_t k = r.rng.uniform_int(2, 5);
  const std::int64_t stride = r.rng.chance(0.5) ? k : r.rng.uniform_int(1, k);
  const std::int64_t pad = r.rng.uniform_int(0, k / 2);
  const std::string dt = kit::torch_dtype(r.dtype);
  if (two_d) {
    auto dims = kit::variant_shape(r, 4, 2, 97);
    dims[2] = std::max<std::int64_t>(dims[2], k + 2);
    dims[3] = std::max<std::int64_t>(dims[3], k + 2);
    const std::int64_t hi = element_range(to_string(r.variant), 97).second;
    while (kit::numel(dims) > hi && (dims[0] > 2 || dims[1] > 2)) (dims[0] >= dims[1] ? dims[0] : dims[1]) -= 1;
    auto x = kit::named_shape(d, kit::standard_names(4), dims);
    d.inputs = {{"x", dims, r.dtype}};
    d.inputs_body = "    x = " + kit::randn(x, r.dtype) + "\n    return [x]";
    if (op == "adaptive_avg_pool2d") {
      const std::int64_t oh = r.rng.uniform_int(1, std::min<std::int64_t>(7, dims[2] - 1));
      const std::int64_t ow = r.rng.uniform_int(2, std::min<std::int64_t>(7, dims[3] - 1));
      d.summary = op + " of x (" + x.args() + ") to (" + std::to_string(oh) + ", " + std::to_string(ow) + "), " + r.dtype;
      d.init_params = "output_size";
      d.init_inputs = "[(" + std::to_string(oh) + ", " + std::to_string(ow) + ")]";
      d.init_body = "        self.output_size = output_size\n";
      d.forward_body = "        return F.adaptive_avg_pool2d(x, self.output_size)\n";
      d.solution_forward_body =
          "        oh, ow = self.output_size\n"
          "        h, w = x.shape[2], x.shape[3]\n"
          "        rows = []\n"
          "        for i in range(oh):\n"
          "            h0, h1 = (i * h) // oh, -((-(i + 1) * h) // oh)\n"
          "            cols = []\n"
          "            for j in range(ow):\n"
          "                w0, w1 = (j * w) // ow, -((-(j + 1) * w) // ow)\n"
          "                cols.append(x[:, :, h0:h1, w0:w1].mean(dim=(2, 3)))\n"
          "            rows.append(torch.stack(cols, dim=-1))\n"
          "        return torch.stack(rows, dim=-2)\n";
      d.output = {"out", {dims[0], dims[1], oh, ow}, r.dtype};
      d.cost.flops = static_cast<double>(x.numel());
    } else {
      const bool is_max = op == "max_pool2d";
      d.summary = op + " of x (" + x.args() + "), kernel " + std::to_string(k) + ", stride " + std::to_string(stride) +
                  ", padding " + std::to_string(pad) + ", " + r.dtype;
      d.init_params = "kernel_size, stride, padding";
      d.init_inputs = "[" + std::to_string(k) + ", " + std::to_string(stride) + ", " + std::to_string(pad) + "]";
      d.init_body = "        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding\n";
      d.forward_body = std::string("        return F.") + (is_max ? "max_pool2d" : "avg_pool2d") +
                       "(x, self.kernel_size, self.stride, self.padding)\n";
      // Max pads with -inf, average counts the zero padding (count_include_pad=True).
      d.solution_forward_body =
          std::string("        p, k, s = self.padding, self.kernel_size, self.stride\n") +
          "        xp = F.pad(x, (p, p, p, p), value=" + (is_max ? "float(\"-inf\")" : "0.0") + ")\n"
          "        win = xp.unfold(2, k, s).unfold(3, k, s)\n" +
          (is_max ? "        return win.amax(dim=(-2, -1))\n" : "        return win.sum(dim=(-2, -1)) / (k * k)\n");
      const std::int64_t ho = kit::window_out(dims[2], k, stride, pad), wo = kit::window_out(dims[3], k, stride, pad);
      d.output = {"out", {dims[0], dims[1], ho, wo}, r.dtype};
      d.cost.flops = static_cast<double>(k * k) * static_cast<double>(d.output.numel());
    }
  } else {
    auto dims = kit::variant_shape(r, 3, 2, 65);
    dims[2] = std::max<std::int64_t>(dims[2], k + 2);
    const std::int64_t hi = element_range(to_string(r.variant), 65).second;
    while (kit::numel(dims) > hi && (dims[0] > 2 || dims[1] > 2)) (dims[0] >= dims[1] ? dims[0] : dims[1]) -= 1;
    auto x = kit::named_shape(d, {"batch_size", "channels", "length"}, dims);
    const bool is_max = op == "max_pool1d";
    d.summary = op + " of x (" + x.args() + "), kernel " + std::to_string(k) + ", stride " + std::to_string(stride) +
                ", padding " + std::to_string(pad) + ", " + r.dtype;
    d.inputs = {{"x", dims, r.dtype}};
    d.inputs_body = "    x = " + kit::randn(x, r.dtype) + "\n    return [x]";
    d.init_params = "kernel_size, stride, padding";
    d.init_inputs = "[" + std::to_string(k) + ", " + std::to_string(stride) + ", " + std::to_string(pad) + "]";
    d.init_body = "        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding\n";
    d.forward_body = std::string("        return F.") + (is_max ? "max_pool1d" : "avg_pool1d") +
                     "(x, self.kernel_size, self.stride, self.padding)\n";
    d.solution_forward_body =
        std::string("        p, k, s = self.padding, self.kernel_size, self.stride\n") +
        "        xp = F.pad(x, (p, p), value=" + (is_max ? "float(\"-inf\")" : "0.0") + ")\n"
        "        win = xp.unfold(2, k, s)\n" +
        (is_max ? "        return win.amax(dim=-1)\n" : "        return win.sum(dim=-1) / k\n");
    d.output = {"out", {dims[0], dims[1], kit::window_out(dims[2], k, stride, pad)}, r.dtype};
    d.cost.flops = static_cast<double>(k) * static_cast<double>(d.output.numel());
  }
  d.solution_init_body = d.init_body;
  d.forward_params = "x";
  return d;
}

}  // namespace

KGYM_TASKGEN_FAMILY(pooling) {
  Family f;
  f.name = "pooling";
  f.description = "max / average pooling (1-D, 2-D) and adaptive average pooling";
  f.level = 1;
  f.ops = {"adaptive_avg_pool2d", "avg_pool1d", "avg_pool2d", "max_pool1d", "max_pool2d"};
  f.transfer_ops = {"adaptive_avg_pool2d"};
  f.variants = {Variant::full, Variant::small};
  f.dtypes = {"float32", "float16", "bfloat16"};
  f.design = design;
  return f;
}
