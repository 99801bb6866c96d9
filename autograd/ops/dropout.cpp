// Inverted dropout: y = x * m, m_i = [u_i >= p] / (1 - p), u_i = counter_uniform(seed, i).
// The mask depends only on (seed, element index), so the same seed gives the same mask on every
// run and device, and E[y] = x. m does not depend on x:   dx = g * m   (saves m).
// Identity (no node, no mask) when !training or p == 0.
#include "autograd/ops.h"
#include "core/ops.h"

namespace normlab {

Var dropout(const Var& x, double p, uint64_t seed, bool training) {
  NL_CHECK(p >= 0.0 && p < 1.0, "dropout", "p must be in [0, 1), got {}", p);
  check_floating(x.value(), "dropout", "x");
  if (!training || p == 0.0) return x;
  Tensor mask = Tensor::empty(x.shape(), x.dtype(), x.value().device());
  backend_for(mask.device()).dropout_mask(seed, p, mask);
  Tensor y = ops::mul(x.value(), mask);
  return record("dropout", {x}, y, [mask](const Tensor& g) -> Grads { return {ops::mul(g, mask)}; });
}

}  // namespace normlab
