#include "nn/norm_kinds.h"

#include <cmath>

#include "autograd/norm_reference.h"
#include "autograd/ops.h"

namespace normlab {

namespace {

double one(int64_t) { return 1.0; }
double zero(int64_t) { return 0.0; }

// Composed forms of the norms with a fused op: the textbook formulas of autograd/norm_reference.h.
Var layer_norm_composed(const Var& x, const NormCall& c) {
  return reference::layer_norm(x, c.param("weight"), c.param("bias"), c.eps);
}
Var rms_norm_composed(const Var& x, const NormCall& c) { return reference::rms_norm(x, c.param("weight"), c.eps); }
Var rms_norm_unit_offset_composed(const Var& x, const NormCall& c) {
  return reference::rms_norm(x, c.param("weight"), c.eps, true);
}
Var group_norm_composed(const Var& x, const NormCall& c) {
  return reference::group_norm(x, c.param("weight"), c.param("bias"), c.groups, c.eps);
}
// Training mode: batch statistics (the running statistics are the fused op's business). Eval:
// y = (x - running_mean) / sqrt(running_var + eps) * gamma + beta.
Var batch_norm_composed(const Var& x, const NormCall& c) {
  if (c.training) return reference::batch_norm(x, c.param("weight"), c.param("bias"), c.eps);
  const Var xhat = div(sub(x, constant(c.running_mean)), sqrt(add_scalar(constant(c.running_var), c.eps)));
  const Var scaled = c.param("weight").defined() ? mul(xhat, c.param("weight")) : xhat;
  return c.param("bias").defined() ? add(scaled, c.param("bias")) : scaled;
}

Var layer_norm_fused(const Var& x, const NormCall& c) { return layer_norm(x, c.param("weight"), c.param("bias"), c.eps); }
Var rms_norm_fused(const Var& x, const NormCall& c) { return rms_norm(x, c.param("weight"), c.eps, false); }
Var rms_norm_unit_offset_fused(const Var& x, const NormCall& c) { return rms_norm(x, c.param("weight"), c.eps, true); }
Var group_norm_fused(const Var& x, const NormCall& c) {
  return group_norm(x, c.param("weight"), c.param("bias"), c.groups, c.eps);
}
Var batch_norm_fused(const Var& x, const NormCall& c) {
  return batch_norm(x, c.param("weight"), c.param("bias"), c.running_mean, c.running_var, c.training, 0.1, c.eps);
}

Var identity(const Var& x, const NormCall&) { return x; }

// Dynamic Tanh (Zhu et al. 2025, "Transformers without Normalization"): y = gamma * tanh(alpha x) + beta,
// alpha one learnable scalar (initialised 0.5, the paper's alpha_0 outside LLMs), gamma and beta
// per channel. No statistics: it replaces the norm, not its affine.
Var dynamic_tanh(const Var& x, const NormCall& c) {
  const Var y = mul(tanh(mul(x, c.param("alpha"))), c.param("weight"));
  return c.param("bias").defined() ? add(y, c.param("bias")) : y;
}

}  // namespace

Var NormCall::param(std::string_view name) const {
  for (const auto& [n, v] : params)
    if (n == name) return v;
  return Var();
}

const std::vector<NormKind>& norm_kinds() {
  static const std::vector<NormKind> kinds = {
      {NormType::LayerNorm, "(x - mean) / sqrt(var + eps) * weight + bias",
       {{"weight", true, false, one}, {"bias", true, true, zero}}, 1, 2, false, layer_norm_composed, layer_norm_fused},
      {NormType::RmsNorm, "x / sqrt(mean(x^2) + eps) * weight", {{"weight", true, false, one}}, 1, 1, false,
       rms_norm_composed, rms_norm_fused},
      {NormType::RmsNormUnitOffset, "x / sqrt(mean(x^2) + eps) * (1 + weight)  (Gemma; weight stored 0)",
       {{"weight", true, false, zero}}, 1, 1, false, rms_norm_unit_offset_composed, rms_norm_unit_offset_fused},
      {NormType::GroupNorm, "layernorm within model.norm_groups groups of channels, then weight, bias",
       {{"weight", true, false, one}, {"bias", true, true, zero}}, 1, 2, false, group_norm_composed, group_norm_fused},
      {NormType::BatchNorm, "per channel over all B*T rows (eval: running statistics), then weight, bias",
       {{"weight", true, false, one}, {"bias", true, true, zero}}, 1, 0, true, batch_norm_composed, batch_norm_fused},
      {NormType::DynamicTanh, "tanh(alpha * x) * weight + bias  (Zhu et al. 2025; alpha one scalar, 0.5)",
       {{"alpha", false, false, [](int64_t) { return 0.5; }}, {"weight", true, false, one}, {"bias", true, true, zero}},
       4, 0, false, dynamic_tanh, nullptr},
      {NormType::None, "identity", {}, 0, 0, false, identity, nullptr},
  };
  return kinds;
}

const NormKind& norm_kind(NormType type) {
  for (const NormKind& k : norm_kinds())
    if (k.type == type) return k;
  fail("norm", "no row for norm type {} in nn/norm_kinds.cpp", static_cast<int>(type));
}

std::vector<NormParam> norm_params(const ModelConfig& config) {
  std::vector<NormParam> out;
  for (const NormParam& p : norm_kind(config.norm_type).params)
    if (!p.needs_bias || config.bias) out.push_back(p);
  return out;
}

}  // namespace normlab
