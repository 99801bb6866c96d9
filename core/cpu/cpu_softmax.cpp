// Softmax over the last axis, max-subtracted for stability.
//   y_j = exp(x_j - max) / sum_k exp(x_k - max)
//   backward: dx_j = y_j (dy_j - sum_k dy_k y_k)   (the Jacobian is never materialised)
// Causal: for x of shape (..., T, T), row i keeps columns j <= i; masked entries are exactly 0.
#include <cmath>

#include "core/cpu/cpu_backend.h"
#include "core/cpu/fast_math.h"

namespace normlab {

void CpuBackend::softmax(const Tensor& x, Tensor& y, bool causal) {
  const int64_t cols = x.dim() == 0 ? 1 : x.shape().back();
  const int64_t rows = x.numel() / std::max<int64_t>(cols, 1);
  NL_CHECK(!causal || (x.dim() >= 2 && x.shape()[x.dim() - 2] == cols), "causal_softmax",
           "expected (..., T, T), got {}", shape_str(x.shape()));
  dispatch_floating(x.dtype(), "softmax", [&](auto t) {
    using T = decltype(t);
    const T* xp = x.data<T>();
    T* yp = y.data<T>();
#pragma omp parallel for if (x.numel() > kParallelElements)
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = xp + r * cols;
      T* yr = yp + r * cols;
      const int64_t valid = causal ? (r % cols) + 1 : cols;
      T m = xr[0];
      for (int64_t j = 1; j < valid; ++j) m = std::max(m, xr[j]);
      for (int64_t j = 0; j < valid; ++j) yr[j] = fast::exp(xr[j] - m);
      T s = 0;
#pragma omp simd reduction(+ : s)
      for (int64_t j = 0; j < valid; ++j) s += yr[j];
      const T inv = T(1) / s;
      for (int64_t j = 0; j < valid; ++j) yr[j] *= inv;
      for (int64_t j = valid; j < cols; ++j) yr[j] = T(0);
    }
  });
}

void CpuBackend::softmax_backward(const Tensor& y, const Tensor& dy, Tensor& dx) {
  const int64_t cols = y.dim() == 0 ? 1 : y.shape().back();
  const int64_t rows = y.numel() / std::max<int64_t>(cols, 1);
  dispatch_floating(y.dtype(), "softmax_backward", [&](auto t) {
    using T = decltype(t);
    const T* yp = y.data<T>();
    const T* dyp = dy.data<T>();
    T* dxp = dx.data<T>();
#pragma omp parallel for if (y.numel() > kParallelElements)
    for (int64_t r = 0; r < rows; ++r) {
      const T* yr = yp + r * cols;
      const T* dyr = dyp + r * cols;
      T* dxr = dxp + r * cols;
      T dot = 0;
#pragma omp simd reduction(+ : dot)
      for (int64_t j = 0; j < cols; ++j) dot += dyr[j] * yr[j];
      for (int64_t j = 0; j < cols; ++j) dxr[j] = yr[j] * (dyr[j] - dot);
    }
  });
}

}  // namespace normlab
