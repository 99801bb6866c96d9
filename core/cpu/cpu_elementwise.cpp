// Elementwise kernels on whole tensors: the raw kernels (core/cpu/elementwise_kernels.h, where the
// derivatives are listed) over chunks of the tensor, split over the threads (for_each_chunk).
// Broadcasting binary ops index with broadcast strides.
#include <cmath>

#include "core/cpu/cpu_backend.h"
#include "core/cpu/elementwise_kernels.h"
#include "core/cpu/half_convert.h"
#include "core/random.h"

namespace normlab {

namespace {

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
  if (ta.shape() == tout.shape() && tb.shape() == tout.shape()) {
    for_each_chunk(n, kParallelElements,
                   [&](int64_t i, int64_t len) { elementwise::binary_kernel(op, a + i, b + i, out + i, len); });
    return;
  }
  auto run = [&](auto f) {
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
    const T* xp = x.data<T>();
    T* yp = y.data<T>();
    for_each_chunk(x.numel(), kParallelElements, [&](int64_t i, int64_t len) {
      elementwise::unary_kernel<T>(op, xp + i, yp + i, len, static_cast<T>(alpha));
    });
  });
}

void CpuBackend::unary_backward(UnaryOp op, const Tensor& x, const Tensor& y, const Tensor& dy,
                                Tensor& dx, double alpha) {
  dispatch_floating(dy.dtype(), "unary_backward", [&](auto t) {
    using T = decltype(t);
    const T* xp = x.defined() ? x.data<T>() : nullptr;
    const T* yp = y.defined() ? y.data<T>() : nullptr;
    const T* dyp = dy.data<T>();
    T* dxp = dx.data<T>();
    for_each_chunk(dy.numel(), kParallelElements, [&](int64_t i, int64_t len) {
      elementwise::unary_backward_kernel<T>(op, xp ? xp + i : nullptr, yp ? yp + i : nullptr, dyp + i, dxp + i,
                                            len, static_cast<T>(alpha));
    });
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
    for_each_chunk(y.numel(), kParallelElements, [&](int64_t i, int64_t len) {
      elementwise::axpy_kernel(static_cast<T>(alpha), xp + i, yp + i, len);
    });
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
