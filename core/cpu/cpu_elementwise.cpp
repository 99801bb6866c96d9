// Elementwise kernels. Derivatives used by unary_backward (y = f(x)):
//   neg: -1   exp: y   log: 1/x   sqrt: 1/(2y)   square: 2x   tanh: 1 - y^2   relu: [x > 0]
//   gelu (tanh form, GPT-2): y = x/2 (1 + t), t = tanh(k (x + 0.044715 x^3)), k = sqrt(2/pi)
//        dy/dx = (1 + t)/2 + x/2 (1 - t^2) k (1 + 3 * 0.044715 x^2)
//   silu: y = x s, s = sigmoid(x);  dy/dx = s (1 + x (1 - s))
//   scale: alpha   add_scalar: 1
#include <cmath>

#include "core/cpu/cpu_backend.h"
#include "core/cpu/fast_math.h"
#include "core/random.h"

namespace normlab {

namespace {

constexpr double kGeluK = 0.7978845608028654;  // sqrt(2/pi)
constexpr double kGeluC = 0.044715;

template <typename T>
void unary_kernel(UnaryOp op, const T* x, T* y, int64_t n, T alpha) {
  switch (op) {
    case UnaryOp::Neg: for (int64_t i = 0; i < n; ++i) y[i] = -x[i]; break;
    case UnaryOp::Exp: for (int64_t i = 0; i < n; ++i) y[i] = fast::exp(x[i]); break;
    case UnaryOp::Log: for (int64_t i = 0; i < n; ++i) y[i] = std::log(x[i]); break;
    case UnaryOp::Sqrt: for (int64_t i = 0; i < n; ++i) y[i] = std::sqrt(x[i]); break;
    case UnaryOp::Square: for (int64_t i = 0; i < n; ++i) y[i] = x[i] * x[i]; break;
    case UnaryOp::Tanh: for (int64_t i = 0; i < n; ++i) y[i] = fast::tanh(x[i]); break;
    case UnaryOp::Relu: for (int64_t i = 0; i < n; ++i) y[i] = x[i] > T(0) ? x[i] : T(0); break;
    case UnaryOp::Gelu:
#pragma omp parallel for simd if (n > kParallelElements)
      for (int64_t i = 0; i < n; ++i) {
        const T v = x[i];
        y[i] = T(0.5) * v * (T(1) + fast::tanh(T(kGeluK) * (v + T(kGeluC) * v * v * v)));
      }
      break;
    case UnaryOp::Silu:
#pragma omp parallel for simd if (n > kParallelElements)
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (T(1) + fast::exp(-x[i]));
      break;
    case UnaryOp::Scale: for (int64_t i = 0; i < n; ++i) y[i] = alpha * x[i]; break;
    case UnaryOp::AddScalar: for (int64_t i = 0; i < n; ++i) y[i] = x[i] + alpha; break;
  }
}

template <typename T>
void unary_backward_kernel(UnaryOp op, const T* x, const T* y, const T* dy, T* dx, int64_t n,
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
#pragma omp parallel for simd if (n > kParallelElements)
      for (int64_t i = 0; i < n; ++i) {
        const T v = x[i];
        const T t = fast::tanh(T(kGeluK) * (v + T(kGeluC) * v * v * v));
        const T dt = T(kGeluK) * (T(1) + T(3 * kGeluC) * v * v);
        dx[i] = dy[i] * (T(0.5) * (T(1) + t) + T(0.5) * v * (T(1) - t * t) * dt);
      }
      break;
    case UnaryOp::Silu:
#pragma omp parallel for simd if (n > kParallelElements)
      for (int64_t i = 0; i < n; ++i) {
        const T s = T(1) / (T(1) + fast::exp(-x[i]));
        dx[i] = dy[i] * s * (T(1) + x[i] * (T(1) - s));
      }
      break;
    case UnaryOp::Scale: for (int64_t i = 0; i < n; ++i) dx[i] = alpha * dy[i]; break;
    case UnaryOp::AddScalar: for (int64_t i = 0; i < n; ++i) dx[i] = dy[i]; break;
  }
}

template <typename T>
inline T apply(BinaryOp op, T a, T b) {
  switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div: return a / b;
  }
  return T(0);
}

template <typename T, typename Op>
void binary_same(const T* a, const T* b, T* out, int64_t n, Op f) {
#pragma omp parallel for if (n > kParallelElements)
  for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
}

// Strides of `t` when broadcast to `out` (0 on broadcast axes), aligned to out's rank.
Shape broadcast_strides(const Tensor& t, const Shape& out) {
  const size_t nd = out.size(), off = nd - t.shape().size();
  Shape strides(nd, 0);
  const Shape own = contiguous_strides(t.shape());
  for (size_t i = off; i < nd; ++i) strides[i] = t.shape()[i - off] == 1 ? 0 : own[i - off];
  return strides;
}

template <typename T>
void binary_kernel(BinaryOp op, const Tensor& ta, const Tensor& tb, Tensor& tout) {
  const T* a = ta.data<T>();
  const T* b = tb.data<T>();
  T* out = tout.data<T>();
  const int64_t n = tout.numel();
  auto run = [&](auto f) {
    if (ta.shape() == tout.shape() && tb.shape() == tout.shape()) return binary_same(a, b, out, n, f);
    const int64_t na = ta.numel(), nb = tb.numel();
    // Common fast path: b is a trailing block repeated over rows (bias add, per-channel scale).
    const bool b_suffix = ta.shape() == tout.shape() && nb > 0 && n % nb == 0 &&
                          std::equal(tb.shape().rbegin(), tb.shape().rend(), tout.shape().rbegin());
    if (b_suffix) {
      const int64_t rows = n / nb;
#pragma omp parallel for if (n > kParallelElements)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < nb; ++j) out[r * nb + j] = f(a[r * nb + j], b[j]);
      return;
    }
    if (na == 1 && tb.shape() == tout.shape()) {
      for (int64_t i = 0; i < n; ++i) out[i] = f(a[0], b[i]);
      return;
    }
    // General path: walk out's multi-index with broadcast strides for a and b.
    const Shape& shape = tout.shape();
    const int nd = static_cast<int>(shape.size());
    const Shape sa = broadcast_strides(ta, shape), sb = broadcast_strides(tb, shape);
    std::vector<int64_t> idx(nd, 0);
    int64_t oa = 0, ob = 0;
    for (int64_t i = 0; i < n; ++i) {
      out[i] = f(a[oa], b[ob]);
      for (int d = nd - 1; d >= 0; --d) {
        oa += sa[d];
        ob += sb[d];
        if (++idx[d] < shape[d]) break;
        oa -= sa[d] * shape[d];
        ob -= sb[d] * shape[d];
        idx[d] = 0;
      }
    }
  };
  switch (op) {
    case BinaryOp::Add: run([](T x, T y) { return x + y; }); break;
    case BinaryOp::Sub: run([](T x, T y) { return x - y; }); break;
    case BinaryOp::Mul: run([](T x, T y) { return x * y; }); break;
    case BinaryOp::Div: run([](T x, T y) { return x / y; }); break;
  }
}

}  // namespace

void CpuBackend::unary(UnaryOp op, const Tensor& x, Tensor& y, double alpha) {
  dispatch_floating(x.dtype(), "unary", [&](auto t) {
    using T = decltype(t);
    unary_kernel<T>(op, x.data<T>(), y.data<T>(), x.numel(), static_cast<T>(alpha));
  });
}

void CpuBackend::unary_backward(UnaryOp op, const Tensor& x, const Tensor& y, const Tensor& dy,
                                Tensor& dx, double alpha) {
  dispatch_floating(dy.dtype(), "unary_backward", [&](auto t) {
    using T = decltype(t);
    const T* xp = x.defined() ? x.data<T>() : nullptr;
    const T* yp = y.defined() ? y.data<T>() : nullptr;
    unary_backward_kernel<T>(op, xp, yp, dy.data<T>(), dx.data<T>(), dy.numel(),
                             static_cast<T>(alpha));
  });
}

void CpuBackend::binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) {
  dispatch_floating(out.dtype(), "binary", [&](auto t) { binary_kernel<decltype(t)>(op, a, b, out); });
}

void CpuBackend::axpy(double alpha, const Tensor& x, Tensor& y) {
  dispatch_floating(y.dtype(), "axpy", [&](auto t) {
    using T = decltype(t);
    const T* xp = x.data<T>();
    T* yp = y.data<T>();
    const int64_t n = y.numel();
    const T a = static_cast<T>(alpha);
#pragma omp parallel for if (n > kParallelElements)
    for (int64_t i = 0; i < n; ++i) yp[i] += a * xp[i];
  });
}

void CpuBackend::dropout_mask(uint64_t seed, double p, Tensor& mask) {
  dispatch_floating(mask.dtype(), "dropout", [&](auto t) {
    using T = decltype(t);
    T* m = mask.data<T>();
    const T keep_scale = static_cast<T>(1.0 / (1.0 - p));
    const int64_t n = mask.numel();
    for (int64_t i = 0; i < n; ++i)
      m[i] = counter_uniform(seed, static_cast<uint64_t>(i)) >= p ? keep_scale : T(0);
  });
}

}  // namespace normlab
