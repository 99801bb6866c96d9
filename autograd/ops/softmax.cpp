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
//
// logsumexp, softmax's log normalizer, lives here too (below).
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

// y = log sum_j exp(x_j) over the last axis, x (..., V) -> y (...), computed as
//   m = max_j x_j,   y = m + log sum_j exp(x_j - m)
// Every exp argument is <= 0 (no overflow: x = (1000, 1001) gives y = 1001.3133, where exp(1000)
// is inf even in float64) and the largest term is exp(0) = 1, so the sum lies in [1, V] and its log
// is finite. dy/dx_j = exp(x_j - y) = softmax(x)_j, so with g = dL/dy (...):
//   dx = g[..., None] * exp(x - y[..., None])          (..., V)   (saves x and y; no (V, V) Jacobian)
// Composed of backend kernels (max, sub, exp, sum, log), so it runs on every device and dtype they
// do; 16-bit x is computed in float32 (as cross_entropy's lse) and y, dx are rounded once. A row that
// is all -inf (or holds +inf or NaN) gives NaN. docs/derivations.md, "logsumexp and the z-loss".
Var logsumexp(const Var& x) {
  check_floating(x.value(), "logsumexp", "x");
  NL_CHECK(x.dim() >= 1 && x.size(-1) >= 1, "logsumexp", "needs x (..., V) with V >= 1, got {}",
           shape_str(x.shape()));
  const DType dtype = x.value().dtype();
  const DType compute = is_half(dtype) ? DType::F32 : dtype;
  const int last = static_cast<int>(x.dim()) - 1;
  const Tensor xc = x.value().to(compute);                                               // (..., V)
  const Tensor m = ops::reduce(ReduceOp::Max, xc, last, true);                           // (..., 1)
  const Tensor sum = ops::reduce(ReduceOp::Sum, ops::unary(UnaryOp::Exp, ops::sub(xc, m)), last, true);
  const Tensor lse = ops::add(ops::unary(UnaryOp::Log, sum), m);                         // (..., 1)
  const Shape lead(x.shape().begin(), x.shape().end() - 1);
  const Tensor xv = x.value();
  return record("logsumexp", {x}, lse.reshape(lead).to(dtype), [xv, lse, compute](const Tensor& g) -> Grads {
    const Tensor probs = ops::unary(UnaryOp::Exp, ops::sub(xv.to(compute), lse));  // softmax(x) (..., V)
    const Tensor dx = ops::mul(probs, g.to(compute).reshape(lse.shape()));        // (..., V) * (..., 1)
    return {dx.to(xv.dtype())};
  });
}

}  // namespace normlab
