// Cross-entropy fused with log-softmax, over rows of logits (N, V):
//   loss_r = lse_r - x_{r, t_r},   lse_r = log sum_j exp(x_rj)
//   L = mean over counted rows (target != ignore_index)
//   dL/dx_rj = (softmax(x_r)_j - [j == t_r]) / count   (scale = dL_out / count)
#include <cmath>
#include <vector>

#include "core/cpu/cpu_backend.h"
#include "core/cpu/fast_math.h"

namespace normlab {

double CpuBackend::cross_entropy_forward(const Tensor& logits, const Tensor& targets,
                                         int32_t ignore_index, Tensor& lse) {
  const int64_t rows = logits.shape()[0], vocab = logits.shape()[1];
  const int32_t* tp = targets.data<int32_t>();
  for (int64_t r = 0; r < rows; ++r)
    NL_CHECK(tp[r] == ignore_index || (tp[r] >= 0 && tp[r] < vocab), "cross_entropy",
             "target {} at row {} is outside [0, {})", tp[r], r, vocab);
  return dispatch_floating(logits.dtype(), "cross_entropy", [&](auto t) {
    using T = decltype(t);
    const T* x = logits.data<T>();
    T* l = lse.data<T>();
    // Each row's loss is kept and the rows are added in order afterwards: an OpenMP reduction would
    // add per-thread partial sums, so the mean would depend on the thread count.
    std::vector<double> row_loss(static_cast<size_t>(rows), 0.0);
#pragma omp parallel for if (logits.numel() > kParallelElements)
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = x + r * vocab;
      T m = xr[0];
      for (int64_t j = 1; j < vocab; ++j) m = std::max(m, xr[j]);
      double s = 0.0;
#pragma omp simd reduction(+ : s)
      for (int64_t j = 0; j < vocab; ++j) s += static_cast<double>(fast::exp(xr[j] - m));
      const double lse_r = static_cast<double>(m) + std::log(s);
      l[r] = static_cast<T>(lse_r);
      if (tp[r] != ignore_index) row_loss[static_cast<size_t>(r)] = lse_r - static_cast<double>(xr[tp[r]]);
    }
    double total = 0.0;
    int64_t count = 0;
    for (int64_t r = 0; r < rows; ++r) {
      if (tp[r] == ignore_index) continue;
      total += row_loss[static_cast<size_t>(r)];
      count += 1;
    }
    return count > 0 ? total / static_cast<double>(count) : 0.0;
  });
}

void CpuBackend::cross_entropy_backward(const Tensor& logits, const Tensor& targets,
                                        int32_t ignore_index, const Tensor& lse, double scale,
                                        Tensor& dlogits) {
  const int64_t rows = logits.shape()[0], vocab = logits.shape()[1];
  const int32_t* tp = targets.data<int32_t>();
  dispatch_floating(logits.dtype(), "cross_entropy_backward", [&](auto t) {
    using T = decltype(t);
    const T* x = logits.data<T>();
    const T* l = lse.data<T>();
    T* d = dlogits.data<T>();
    const T s = static_cast<T>(scale);
#pragma omp parallel for if (logits.numel() > kParallelElements)
    for (int64_t r = 0; r < rows; ++r) {
      T* dr = d + r * vocab;
      if (tp[r] == ignore_index) {
        for (int64_t j = 0; j < vocab; ++j) dr[j] = T(0);
        continue;
      }
      const T* xr = x + r * vocab;
      for (int64_t j = 0; j < vocab; ++j) dr[j] = s * fast::exp(xr[j] - l[r]);
      dr[tp[r]] -= s;
    }
  });
}

}  // namespace normlab
