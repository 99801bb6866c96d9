// BatchNorm kernels: statistics per channel over all rows (training mode), forward and backward.
// Notation and derivation: docs/derivations.md and the header of cpu_norm.cpp. Sums over rows are
// parallel over blocks of columns, each column summed by one thread in row order, so results do not
// depend on the thread count.
#include <cmath>
#include <vector>

#include "core/cpu/cpu_backend.h"

namespace normlab {

namespace {

// out[j] = sum_{r < rows} term(r, j) for j < cols, deterministic (see the header comment).
template <typename Term>
std::vector<double> sum_over_rows(int64_t rows, int64_t cols, Term term) {
  std::vector<double> out(static_cast<size_t>(cols), 0.0);
  constexpr int64_t kBlock = 64;
  const int64_t blocks = (cols + kBlock - 1) / kBlock;
#pragma omp parallel for if (rows * cols > kParallelElements && blocks > 1)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t j0 = b * kBlock, j1 = std::min(cols, j0 + kBlock);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = j0; j < j1; ++j) out[j] += term(r, j);
  }
  return out;
}

template <typename T> void store(Tensor& t, const std::vector<double>& v) {
  if (!t.defined()) return;
  T* p = t.data<T>();
  for (size_t j = 0; j < v.size(); ++j) p[j] = static_cast<T>(v[j]);
}

}  // namespace

// ---- BatchNorm: statistics per channel over all rows; mean, rstd (C,) ----

void CpuBackend::batch_norm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                    double eps, Tensor& y, Tensor& mean, Tensor& rstd) {
  dispatch_floating(x.dtype(), "batch_norm", [&](auto t) {
    using T = decltype(t);
    const int64_t C = x.size(-1), rows = x.numel() / C;
    const double n = static_cast<double>(rows);
    const T* xp = x.data<T>();
    const T* gp = data_or_null<T>(gamma);
    const T* bp = data_or_null<T>(beta);
    T* mp = mean.data<T>();
    T* rp = rstd.data<T>();
    T* yp = y.data<T>();
    const std::vector<double> sums = sum_over_rows(rows, C, [&](int64_t r, int64_t j) { return double(xp[r * C + j]); });
    for (int64_t j = 0; j < C; ++j) mp[j] = static_cast<T>(sums[j] / n);
    const std::vector<double> sq = sum_over_rows(rows, C, [&](int64_t r, int64_t j) {
      const double d = xp[r * C + j] - double(mp[j]);
      return d * d;
    });
    for (int64_t j = 0; j < C; ++j) rp[j] = static_cast<T>(1.0 / std::sqrt(sq[j] / n + eps));
#pragma omp parallel for if (x.numel() > kParallelElements)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < C; ++j) {
        double v = (xp[r * C + j] - double(mp[j])) * double(rp[j]);
        if (gp) v *= gp[j];
        if (bp) v += bp[j];
        yp[r * C + j] = static_cast<T>(v);
      }
  });
}

void CpuBackend::batch_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                     const Tensor& mean, const Tensor& rstd, Tensor& dx,
                                     Tensor& dgamma, Tensor& dbeta) {
  dispatch_floating(x.dtype(), "batch_norm_backward", [&](auto t) {
    using T = decltype(t);
    const int64_t C = x.size(-1), rows = x.numel() / C;
    const double n = static_cast<double>(rows);
    const T* dyp = dy.data<T>();
    const T* xp = x.data<T>();
    const T* gp = data_or_null<T>(gamma);
    const T* mp = mean.data<T>();
    const T* rp = rstd.data<T>();
    auto xhat = [&](int64_t r, int64_t j) { return (xp[r * C + j] - double(mp[j])) * double(rp[j]); };
    // s1 = sum_rows dy (= dbeta), s2 = sum_rows dy xhat (= dgamma), per channel.
    const std::vector<double> s1 = sum_over_rows(rows, C, [&](int64_t r, int64_t j) { return double(dyp[r * C + j]); });
    const std::vector<double> s2 = sum_over_rows(rows, C, [&](int64_t r, int64_t j) { return dyp[r * C + j] * xhat(r, j); });
    if (T* dxp = data_or_null<T>(dx)) {
#pragma omp parallel for if (x.numel() > kParallelElements)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < C; ++j) {
          const double g = gp ? double(gp[j]) : 1.0;
          dxp[r * C + j] = static_cast<T>(double(rp[j]) * g * (dyp[r * C + j] - s1[j] / n - xhat(r, j) * s2[j] / n));
        }
    }
    store<T>(dgamma, s2);
    store<T>(dbeta, s1);
  });
}

}  // namespace normlab
