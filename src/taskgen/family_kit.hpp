#pragma once
// Small helpers shared by the family plug-ins (src/taskgen/families/*.cpp): Python snippets for
// dtypes and shapes, and the usual cost-model pieces. Internal to the taskgen component.

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "kgym/error.hpp"
#include "kgym/taskgen.hpp"

namespace kgym::taskgen::kit {

/// "torch.float32" for "float32" (also float16, bfloat16, int64).
inline std::string torch_dtype(std::string_view dtype) { return "torch." + std::string(dtype); }

/// Joins strings with a separator.
inline std::string join(const std::vector<std::string>& parts, std::string_view sep = ", ") {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

/// "(a, b, c)" for names, "(a,)" for one name; "()" for none.
inline std::string tuple(const std::vector<std::string>& names) {
  if (names.size() == 1) return "(" + names[0] + ",)";
  return "(" + join(names) + ")";
}

/// Adds a size constant and returns its name.
inline std::string constant(Design& d, std::string name, std::int64_t value) {
  d.constants.emplace_back(name, value);
  return name;
}

/// Product of a shape.
inline std::int64_t numel(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

/// A shape with its dims named by size constants, e.g. names {"batch_size", "dim"}.
struct NamedShape {
  std::vector<std::string> names;
  std::vector<std::int64_t> dims;
  /// "batch_size, dim" for torch.randn(...).
  std::string args() const { return join(names); }
  std::int64_t numel() const { return kit::numel(dims); }
};

/// Registers each dim as a constant (names given) and returns the named shape.
inline NamedShape named_shape(Design& d, const std::vector<std::string>& names,
                              const std::vector<std::int64_t>& dims) {
  if (names.size() != dims.size()) throw Error(ErrorKind::internal, "named_shape: rank mismatch");
  NamedShape s{names, dims};
  for (std::size_t i = 0; i < names.size(); ++i) constant(d, names[i], dims[i]);
  return s;
}

/// Default dim names for a rank: d0, d1, ... prefixed (e.g. "dim0").
inline std::vector<std::string> dim_names(std::string_view prefix, std::size_t rank) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < rank; ++i) out.push_back(std::string(prefix) + std::to_string(i));
  return out;
}

/// True for the variants that use training sizes.
inline bool is_small(const DesignRequest& r) { return r.variant == Variant::small; }

/// Python float literal with enough digits.
inline std::string py_float(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}


/// KernelBench-style names for a tensor of a rank: dim; batch_size, dim; batch_size, seq_len, dim;
/// batch_size, channels, height, width. `prefix` is prepended ("x_" for a second tensor).
inline std::vector<std::string> standard_names(std::size_t rank, std::string_view prefix = "") {
  static const std::vector<std::vector<std::string>> names = {
      {}, {"dim"}, {"batch_size", "dim"}, {"batch_size", "seq_len", "dim"},
      {"batch_size", "channels", "height", "width"}};
  std::vector<std::string> out;
  if (rank < names.size()) out = names[rank];
  else out = dim_names("dim", rank);
  for (auto& n : out) n = std::string(prefix) + n;
  return out;
}

/// Draws a shape of `rank` for the request's variant: the total is log-uniform in the variant's
/// element range (small: [min_small, 4096]; full: [1M, 32M]).
inline std::vector<std::int64_t> variant_shape(DesignRequest& r, int rank, std::int64_t min_dim, std::int64_t min_small) {
  auto [lo, hi] = element_range(to_string(r.variant), min_small);
  const std::int64_t target = r.rng.log_uniform_int(lo, hi);
  return draw_shape(r.rng, target, rank, min_dim, hi);
}

/// Honest conv2d of `x` with the nn.Conv2d at `conv` (e.g. "self.conv"), as im2col (F.unfold)
/// and a grouped einsum; assigns `target`. Lines are 8-space indented.
inline std::string conv_im2col(std::string_view conv, std::string_view target) {
  const std::string c(conv);
  return "        w = " + c + ".weight\n"
         "        n, g = x.shape[0], " + c + ".groups\n"
         "        kh, kw = w.shape[2], w.shape[3]\n"
         "        (ph, pw), (sh, sw), (dh, dw) = " + c + ".padding, " + c + ".stride, " + c + ".dilation\n"
         "        cols = F.unfold(x, (kh, kw), dilation=(dh, dw), padding=(ph, pw), stride=(sh, sw))\n"
         "        h_out = (x.shape[2] + 2 * ph - dh * (kh - 1) - 1) // sh + 1\n"
         "        w_out = (x.shape[3] + 2 * pw - dw * (kw - 1) - 1) // sw + 1\n"
         "        cols = cols.view(n, g, -1, cols.shape[-1])\n"
         "        wg = w.view(g, w.shape[0] // g, -1)\n"
         "        " + std::string(target) + " = torch.einsum(\"gok,ngkl->ngol\", wg, cols).reshape(n, w.shape[0], h_out, w_out)\n"
         "        if " + c + ".bias is not None:\n"
         "            " + std::string(target) + " = " + std::string(target) + " + " + c + ".bias.view(1, -1, 1, 1)\n";
}

/// Output size of a convolution or pooling window along one dim.
inline std::int64_t window_out(std::int64_t in, std::int64_t k, std::int64_t stride, std::int64_t pad,
                               std::int64_t dilation = 1) {
  return (in + 2 * pad - dilation * (k - 1) - 1) / stride + 1;
}

/// A conv2d configuration drawn for a variant (shared by conv2d and conv_epilogue).
struct ConvShape {
  std::int64_t n, cin, cout, h, w, k, stride, pad, dilation, groups;
  std::int64_t h_out() const { return window_out(h, k, stride, pad, dilation); }
  std::int64_t w_out() const { return window_out(w, k, stride, pad, dilation); }
};

/// Draws a convolution: odd channel counts and spatial sizes, the input in the variant's range,
/// the output capped at the range's top (fewer output channels when needed).
inline ConvShape draw_conv(DesignRequest& r, std::int64_t k, std::int64_t stride, std::int64_t dilation, bool depthwise) {
  ConvShape c{};
  c.k = k;
  c.stride = stride;
  c.dilation = dilation;
  c.pad = r.rng.chance(0.6) ? dilation * (k / 2) : 0;
  const bool small = is_small(r);
  auto [lo, hi] = element_range(to_string(r.variant), 64);
  c.n = small ? r.rng.uniform_int(1, 2) : r.rng.odd_dim(1, 16);
  c.cin = small ? r.rng.uniform_int(2, 6) : r.rng.odd_dim(3, 96);
  c.cout = depthwise ? c.cin : (small ? r.rng.uniform_int(2, 6) : r.rng.odd_dim(5, 128));
  c.groups = depthwise ? c.cin : 1;
  const std::int64_t span = dilation * (k - 1) + 1;
  const std::int64_t target = r.rng.log_uniform_int(lo, hi);
  const std::int64_t plane = std::max<std::int64_t>(span + 2, target / (c.n * c.cin));
  auto hw = draw_shape(r.rng, plane, 2, std::max<std::int64_t>(span + 1, 5), small ? 169 : hi);
  c.h = hw[0];
  c.w = hw[1];
  while (c.n * c.cin * c.h * c.w > hi && c.h > span + 2) c.h = c.h * 9 / 10;
  while (c.n * c.cout * c.h_out() * c.w_out() > hi && c.cout > 2 && !depthwise) c.cout = c.cout * 9 / 10;
  return c;
}

/// Registers the conv's constants and returns the Python init-input list and the inputs line.
inline void conv_module(Design& d, const ConvShape& c, std::string_view dtype, bool bias) {
  constant(d, "batch_size", c.n);
  constant(d, "in_channels", c.cin);
  constant(d, "out_channels", c.cout);
  constant(d, "height", c.h);
  constant(d, "width", c.w);
  d.init_params = "in_channels, out_channels, kernel_size, stride, padding, dilation, groups";
  d.init_inputs = "[in_channels, out_channels, " + std::to_string(c.k) + ", " + std::to_string(c.stride) + ", " +
                  std::to_string(c.pad) + ", " + std::to_string(c.dilation) + ", " +
                  (c.groups == 1 ? std::string("1") : std::string("in_channels"));
  d.init_body = "        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,\n"
                "                              dilation=dilation, groups=groups, bias=" +
                std::string(bias ? "True" : "False") + ")\n";
  d.inputs_body = "    x = torch.randn(batch_size, in_channels, height, width, dtype=" + torch_dtype(dtype) + ")\n";
  d.inputs = {{"x", {c.n, c.cin, c.h, c.w}, std::string(dtype)}};
  d.parameters = {{"weight", {c.cout, c.cin / c.groups, c.k, c.k}, "float32"}};
  if (bias) d.parameters.push_back({"bias", {c.cout}, "float32"});
  d.output = {"out", {c.n, c.cout, c.h_out(), c.w_out()}, std::string(dtype)};
  d.cost.flops = 2.0 * static_cast<double>(c.n * c.cout * c.h_out() * c.w_out()) *
                 static_cast<double>(c.cin / c.groups * c.k * c.k);
}

/// Scaffold variant, elementwise families: a Triton module whose kernel loads `inputs` (tensor
/// names, broadcast and made contiguous on the host) tile by tile with the offsets and mask
/// written; the model fills in `result`. `scalars` are extra kernel arguments (host expressions,
/// e.g. "self.alpha"), named p0, p1, ... in the kernel. `todo` says what to compute.
inline std::string elementwise_scaffold(const Design& d, const std::vector<std::string>& inputs,
                                        const std::vector<std::string>& scalars, std::string_view todo) {
  std::string ptrs, loads, args, params;
  for (const auto& n : inputs) {
    ptrs += n + "_ptr, ";
    loads += "    " + n + " = tl.load(" + n + "_ptr + offsets, mask=mask).to(tl.float32)\n";
  }
  for (std::size_t i = 0; i < scalars.size(); ++i) {
    params += "p" + std::to_string(i) + ", ";
    args += scalars[i] + ", ";
  }
  std::string s =
      "\"\"\"Scaffold (kgym taskgen): host setup and tile offsets are written; write the computation\n"
      "where marked. Task: " + d.summary + "\n\"\"\"\n"
      "import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n\n\n"
      "@triton.jit\n"
      "def kgym_kernel(" + ptrs + "out_ptr, n_elements, " + params + "BLOCK: tl.constexpr):\n"
      "    pid = tl.program_id(0)\n"
      "    offsets = pid * BLOCK + tl.arange(0, BLOCK)\n"
      "    mask = offsets < n_elements\n" + loads +
      "    # TODO(model): " + std::string(todo) + "\n"
      "    result = " + inputs.front() + "\n"
      "    tl.store(out_ptr + offsets, result.to(out_ptr.dtype.element_ty), mask=mask)\n\n\n"
      "class ModelNew(nn.Module):\n"
      "    def __init__(self" + (d.init_params.empty() ? "" : ", " + d.init_params) + "):\n"
      "        super().__init__()\n" + d.solution_init_body + "\n"
      "    def forward(self, " + d.forward_params + "):\n";
  if (inputs.size() > 1)
    s += "        " + join(inputs) + " = torch.broadcast_tensors(" + join(inputs) + ")\n";
  for (const auto& n : inputs) s += "        " + n + " = " + n + ".contiguous()\n";
  s += "        out = torch.empty_like(" + inputs.front() + ")\n"
       "        n_elements = out.numel()\n"
       "        BLOCK = 1024\n"
       "        grid = (triton.cdiv(n_elements, BLOCK),)\n"
       "        kgym_kernel[grid](" + join(inputs) + ", out, n_elements, " + args + "BLOCK=BLOCK)\n"
       "        return out\n";
  return s;
}

/// Scaffold variant, row-wise families (softmax, norms, reductions, scans): the host moves
/// `dim_expr` last and flattens to rows; one program per row loads the row with its mask; the
/// model fills in `result` (a row for `reduces` false, one value for true).
inline std::string row_scaffold(const Design& d, std::string_view dim_expr, bool reduces, std::string_view other,
                                const std::vector<std::string>& tensor_args, std::string_view todo) {
  std::string ptrs, args;
  for (const auto& a : tensor_args) {
    ptrs += a.substr(a.rfind('.') + 1) + "_ptr, ";
    args += a + ", ";
  }
  std::string s =
      "\"\"\"Scaffold (kgym taskgen): host setup and row offsets are written; write the computation\n"
      "where marked. Task: " + d.summary + "\n\"\"\"\n"
      "import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n\n\n"
      "@triton.jit\n"
      "def kgym_kernel(x_ptr, out_ptr, " + ptrs + "n_cols, BLOCK: tl.constexpr):\n"
      "    row = tl.program_id(0)\n"
      "    cols = tl.arange(0, BLOCK)\n"
      "    mask = cols < n_cols\n"
      "    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=" + std::string(other) + ").to(tl.float32)\n"
      "    # TODO(model): " + std::string(todo) + "\n";
  if (reduces)
    s += "    result = tl.sum(x, axis=0)  # placeholder\n"
         "    tl.store(out_ptr + row, result.to(out_ptr.dtype.element_ty))\n\n\n";
  else
    s += "    result = x  # placeholder\n"
         "    tl.store(out_ptr + row * n_cols + cols, result.to(out_ptr.dtype.element_ty), mask=mask)\n\n\n";
  s += "class ModelNew(nn.Module):\n"
       "    def __init__(self" + (d.init_params.empty() ? "" : ", " + d.init_params) + "):\n"
       "        super().__init__()\n" + d.solution_init_body + "\n"
       "    def forward(self, " + d.forward_params + "):\n"
       "        xm = x.movedim(" + std::string(dim_expr) + ", -1).contiguous()\n"
       "        n_cols = xm.shape[-1]\n"
       "        rows = xm.reshape(-1, n_cols)\n";
  if (reduces)
    s += "        out = torch.empty(rows.shape[0], dtype=x.dtype, device=x.device)\n";
  else
    s += "        out = torch.empty_like(rows)\n";
  s += "        BLOCK = triton.next_power_of_2(n_cols)\n"
       "        kgym_kernel[(rows.shape[0],)](rows, out, " + args + "n_cols, BLOCK=BLOCK)\n";
  if (reduces)
    s += "        return out.reshape(xm.shape[:-1])\n";
  else
    s += "        return out.reshape(xm.shape).movedim(-1, " + std::string(dim_expr) + ")\n";
  return s;
}

/// "torch.randn(a, b, dtype=torch.float32)" for a named shape.
inline std::string randn(const NamedShape& s, std::string_view dtype) {
  return "torch.randn(" + s.args() + ", dtype=" + torch_dtype(dtype) + ")";
}
/// "torch.rand(a, b, dtype=torch.float32)".
inline std::string rand(const NamedShape& s, std::string_view dtype) {
  return "torch.rand(" + s.args() + ", dtype=" + torch_dtype(dtype) + ")";
}

}  // namespace kgym::taskgen::kit
