// Softmax over the last axis of z = scale * x, max-subtracted for stability.
//   y_j = exp(z_j - max) / sum_k exp(z_k - max)   over the row's visible columns, 0 elsewhere
//   backward: dx_j = scale * y_j (dy_j - sum_k dy_k y_k)   (the Jacobian is never materialised)
// Causal (x (..., T, T)): row i sees columns lo .. i, lo = max(0, i - window) when window > 0 and 0
// otherwise. Attention's 1 / sqrt(D) is the scale: no separate pass over the (T, T) scores.
// bfloat16/float16 rows are read directly: each row is converted into a float32 row buffer, the
// float32 row kernel runs on it, and the result is rounded once on store. So a half result is
// bitwise the float32 kernel's on the converted input, rounded (as the staged kernels promise).
#include <algorithm>
#include <vector>

#include "core/cpu/cpu_backend.h"
#include "core/cpu/fast_math.h"
#include "core/cpu/half_convert.h"

namespace normlab {

namespace {

// One row of `cols`, visible columns [lo, hi): y = softmax(scale * x) there, 0 elsewhere.
// x and y may be the same buffer.
template <typename C> void softmax_row(const C* x, C* y, int64_t cols, int64_t lo, int64_t hi, C scale) {
  for (int64_t j = lo; j < hi; ++j) y[j] = x[j] * scale;
  C m = y[lo];
  for (int64_t j = lo + 1; j < hi; ++j) m = std::max(m, y[j]);
  for (int64_t j = lo; j < hi; ++j) y[j] = fast::exp(y[j] - m);
  C s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t j = lo; j < hi; ++j) s += y[j];
  const C inv = C(1) / s;
  for (int64_t j = lo; j < hi; ++j) y[j] *= inv;
  for (int64_t j = 0; j < lo; ++j) y[j] = C(0);
  for (int64_t j = hi; j < cols; ++j) y[j] = C(0);
}

// One row's backward: dx = scale * y (dy - y . dy). dx may be dy's buffer.
template <typename C> void softmax_backward_row(const C* y, const C* dy, C* dx, int64_t cols, C scale) {
  C dot = 0;
#pragma omp simd reduction(+ : dot)
  for (int64_t j = 0; j < cols; ++j) dot += dy[j] * y[j];
  for (int64_t j = 0; j < cols; ++j) dx[j] = y[j] * (dy[j] - dot) * scale;
}

// Row r's visible columns [lo, hi).
std::pair<int64_t, int64_t> visible_columns(const SoftmaxArgs& a, int64_t r, int64_t cols) {
  if (!a.causal) return {0, cols};
  const int64_t i = r % cols;  // the query position inside its (T, T) block
  return {a.window > 0 ? std::max<int64_t>(0, i - a.window) : 0, i + 1};
}

template <typename S> void softmax_rows(const SoftmaxArgs& a, const S* x, S* y, int64_t rows, int64_t cols) {
  using C = compute_t<S>;
  const C scale = C(a.scale);
#pragma omp parallel if (rows * cols > kParallelElements)
  {
    std::vector<C> buffer(is_half_v<S> ? static_cast<size_t>(cols) : 0);  // this thread's row
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const auto [lo, hi] = visible_columns(a, r, cols);
      if constexpr (is_half_v<S>) {
        to_float(x + r * cols, buffer.data(), cols);
        softmax_row(buffer.data(), buffer.data(), cols, lo, hi, scale);
        from_float(buffer.data(), y + r * cols, cols);
      } else {
        softmax_row(x + r * cols, y + r * cols, cols, lo, hi, scale);
      }
    }
  }
}

template <typename S>
void softmax_backward_rows(double scale_value, const S* y, const S* dy, S* dx, int64_t rows, int64_t cols) {
  using C = compute_t<S>;
  const C scale = C(scale_value);
#pragma omp parallel if (rows * cols > kParallelElements)
  {
    const size_t n = is_half_v<S> ? static_cast<size_t>(cols) : 0;
    std::vector<C> y_row(n), dy_row(n);  // this thread's rows
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      if constexpr (is_half_v<S>) {
        to_float(y + r * cols, y_row.data(), cols);
        to_float(dy + r * cols, dy_row.data(), cols);
        softmax_backward_row(y_row.data(), dy_row.data(), dy_row.data(), cols, scale);
        from_float(dy_row.data(), dx + r * cols, cols);
      } else {
        softmax_backward_row(y + r * cols, dy + r * cols, dx + r * cols, cols, scale);
      }
    }
  }
}

int64_t last_axis(const Tensor& x) { return x.dim() == 0 ? 1 : x.shape().back(); }

}  // namespace

void CpuBackend::softmax(const SoftmaxArgs& args, const Tensor& x, Tensor& y) {
  const int64_t cols = last_axis(x);
  const int64_t rows = x.numel() / std::max<int64_t>(cols, 1);
  NL_CHECK(!args.causal || (x.dim() >= 2 && x.shape()[x.dim() - 2] == cols), "causal_softmax",
           "expected (..., T, T), got {}", shape_str(x.shape()));
  dispatch_floating_or_half(x.dtype(), "softmax", [&](auto t) {
    using S = decltype(t);
    softmax_rows(args, x.data<S>(), y.data<S>(), rows, cols);
  });
}

void CpuBackend::softmax_backward(double scale, const Tensor& y, const Tensor& dy, Tensor& dx) {
  const int64_t cols = last_axis(y);
  const int64_t rows = y.numel() / std::max<int64_t>(cols, 1);
  dispatch_floating_or_half(y.dtype(), "softmax_backward", [&](auto t) {
    using S = decltype(t);
    softmax_backward_rows(scale, y.data<S>(), dy.data<S>(), dx.data<S>(), rows, cols);
  });
}

}  // namespace normlab
