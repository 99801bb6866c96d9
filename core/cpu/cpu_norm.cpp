// Fused normalization kernels: LayerNorm, RMSNorm, GroupNorm, BatchNorm, forward and backward.
// Derivations: docs/derivations.md. Notation per normalized segment of n values:
//   mean = sum x / n,  var = sum (x - mean)^2 / n  (biased),  rstd = 1 / sqrt(var + eps),
//   xhat = (x - mean) rstd,  y = gamma xhat + beta,  dxhat = dy gamma.
//   Centered backward (LayerNorm, GroupNorm per group, BatchNorm per channel):
//     dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat))
//   RMSNorm (no centering, rstd = 1/sqrt(mean(x^2) + eps), xhat = x rstd):
//     dx = rstd (dxhat - xhat mean(dxhat xhat))
//   dgamma = sum over rows of dy xhat,  dbeta = sum over rows of dy.
// Statistics are accumulated in double for every dtype (two passes: mean, then centered squares).
// LayerNorm is GroupNorm with one group, so both share one routine. Row loops run in parallel;
// sums over rows (weight gradients, BatchNorm statistics) are parallel over blocks of columns with
// each column summed by one thread in row order, so results do not depend on the thread count.
#include <cmath>
#include <vector>

#include "core/cpu/cpu_backend.h"

namespace normlab {

namespace {

template <typename T> const T* data_or_null(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}
template <typename T> T* data_or_null(Tensor& t) { return t.defined() ? t.data<T>() : nullptr; }

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

// ---- per-row groups: x (rows, C) with C = groups * n; mean, rstd (rows, groups) ----

template <typename T>
void grouped_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, int64_t groups,
                     double eps, Tensor& y, Tensor& mean, Tensor& rstd) {
  const int64_t C = x.size(-1), rows = x.numel() / C, n = C / groups;
  const T* xp = x.data<T>();
  const T* gp = data_or_null<T>(gamma);
  const T* bp = data_or_null<T>(beta);
  T* yp = y.data<T>();
  T* mp = mean.data<T>();
  T* rp = rstd.data<T>();
#pragma omp parallel for if (x.numel() > kParallelElements)
  for (int64_t s = 0; s < rows * groups; ++s) {  // s = row * groups + group
    const int64_t base = s * n, c0 = (s % groups) * n;
    double sum = 0.0;
    for (int64_t j = 0; j < n; ++j) sum += xp[base + j];
    mp[s] = static_cast<T>(sum / static_cast<double>(n));
    const double m = mp[s];
    double sq = 0.0;
    for (int64_t j = 0; j < n; ++j) {
      const double d = xp[base + j] - m;
      sq += d * d;
    }
    rp[s] = static_cast<T>(1.0 / std::sqrt(sq / static_cast<double>(n) + eps));
    const double r = rp[s];
    for (int64_t j = 0; j < n; ++j) {
      double v = (xp[base + j] - m) * r;
      if (gp) v *= gp[c0 + j];
      if (bp) v += bp[c0 + j];
      yp[base + j] = static_cast<T>(v);
    }
  }
}

template <typename T>
void grouped_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                      const Tensor& rstd, int64_t groups, Tensor& dx, Tensor& dgamma,
                      Tensor& dbeta) {
  const int64_t C = x.size(-1), rows = x.numel() / C, n = C / groups;
  const T* dyp = dy.data<T>();
  const T* xp = x.data<T>();
  const T* gp = data_or_null<T>(gamma);
  const T* mp = mean.data<T>();
  const T* rp = rstd.data<T>();
  T* dxp = data_or_null<T>(dx);
  if (dxp) {
#pragma omp parallel for if (x.numel() > kParallelElements)
    for (int64_t s = 0; s < rows * groups; ++s) {
      const int64_t base = s * n, c0 = (s % groups) * n;
      const double m = mp[s], r = rp[s];
      double sum_dxhat = 0.0, sum_dxhat_xhat = 0.0;
      for (int64_t j = 0; j < n; ++j) {
        const double dxhat = gp ? double(dyp[base + j]) * gp[c0 + j] : double(dyp[base + j]);
        sum_dxhat += dxhat;
        sum_dxhat_xhat += dxhat * (xp[base + j] - m) * r;
      }
      const double a = sum_dxhat / static_cast<double>(n), b = sum_dxhat_xhat / static_cast<double>(n);
      for (int64_t j = 0; j < n; ++j) {
        const double dxhat = gp ? double(dyp[base + j]) * gp[c0 + j] : double(dyp[base + j]);
        const double xhat = (xp[base + j] - m) * r;
        dxp[base + j] = static_cast<T>(r * (dxhat - a - xhat * b));
      }
    }
  }
  if (dgamma.defined())
    store<T>(dgamma, sum_over_rows(rows, C, [&](int64_t r, int64_t j) {
               const int64_t s = r * groups + j / n;
               return double(dyp[r * C + j]) * (xp[r * C + j] - double(mp[s])) * double(rp[s]);
             }));
  if (dbeta.defined())
    store<T>(dbeta, sum_over_rows(rows, C, [&](int64_t r, int64_t j) { return double(dyp[r * C + j]); }));
}

}  // namespace

// ---- LayerNorm: one group per row ----

void CpuBackend::layer_norm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                    double eps, Tensor& y, Tensor& mean, Tensor& rstd) {
  dispatch_floating(x.dtype(), "layer_norm", [&](auto t) {
    grouped_forward<decltype(t)>(x, gamma, beta, 1, eps, y, mean, rstd);
  });
}

void CpuBackend::layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                     const Tensor& mean, const Tensor& rstd, Tensor& dx,
                                     Tensor& dgamma, Tensor& dbeta) {
  dispatch_floating(x.dtype(), "layer_norm_backward", [&](auto t) {
    grouped_backward<decltype(t)>(dy, x, gamma, mean, rstd, 1, dx, dgamma, dbeta);
  });
}

// ---- GroupNorm ----

void CpuBackend::group_norm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                    int64_t groups, double eps, Tensor& y, Tensor& mean,
                                    Tensor& rstd) {
  NL_CHECK(groups > 0 && x.size(-1) % groups == 0, "group_norm", "{} groups do not divide C = {}",
           groups, x.size(-1));
  dispatch_floating(x.dtype(), "group_norm", [&](auto t) {
    grouped_forward<decltype(t)>(x, gamma, beta, groups, eps, y, mean, rstd);
  });
}

void CpuBackend::group_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                     const Tensor& mean, const Tensor& rstd, int64_t groups,
                                     Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  NL_CHECK(groups > 0 && x.size(-1) % groups == 0, "group_norm", "{} groups do not divide C = {}",
           groups, x.size(-1));
  dispatch_floating(x.dtype(), "group_norm_backward", [&](auto t) {
    grouped_backward<decltype(t)>(dy, x, gamma, mean, rstd, groups, dx, dgamma, dbeta);
  });
}

// ---- RMSNorm: y = x rstd g, g = w or 1 + w (unit_offset); rstd (rows,) ----

void CpuBackend::rms_norm_forward(const Tensor& x, const Tensor& weight, double eps,
                                  bool unit_offset, Tensor& y, Tensor& rstd) {
  dispatch_floating(x.dtype(), "rms_norm", [&](auto t) {
    using T = decltype(t);
    const int64_t C = x.size(-1), rows = x.numel() / C;
    const T* xp = x.data<T>();
    const T* wp = data_or_null<T>(weight);
    const double offset = unit_offset ? 1.0 : 0.0;
    T* yp = y.data<T>();
    T* rp = rstd.data<T>();
#pragma omp parallel for if (x.numel() > kParallelElements)
    for (int64_t row = 0; row < rows; ++row) {
      const T* xr = xp + row * C;
      double sq = 0.0;
      for (int64_t j = 0; j < C; ++j) sq += double(xr[j]) * xr[j];
      rp[row] = static_cast<T>(1.0 / std::sqrt(sq / static_cast<double>(C) + eps));
      const double r = rp[row];
      for (int64_t j = 0; j < C; ++j) {
        const double g = wp ? offset + wp[j] : 1.0;
        yp[row * C + j] = static_cast<T>(xr[j] * r * g);
      }
    }
  });
}

void CpuBackend::rms_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& weight,
                                   const Tensor& rstd, bool unit_offset, Tensor& dx,
                                   Tensor& dweight) {
  dispatch_floating(x.dtype(), "rms_norm_backward", [&](auto t) {
    using T = decltype(t);
    const int64_t C = x.size(-1), rows = x.numel() / C;
    const T* dyp = dy.data<T>();
    const T* xp = x.data<T>();
    const T* wp = data_or_null<T>(weight);
    const T* rp = rstd.data<T>();
    const double offset = unit_offset ? 1.0 : 0.0;
    if (T* dxp = data_or_null<T>(dx)) {
#pragma omp parallel for if (x.numel() > kParallelElements)
      for (int64_t row = 0; row < rows; ++row) {
        const int64_t base = row * C;
        const double r = rp[row];
        double sum_dxhat_xhat = 0.0;
        for (int64_t j = 0; j < C; ++j) {
          const double g = wp ? offset + wp[j] : 1.0;
          sum_dxhat_xhat += dyp[base + j] * g * xp[base + j] * r;
        }
        const double b = sum_dxhat_xhat / static_cast<double>(C);
        for (int64_t j = 0; j < C; ++j) {
          const double g = wp ? offset + wp[j] : 1.0;
          dxp[base + j] = static_cast<T>(r * (dyp[base + j] * g - xp[base + j] * r * b));
        }
      }
    }
    if (dweight.defined())
      store<T>(dweight, sum_over_rows(rows, C, [&](int64_t row, int64_t j) {
                 return double(dyp[row * C + j]) * xp[row * C + j] * double(rp[row]);
               }));
  });
}

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
