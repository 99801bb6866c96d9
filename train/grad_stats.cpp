#include "train/grad_stats.h"

#include <cmath>

#include "core/ops.h"

namespace normlab {

std::optional<LayerKey> layer_key_of(const ParamRole& role) {
  if (role.layer < 0) return std::nullopt;
  return LayerKey{static_cast<int>(role.stack), role.layer};
}

std::vector<ParamGradNorm> parameter_grad_norms(const std::vector<std::pair<std::string, Var>>& params) {
  std::vector<ParamGradNorm> out;
  out.reserve(params.size());
  for (const auto& [name, p] : params)
    out.push_back({name, p.grad().defined() ? std::sqrt(ops::sum_squares(p.grad())) : 0.0, layer_key_of(p.role())});
  return out;
}

}  // namespace normlab
