// Family `attention`: scaled dot-product attention (B, H, S, D), plain, causal, or with an explicit
// softmax scale. Head dims include non-powers of two (24, 40, 80, 96, 112).
#include "../family_kit.hpp"

using namespace kgym::taskgen;

namespace {

Design design(DesignRequest& r) {
  namespace kit = kgym::taskgen::kit;
  Design d;
  const bool causal = r.op == "sdpa_causal";
  const bool scaled = r.op == "sdpa_scale";
  const bool small = kit::is_small(r);
  const std::int64_t head = r.rng.choice(small ? std::vector<std::int64_t>{8, 12, 16, 24}
                                               : std::vector<std::int64_t>{24, 32, 40, 64, 80, 96, 112, 128});
  auto [lo, hi] = element_range(to_string(r.variant), 64);
  const std::int64_t total = std::max<std::int64_t>(lo, r.rng.log_uniform_int(lo, hi));
  const std::int64_t rows = std::max<std::int64_t>(4, total / head);   // B * H * S
  const std::int64_t seq = r.rng.odd_dim(std::min<std::int64_t>(5, rows), std::clamp<std::int64_t>(rows, 5, small ? 63 : 4095));
  auto bh = draw_shape(r.rng, std::max<std::int64_t>(1, rows / seq), 2, 1, std::max<std::int64_t>(1, hi / (seq * head)));
  auto q = kit::named_shape(d, {"batch_size", "num_heads", "seq_len", "head_dim"}, {bh[0], bh[1], seq, head});
  const std::string dt = kit::torch_dtype(r.dtype);
  const double scale = 0.5 / std::sqrt(static_cast<double>(head)) + r.rng.uniform() / std::sqrt(static_cast<double>(head));
  d.summary = r.op + ": q, k, v (" + q.args() + "), " + r.dtype;
  d.forward_params = "q, k, v";
  if (scaled) {
    d.init_params = "scale";
    d.init_inputs = "[" + kit::py_float(scale) + "]";
    d.init_body = "        self.scale = scale\n";
    d.forward_body = "        return F.scaled_dot_product_attention(q, k, v, scale=self.scale)\n";
  } else {
    d.init_inputs = "[]";
    d.forward_body = std::string("        return F.scaled_dot_product_attention(q, k, v, is_causal=") +
                     (causal ? "True" : "False") + ")\n";
  }
  d.solution_init_body = d.init_body;
  d.solution_forward_body =
      std::string("        s = (q @ k.transpose(-2, -1)) * ") + (scaled ? "self.scale" : "(1.0 / math.sqrt(q.shape[-1]))") + "\n" +
      (causal ? "        n = q.shape[-2]\n"
                "        mask = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)\n"
                "        s = s.masked_fill(mask, float(\"-inf\"))\n"
              : "") +
      "        p = torch.exp(s - s.amax(dim=-1, keepdim=True))\n"
      "        p = p / p.sum(dim=-1, keepdim=True)\n"
      "        return p @ v\n";
  // q is scaled up so the attention is peaked, not an average of v over the sequence.
  d.inputs_body = "    q = " + kit::randn(q, r.dtype) + " * 2.0\n    k = " + kit::randn(q, r.dtype) + "\n    v = " +
                  kit::randn(q, r.dtype) + "\n    return [q, k, v]";
  d.inputs = {{"q", q.dims, r.dtype}, {"k", q.dims, r.dtype}, {"v", q.dims, r.dtype}};
  d.output = {"out", q.dims, r.dtype};
  d.cost.flops = 4.0 * static_cast<double>(bh[0] * bh[1]) * static_cast<double>(seq) * static_cast<double>(seq) *
                 static_cast<double>(head) * (causal ? 0.5 : 1.0);
  return d;
}

}  // namespace

KGYM_TASKGEN_FAMILY(attention) {
  Family f;
  f.name = "attention";
  f.description = "scaled dot-product attention (plain, causal, explicit scale)";
  f.level = 1;
  f.ops = {"sdpa", "sdpa_causal", "sdpa_scale"};
  f.transfer_ops = {"sdpa_scale"};
  f.variants = {Variant::full, Variant::small};
  f.dtypes = {"float32", "float16", "bfloat16"};
  f.design = design;
  return f;
}
