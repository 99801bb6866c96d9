#include "train/grad_stats.h"

#include <cmath>

#include "core/ops.h"

namespace normlab {

std::vector<std::pair<std::string, double>> parameter_grad_norms(
    const std::vector<std::pair<std::string, Var>>& params) {
  std::vector<std::pair<std::string, double>> out;
  out.reserve(params.size());
  for (const auto& [name, p] : params)
    out.emplace_back(name, p.grad().defined() ? std::sqrt(ops::sum_squares(p.grad())) : 0.0);
  return out;
}

}  // namespace normlab
