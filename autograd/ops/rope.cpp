// Rotary position embedding (RoFormer; Hugging Face's "rotate-half" layout, as Llama, Mistral and
// Gemma use it). For x (..., T, D), D even, split each row in halves x = [x1, x2] (D/2 each):
//   rotate_half(x) = [-x2, x1]                     (a fixed linear map R with R^T = -R)
//   y = x * cos + rotate_half(x) * sin             cos, sin (T, D) broadcast over the leading axes
// so pairs (x1_i, x2_i) turn by the angle t * inv_freq_i of position t. The tables are constants.
// y = C x + S R x (C, S diagonal per position) gives dL/dx = C g + R^T S g = g * cos - rotate_half(g * sin).
#include <cmath>
#include <vector>

#include "autograd/ops.h"
#include "core/ops.h"

namespace normlab {

namespace {

// [-x2, x1] from x = [x1, x2] along the last axis.
Tensor rotate_half(const Tensor& x) {
  const int64_t d = x.size(-1), h = d / 2;
  return ops::add(ops::pad_last(ops::neg(ops::narrow_last(x, h, h)), 0, d),
                  ops::pad_last(ops::narrow_last(x, 0, h), h, d));
}

// The angles in the working precision, as Hugging Face 4.40 computes them: in float32 for a float32
// model (inv_freq, position * inv_freq and cos/sin all float32), in float64 for a float64 one.
template <typename T>
void fill_tables(int64_t positions, int64_t head_dim, double theta, std::vector<double>& cos_v,
                 std::vector<double>& sin_v) {
  const int64_t half = head_dim / 2;
  for (int64_t t = 0; t < positions; ++t) {
    for (int64_t i = 0; i < half; ++i) {
      const T exponent = static_cast<T>(2 * i) / static_cast<T>(head_dim);
      const T inv_freq = T(1) / static_cast<T>(std::pow(static_cast<T>(theta), exponent));
      const T angle = static_cast<T>(t) * inv_freq;
      const T c = static_cast<T>(std::cos(angle)), s = static_cast<T>(std::sin(angle));
      for (int64_t copy : {i, i + half}) {  // both halves share the angle
        cos_v[static_cast<size_t>(t * head_dim + copy)] = c;
        sin_v[static_cast<size_t>(t * head_dim + copy)] = s;
      }
    }
  }
}

}  // namespace

RopeTables rope_tables(int64_t positions, int64_t head_dim, double theta, DType dtype) {
  NL_CHECK(positions > 0 && head_dim > 0 && head_dim % 2 == 0, "rope",
           "needs positions > 0 and an even head_dim > 0, got positions {}, head_dim {}", positions, head_dim);
  NL_CHECK(theta > 0, "rope", "theta must be > 0, got {}", theta);
  const size_t n = static_cast<size_t>(positions * head_dim);
  std::vector<double> cos_v(n), sin_v(n);
  if (dtype == DType::F64) fill_tables<double>(positions, head_dim, theta, cos_v, sin_v);
  else fill_tables<float>(positions, head_dim, theta, cos_v, sin_v);
  return {Tensor::from_vector(cos_v, {positions, head_dim}, dtype),
          Tensor::from_vector(sin_v, {positions, head_dim}, dtype)};
}

// y = x * cos + rotate_half(x) * sin          dx = g * cos - rotate_half(g * sin)   (saves cos, sin)
Var rope(const Var& x, const Tensor& cos, const Tensor& sin) {
  NL_CHECK(x.dim() >= 2 && x.size(-1) % 2 == 0, "rope", "expected x (..., T, D) with D even, got {}",
           shape_str(x.shape()));
  const Shape table{x.size(-2), x.size(-1)};
  NL_CHECK(cos.shape() == table && sin.shape() == table, "rope", "cos {} and sin {} must be (T, D) = {} for x {}",
           shape_str(cos.shape()), shape_str(sin.shape()), shape_str(table), shape_str(x.shape()));
  const Tensor c = cos.to(x.value().dtype()).to(x.value().device());
  const Tensor s = sin.to(x.value().dtype()).to(x.value().device());
  Tensor y = ops::add(ops::mul(x.value(), c), ops::mul(rotate_half(x.value()), s));
  return record("rope", {x}, y, [c, s](const Tensor& g) -> Grads {
    return {ops::sub(ops::mul(g, c), rotate_half(ops::mul(g, s)))};
  });
}

}  // namespace normlab
