// Softmax over the last axis, plain and causal. Backward works row by row with y alone; the
// (C, C) Jacobian is never formed, so attention's (B, H, T, T) scores cost O(T^2) per row block.
//
// y_j = exp(x_j) / sum_k exp(x_k) per row (x (..., C)). The Jacobian is dy_j/dx_i = y_j ([i == j] - y_i),
// so with g = dL/dy:
//   dx_i = sum_j g_j y_j ([i == j] - y_i) = y_i (g_i - sum_j g_j y_j)        (saves y)
// Causal (x (..., T, T)): row i only sees columns j <= i; masked y_ij are exactly 0 and do not
// depend on x, so the same formula gives them dx = 0 (their y factor is 0), and the visible entries
// form an ordinary softmax whose dot product sum_j g_j y_j skips the masked columns (y = 0 there).
// Sliding window (x (..., T, T), window W > 0): row i sees columns i - W <= j <= i. Forward adds a
// constant mask (0 inside the window, -inf outside) before the causal softmax and multiplies the
// result by the 0/1 window so that masked entries are exactly 0; the visible entries are an ordinary
// softmax of their row, so dx = y (g - sum_j g_j y_j) again, 0 outside the window.
#include <cmath>
#include <limits>
#include <vector>

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

Var causal_softmax(const Var& x, int64_t window) {
  NL_CHECK(window >= 0, "sliding_window_softmax", "window must be >= 0, got {}", window);
  if (window == 0) return causal_softmax(x);
  NL_CHECK(x.dim() >= 2 && x.size(-1) == x.size(-2), "sliding_window_softmax", "expected (..., T, T), got {}",
           shape_str(x.shape()));
  const int64_t t = x.size(-1);
  std::vector<double> additive(static_cast<size_t>(t * t)), keep(static_cast<size_t>(t * t));
  for (int64_t i = 0; i < t; ++i) {
    for (int64_t j = 0; j < t; ++j) {
      const bool visible = j <= i && j >= i - window;
      additive[static_cast<size_t>(i * t + j)] = visible ? 0.0 : -std::numeric_limits<double>::infinity();
      keep[static_cast<size_t>(i * t + j)] = visible ? 1.0 : 0.0;
    }
  }
  const DType dtype = x.value().dtype();
  const Device device = x.value().device();
  const Tensor mask = Tensor::from_vector(additive, {t, t}, dtype).to(device);
  const Tensor window_01 = Tensor::from_vector(keep, {t, t}, dtype).to(device);
  Tensor y = ops::mul(ops::softmax(ops::add(x.value(), mask), true), window_01);
  return record("sliding_window_softmax", {x}, y,
                [y](const Tensor& g) -> Grads { return {ops::softmax_backward(y, g)}; });
}

}  // namespace normlab
