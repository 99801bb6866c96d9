// Elementwise kernels on raw arrays, one call per contiguous run (a whole tensor or one chunk of it):
// no threads of their own, so the float32 kernels (cpu_elementwise.cpp) and the 16-bit ones
// (cpu_half_elementwise.cpp) split the work the same way (for_each_chunk, core/cpu/half_convert.h).
// Derivatives used by unary_backward (y = f(x)):
//   neg: -1   exp: y   log: 1/x   sqrt: 1/(2y)   square: 2x   tanh: 1 - y^2   relu: [x > 0]
//   gelu (tanh form, GPT-2): y = x/2 (1 + t), t = tanh(k (x + 0.044715 x^3)), k = sqrt(2/pi)
//        dy/dx = (1 + t)/2 + x/2 (1 - t^2) k (1 + 3 * 0.044715 x^2)
//   silu: y = x s, s = sigmoid(x);  dy/dx = s (1 + x (1 - s))
//   scale: alpha   add_scalar: 1
#pragma once
#include <cmath>
#include <cstdint>

#include "core/backend.h"
#include "core/cpu/fast_math.h"

namespace normlab::elementwise {

constexpr double kGeluK = 0.7978845608028654;  // sqrt(2/pi)
constexpr double kGeluC = 0.044715;

template <typename T>
inline void unary_kernel(UnaryOp op, const T* x, T* y, int64_t n, T alpha) {
  switch (op) {
    case UnaryOp::Neg: for (int64_t i = 0; i < n; ++i) y[i] = -x[i]; break;
    case UnaryOp::Exp: for (int64_t i = 0; i < n; ++i) y[i] = fast::exp(x[i]); break;
    case UnaryOp::Log: for (int64_t i = 0; i < n; ++i) y[i] = std::log(x[i]); break;
    case UnaryOp::Sqrt: for (int64_t i = 0; i < n; ++i) y[i] = std::sqrt(x[i]); break;
    case UnaryOp::Square: for (int64_t i = 0; i < n; ++i) y[i] = x[i] * x[i]; break;
    case UnaryOp::Tanh: for (int64_t i = 0; i < n; ++i) y[i] = fast::tanh(x[i]); break;
    case UnaryOp::Relu: for (int64_t i = 0; i < n; ++i) y[i] = x[i] > T(0) ? x[i] : T(0); break;
    case UnaryOp::Gelu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) {
        const T v = x[i];
        y[i] = T(0.5) * v * (T(1) + fast::tanh(T(kGeluK) * (v + T(kGeluC) * v * v * v)));
      }
      break;
    case UnaryOp::Silu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (T(1) + fast::exp(-x[i]));
      break;
    case UnaryOp::Scale: for (int64_t i = 0; i < n; ++i) y[i] = alpha * x[i]; break;
    case UnaryOp::AddScalar: for (int64_t i = 0; i < n; ++i) y[i] = x[i] + alpha; break;
  }
}

// Whether op's backward reads x, and y (unary_backward_kernel leaves the other untouched, so the
// 16-bit path need not convert it).
inline bool backward_reads_x(UnaryOp op) {
  return op == UnaryOp::Log || op == UnaryOp::Square || op == UnaryOp::Relu || op == UnaryOp::Gelu ||
         op == UnaryOp::Silu;
}
inline bool backward_reads_y(UnaryOp op) {
  return op == UnaryOp::Exp || op == UnaryOp::Sqrt || op == UnaryOp::Tanh;
}

template <typename T>
inline void unary_backward_kernel(UnaryOp op, const T* x, const T* y, const T* dy, T* dx, int64_t n,
                           T alpha) {
  switch (op) {
    case UnaryOp::Neg: for (int64_t i = 0; i < n; ++i) dx[i] = -dy[i]; break;
    case UnaryOp::Exp: for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] * y[i]; break;
    case UnaryOp::Log: for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] / x[i]; break;
    case UnaryOp::Sqrt: for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] / (T(2) * y[i]); break;
    case UnaryOp::Square: for (int64_t i = 0; i < n; ++i) dx[i] = T(2) * x[i] * dy[i]; break;
    case UnaryOp::Tanh: for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] * (T(1) - y[i] * y[i]); break;
    case UnaryOp::Relu: for (int64_t i = 0; i < n; ++i) dx[i] = x[i] > T(0) ? dy[i] : T(0); break;
    case UnaryOp::Gelu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) {
        const T v = x[i];
        const T t = fast::tanh(T(kGeluK) * (v + T(kGeluC) * v * v * v));
        const T dt = T(kGeluK) * (T(1) + T(3 * kGeluC) * v * v);
        dx[i] = dy[i] * (T(0.5) * (T(1) + t) + T(0.5) * v * (T(1) - t * t) * dt);
      }
      break;
    case UnaryOp::Silu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) {
        const T s = T(1) / (T(1) + fast::exp(-x[i]));
        dx[i] = dy[i] * s * (T(1) + x[i] * (T(1) - s));
      }
      break;
    case UnaryOp::Scale: for (int64_t i = 0; i < n; ++i) dx[i] = alpha * dy[i]; break;
    case UnaryOp::AddScalar: for (int64_t i = 0; i < n; ++i) dx[i] = dy[i]; break;
  }
}

// out = a (op) b over n elements.
template <typename T> inline void binary_kernel(BinaryOp op, const T* a, const T* b, T* out, int64_t n) {
  switch (op) {
    case BinaryOp::Add: for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i]; break;
    case BinaryOp::Sub: for (int64_t i = 0; i < n; ++i) out[i] = a[i] - b[i]; break;
    case BinaryOp::Mul: for (int64_t i = 0; i < n; ++i) out[i] = a[i] * b[i]; break;
    case BinaryOp::Div: for (int64_t i = 0; i < n; ++i) out[i] = a[i] / b[i]; break;
  }
}

// y += alpha x over n elements.
template <typename T> inline void axpy_kernel(T alpha, const T* x, T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

}  // namespace normlab::elementwise
