// Softmax over the last axis, plain and causal (optionally windowed), of scale * x: attention's
// 1 / sqrt(D) and its mask live inside one kernel. Backward works row by row with y alone; the
// (C, C) Jacobian is never formed, so attention's (B, H, T, T) scores cost O(T^2) per row block.
//
// y_j = exp(s x_j) / sum_k exp(s x_k) per row (x (..., C), scale s). With z = s x the Jacobian is
// dy_j/dz_i = y_j ([i == j] - y_i), and dz_i/dx_i = s, so with g = dL/dy:
//   dx_i = s sum_j g_j y_j ([i == j] - y_i) = s y_i (g_i - sum_j g_j y_j)        (saves y)
// Causal (x (..., T, T)): row i only sees columns j <= i (with window W > 0: i - W <= j <= i);
// masked y_ij are exactly 0 and do not depend on x, so the same formula gives them dx = 0 (their y
// factor is 0), and the visible entries form an ordinary softmax whose dot product sum_j g_j y_j
// skips the masked columns (y = 0 there). docs/derivations.md, "Scaled, masked softmax".
// Under autocast the scores arrive in 16 bits; the kernel computes in float32 and rounds y once.
#include "autograd/ops.h"
#include "core/ops.h"

namespace normlab {

static Var softmax_op(const char* name, const Var& x, const SoftmaxArgs& args) {
  NL_CHECK(x.dim() >= 1, name, "needs at least a 1-d input, got shape {}", shape_str(x.shape()));
  if (args.causal)
    NL_CHECK(x.dim() >= 2 && x.size(-1) == x.size(-2), name, "expected (..., T, T), got {}",
             shape_str(x.shape()));
  Tensor y = ops::softmax(x.value(), args);
  const double s = args.scale;
  return record(name, {x}, y, [y, s](const Tensor& g) -> Grads { return {ops::softmax_backward(y, g, s)}; });
}

Var softmax(const Var& x) { return softmax_op("softmax", x, {}); }

Var causal_softmax(const Var& x, int64_t window, double scale) {
  const char* name = window > 0 ? "sliding_window_softmax" : "causal_softmax";
  return softmax_op(name, x, {.causal = true, .window = window, .scale = scale});
}

}  // namespace normlab
