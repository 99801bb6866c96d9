#include "nn/norm_kinds.h"

#include <cmath>
#include <deque>

#include "autograd/norm_reference.h"
#include "autograd/ops.h"
#include "nn/runtime_table.h"

namespace normlab {

namespace {

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

namespace {

const NormParam kWeight{.name = "weight"};
const NormParam kZeroWeight{.name = "weight", .initial = 0.0};
const NormParam kBias{.name = "bias", .needs_bias = true, .initial = 0.0};

std::deque<NormKind> builtin_rows() {
  std::deque<NormKind> rows = {
      {.type = NormType::LayerNorm, .name = "layernorm", .formula = "(x - mean) / sqrt(var + eps) * weight + bias",
       .params = {kWeight, kBias}, .kept_row_statistics = 2,  // mean and rstd
       .composed = layer_norm_composed, .fused = layer_norm_fused},
      {.type = NormType::RmsNorm, .name = "rmsnorm", .formula = "x / sqrt(mean(x^2) + eps) * weight",
       .params = {kWeight}, .kept_row_statistics = 1, .composed = rms_norm_composed, .fused = rms_norm_fused},
      {.type = NormType::RmsNormUnitOffset, .name = "rmsnorm_unit_offset",
       .formula = "x / sqrt(mean(x^2) + eps) * (1 + weight)  (Gemma; weight stored 0)", .params = {kZeroWeight},
       .kept_row_statistics = 1, .composed = rms_norm_unit_offset_composed, .fused = rms_norm_unit_offset_fused},
      {.type = NormType::GroupNorm, .name = "groupnorm",
       .formula = "layernorm within model.norm_groups groups of channels, then weight, bias",
       .params = {kWeight, kBias}, .kept_row_statistics = 2, .grouped = true, .composed = group_norm_composed,
       .fused = group_norm_fused},
      {.type = NormType::BatchNorm, .name = "batchnorm",
       .formula = "per channel over all B*T rows (eval: running statistics), then weight, bias",
       .params = {kWeight, kBias}, .running_statistics = true, .composed = batch_norm_composed,
       .fused = batch_norm_fused},
      {.type = NormType::DynamicTanh, .name = "dyt",
       .formula = "tanh(alpha * x) * weight + bias  (Zhu et al. 2025; alpha one scalar, 0.5)",
       .params = {{.name = "alpha", .per_channel = false, .initial = 0.5}, kWeight, kBias},
       .kept_tensors = 4,  // alpha x, its tanh, the scaled tanh, the output
       .composed = dynamic_tanh},
      {.type = NormType::None, .name = "none", .formula = "identity", .kept_tensors = 0, .composed = identity},
  };
  for (size_t i = 0; i < rows.size(); ++i)
    NL_CHECK(static_cast<size_t>(rows[i].type) == i, "norm", "row {} ('{}') is out of NormType order", i, rows[i].name);
  return rows;
}

using NormTable = RuntimeTable<NormKind, NormType, &NormKind::type>;

NormTable& table() {
  static NormTable t(builtin_rows());
  return t;
}

}  // namespace

std::vector<const NormKind*> norm_kinds() { return table().rows(); }

const NormKind& norm_kind(NormType type) {
  const NormKind* row = table().at(type);
  NL_CHECK(row != nullptr, "norm", "no row for norm type {} in the norm table", static_cast<int>(type));
  return *row;
}

std::optional<NormType> find_norm_kind(std::string_view name) { return table().find(name); }

std::vector<NamedValue<NormType>> EnumNames<NormType>::runtime_values() { return table().names(); }

NormType register_norm_kind(NormKind kind) {
  NL_CHECK(!kind.name.empty() && kind.name.find_first_of(" \t\"'=,") == std::string::npos, "register_norm",
           "a norm's name must be a non-empty word, got '{}'", kind.name);
  NL_CHECK(kind.composed != nullptr, "register_norm", "norm '{}' needs a forward", kind.name);
  NL_CHECK(!kind.running_statistics && !kind.fused, "register_norm",
           "norm '{}': running statistics and fused ops are for built-in rows", kind.name);
  for (size_t i = 0; i < kind.params.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      NL_CHECK(kind.params[i].name != kind.params[j].name, "register_norm", "norm '{}' names parameter '{}' twice",
               kind.name, kind.params[i].name);
  return table().add(std::move(kind), "register_norm", "norm");
}

std::vector<NormParam> norm_params(const ModelConfig& config) {
  std::vector<NormParam> out;
  for (const NormParam& p : norm_kind(config.norm_type).params)
    if (!p.needs_bias || config.bias) out.push_back(p);
  return out;
}

}  // namespace normlab
