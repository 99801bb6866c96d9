// Global gradient-norm clipping (Pascanu et al. 2013):
//   norm = sqrt(sum over every defined gradient g of sum(g^2))
//   if max_norm > 0 and norm > max_norm:  g *= max_norm / norm   (in place, every gradient)
// Returns the norm measured before clipping. A non-finite norm is returned without scaling
// (scaling by 0 or NaN would hide the blow-up the caller should see and log).
// Value clipping: g_i = clamp(g_i, -v, v), element by element.
#include <cmath>

#include "autograd/tape.h"
#include "core/ops.h"
#include "core/profiler.h"
#include "optim/optimizer.h"

namespace normlab {

double clip_grad_norm(const std::vector<Var>& params, double max_norm) {
  ProfileScope scope(OpFamily::Optimizer);
  NL_CHECK(max_norm >= 0.0, "clip_grad_norm", "max_norm must be >= 0 (0 = off), got {}", max_norm);
  double sum_sq = 0.0;
  for (const Var& param : params) {
    if (param.defined() && param.grad().defined()) sum_sq += ops::sum_squares(param.grad());
  }
  const double norm = std::sqrt(sum_sq);
  if (max_norm > 0.0 && std::isfinite(norm) && norm > max_norm) {
    NoGradGuard no_grad;
    const double factor = max_norm / norm;
    for (const Var& param : params) {
      if (!param.defined() || !param.grad().defined()) continue;
      Var handle = param;  // Var is a handle: this scales the parameter's own gradient
      Tensor grad = handle.grad();
      if (grad.is_contiguous()) ops::scale_(grad, factor);
      else grad.copy_(ops::scale(grad, factor));
    }
  }
  return norm;
}

// Through the host: an intervention for small models, not a hot path (a GPU gradient makes a
// round trip only when some element is out of range).
int64_t clip_grad_value(const std::vector<Var>& params, double max_value) {
  ProfileScope scope(OpFamily::Optimizer);
  NL_CHECK(max_value > 0.0, "clip_grad_value", "max_value must be > 0, got {}", max_value);
  int64_t changed = 0;
  for (const Var& param : params) {
    if (!param.defined() || !param.grad().defined()) continue;
    Var handle = param;
    Tensor grad = handle.grad();
    std::vector<double> values = grad.to_vector();
    int64_t here = 0;
    for (double& v : values)
      if (std::isfinite(v) && std::abs(v) > max_value) v = std::copysign(max_value, v), ++here;
    if (here == 0) continue;
    grad.copy_(Tensor::from_vector(values, grad.shape(), grad.dtype()).to(grad.device()));
    changed += here;
  }
  return changed;
}

}  // namespace normlab
