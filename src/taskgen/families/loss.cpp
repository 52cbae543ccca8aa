// Family `loss`: losses reduced to a scalar mean (KernelBench level 1, problems 94-100).
// Inputs that must be probabilities are taken as logits and normalised inside forward, so the
// gym's value transforms (negation, scaling) keep the reference well defined.
#include <map>

#include "../family_kit.hpp"

using namespace kgym::taskgen;

namespace {

struct Loss {
  const char* reference;  // of pred, target
  const char* solution;   // lines (8-space) ending in return
  const char* target;     // "randn" | "class" | "rand01" | "sign"
  double flops;           // per element
};

const std::map<std::string, Loss>& losses() {
  static const std::map<std::string, Loss> m = {
      {"mse", {"F.mse_loss(pred, target)", "        d = pred - target\n        return (d * d).sum() / d.numel()\n", "randn", 3}},
      {"l1", {"F.l1_loss(pred, target)", "        return (pred - target).abs().sum() / pred.numel()\n", "randn", 3}},
      {"smooth_l1", {"F.smooth_l1_loss(pred, target)",
                     "        d = (pred - target).abs()\n"
                     "        return torch.where(d < 1.0, 0.5 * d * d, d - 0.5).sum() / d.numel()\n",
                     "randn", 5}},
      {"cross_entropy", {"F.cross_entropy(pred, target)",
                         "        m = pred.amax(dim=1, keepdim=True)\n"
                         "        logz = (m + torch.log(torch.exp(pred - m).sum(dim=1, keepdim=True))).squeeze(1)\n"
                         "        picked = pred[torch.arange(pred.shape[0], device=pred.device), target]\n"
                         "        return (logz - picked).sum() / pred.shape[0]\n",
                         "class", 6}},
      {"kl_div", {"F.kl_div(torch.log_softmax(pred, dim=1), torch.softmax(target, dim=1), reduction=\"batchmean\")",
                  "        lp = pred - pred.amax(dim=1, keepdim=True)\n"
                  "        lp = lp - torch.log(torch.exp(lp).sum(dim=1, keepdim=True))\n"
                  "        lq = target - target.amax(dim=1, keepdim=True)\n"
                  "        lq = lq - torch.log(torch.exp(lq).sum(dim=1, keepdim=True))\n"
                  "        return (torch.exp(lq) * (lq - lp)).sum() / pred.shape[0]\n",
                  "randn", 10}},
      {"bce_with_logits", {"F.binary_cross_entropy_with_logits(pred, target)",
                           "        softplus = torch.clamp_min(pred, 0.0) + torch.log(1.0 + torch.exp(-pred.abs()))\n"
                           "        return (softplus - pred * target).sum() / pred.numel()\n",
                           "rand01", 6}},
      {"hinge", {"torch.mean(torch.clamp(1 - pred * target, min=0))",
                 "        m = 1.0 - pred * target\n        return torch.where(m > 0, m, torch.zeros_like(m)).sum() / m.numel()\n",
                 "sign", 3}},
  };
  return m;
}

Design design(DesignRequest& r) {
  namespace kit = kgym::taskgen::kit;
  const Loss& l = losses().at(r.op);
  Design d;
  const bool classes = std::string(l.target) == "class";
  auto dims = kit::variant_shape(r, 2, 2, 65);
  if (r.op == "kl_div" || classes) dims[1] = std::max<std::int64_t>(dims[1], 5);
  if (classes) dims[1] = std::min<std::int64_t>(dims[1], 32767);
  auto x = kit::named_shape(d, {"batch_size", classes ? "num_classes" : "dim"}, dims);
  const std::string dt = kit::torch_dtype(r.dtype);
  const double scale = 1.0 + r.rng.uniform();
  std::string target;
  d.inputs = {{"pred", dims, r.dtype}};
  if (classes) {
    target = "torch.randint(0, num_classes, (batch_size,))";
    d.inputs.push_back({"target", {dims[0]}, "int64"});
  } else {
    if (std::string(l.target) == "randn") target = kit::randn(x, r.dtype);
    else if (std::string(l.target) == "rand01") target = kit::rand(x, r.dtype);
    else target = "torch.randint(0, 2, (" + x.args() + ")).to(" + dt + ") * 2 - 1";
    d.inputs.push_back({"target", dims, r.dtype});
  }
  d.summary = r.op + " loss (mean) of pred (" + x.args() + ") against target, " + r.dtype;
  d.forward_params = "pred, target";
  d.forward_body = std::string("        return ") + l.reference + "\n";
  d.solution_forward_body = l.solution;
  d.inputs_body = "    pred = " + kit::randn(x, r.dtype) + " * " + kit::py_float(scale) + "\n    target = " + target +
                  "\n    return [pred, target]";
  d.init_inputs = "[]";
  d.output = {"out", {}, r.dtype};
  d.cost.flops = l.flops * static_cast<double>(x.numel());
  return d;
}

}  // namespace

KGYM_TASKGEN_FAMILY(loss) {
  Family f;
  f.name = "loss";
  f.description = "losses reduced to a scalar (MSE, L1, smooth L1, cross entropy, KL, BCE with logits, hinge)";
  f.level = 1;
  for (const auto& [name, l] : losses()) f.ops.push_back(name);
  f.transfer_ops = {"hinge"};
  f.variants = {Variant::full, Variant::small};
  f.dtypes = {"float32"};
  f.design = design;
  return f;
}
