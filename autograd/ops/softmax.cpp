// Softmax over the last axis, plain and causal. Backward works row by row with y alone; the
// (C, C) Jacobian is never formed, so attention's (B, H, T, T) scores cost O(T^2) per row block.
//
// y_j = exp(x_j) / sum_k exp(x_k) per row (x (..., C)). The Jacobian is dy_j/dx_i = y_j ([i == j] - y_i),
// so with g = dL/dy:
//   dx_i = sum_j g_j y_j ([i == j] - y_i) = y_i (g_i - sum_j g_j y_j)        (saves y)
// Causal (x (..., T, T)): row i only sees columns j <= i; masked y_ij are exactly 0 and do not
// depend on x, so the same formula gives them dx = 0 (their y factor is 0), and the visible entries
// form an ordinary softmax whose dot product sum_j g_j y_j skips the masked columns (y = 0 there).
#include "autograd/ops.h"
#include "core/ops.h"

namespace normlab {

static Var softmax_op(const char* name, const Var& x, bool causal) {
  NL_CHECK(x.dim() >= 1, name, "needs at least a 1-d input, got shape {}", shape_str(x.shape()));
  if (causal)
    NL_CHECK(x.dim() >= 2 && x.size(-1) == x.size(-2), name, "expected (..., T, T), got {}",
             shape_str(x.shape()));
  Tensor y = ops::softmax(x.value(), causal);
  return record(name, {x}, y, [y](const Tensor& g) -> Grads { return {ops::softmax_backward(y, g)}; });
}

Var softmax(const Var& x) { return softmax_op("softmax", x, false); }
Var causal_softmax(const Var& x) { return softmax_op("causal_softmax", x, true); }

}  // namespace normlab
