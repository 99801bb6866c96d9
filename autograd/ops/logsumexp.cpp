// logsumexp over the last axis: softmax's log normalizer (the z-loss of nn/transformer.h squares it).
#include "autograd/ops.h"
#include "core/ops.h"

namespace normlab {

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
