// Fused normalization kernels, forward and backward (formulas derived in core/cpu/cpu_norm.cpp and
// docs/derivations.md). Per normalized segment of n values:
//   mean = sum x / n,  var = sum (x - mean)^2 / n,  rstd = 1 / sqrt(var + eps),  xhat = (x - mean) rstd
//   y = gamma xhat + beta;  dxhat = dy gamma;  dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat))
//   RMSNorm: rstd = 1 / sqrt(mean(x^2) + eps), y = x rstd g;  dx = rstd (dy g - x rstd mean(dy g x rstd))
//   dgamma = sum over rows of dy xhat, dbeta = sum over rows of dy.
// LayerNorm, GroupNorm and RMSNorm forward: one block per segment (row or group), statistics in T
// with block reductions, two passes over x (the re-reads come from L1/L2).
// Their backward is one fused pass over blocks of rows: block b takes segments b, b + G, b + 2G, ...
// (G = min(segments, 1024)), writes dx and adds each row's dy xhat and dy into its own partial
// row of dgamma/dbeta (column j always by the same thread: no races); a second kernel adds the G
// partials of a column in block order. BatchNorm: deterministic column sums (device_utils.cuh).
// No atomics anywhere: two runs give bit-identical gradients.
#include "core/cuda/device_utils.cuh"

namespace normlab::cuda {

namespace {

inline unsigned segment_grid(int64_t segments) {
  constexpr int64_t kMax = 1 << 20;
  return static_cast<unsigned>(segments < kMax ? (segments > 0 ? segments : 1) : kMax);
}

// x (rows, C) as segments s = row * groups + group of n = C / groups contiguous values.
template <typename T>
__global__ void __launch_bounds__(1024)
    group_norm_forward_kernel(const T* x, const T* gamma, const T* beta, int64_t segments, int64_t n, int64_t groups,
                              T eps, T* y, T* mean, T* rstd) {
  for (int64_t s = blockIdx.x; s < segments; s += gridDim.x) {
    const T* xs = x + s * n;
    const int64_t c0 = (s % groups) * n;
    T sum = T(0);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) sum += xs[j];
    const T m = block_sum(sum) / T(n);
    T sq = T(0);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const T d = xs[j] - m;
      sq += d * d;
    }
    const T r = T(1) / d_sqrt(block_sum(sq) / T(n) + eps);
    if (threadIdx.x == 0) {
      mean[s] = m;
      rstd[s] = r;
    }
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      T v = (xs[j] - m) * r;
      if (gamma) v *= gamma[c0 + j];
      if (beta) v += beta[c0 + j];
      y[s * n + j] = v;
    }
  }
}

constexpr int64_t kMaxRowBlocks = 1024;
inline int64_t row_blocks(int64_t segments) {
  return segments < kMaxRowBlocks ? (segments > 0 ? segments : 1) : kMaxRowBlocks;
}

// partial: [2][gridDim.x][C] (dgamma's, then dbeta's), zeroed by the caller; null: no weight grads.
template <typename T>
__global__ void __launch_bounds__(1024)
    group_norm_backward_kernel(const T* dy, const T* x, const T* gamma, const T* mean, const T* rstd, int64_t segments,
                               int64_t n, int64_t groups, T* dx, T* partial) {
  const int64_t C = n * groups;
  T* pg = partial ? partial + blockIdx.x * C : nullptr;
  T* pb = partial ? partial + (gridDim.x + blockIdx.x) * C : nullptr;
  for (int64_t s = blockIdx.x; s < segments; s += gridDim.x) {
    const int64_t base = s * n, c0 = (s % groups) * n;
    const T m = mean[s], r = rstd[s];
    T a = T(0), b = T(0);
    if (dx) {
      T sum_dxhat = T(0), sum_dxhat_xhat = T(0);
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
        const T dxhat = gamma ? dy[base + j] * gamma[c0 + j] : dy[base + j];
        sum_dxhat += dxhat;
        sum_dxhat_xhat += dxhat * (x[base + j] - m) * r;
      }
      a = block_sum(sum_dxhat) / T(n);
      b = block_sum(sum_dxhat_xhat) / T(n);
    }
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const T g = dy[base + j];
      const T xhat = (x[base + j] - m) * r;
      if (dx) {
        const T dxhat = gamma ? g * gamma[c0 + j] : g;
        dx[base + j] = r * (dxhat - a - xhat * b);
      }
      if (partial) {
        pg[c0 + j] += g * xhat;
        pb[c0 + j] += g;
      }
    }
  }
}

template <typename T>
__global__ void __launch_bounds__(1024)
    rms_norm_forward_kernel(const T* x, const T* weight, int64_t rows, int64_t C, T eps, T offset, T* y, T* rstd) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * C;
    T sq = T(0);
    for (int64_t j = threadIdx.x; j < C; j += blockDim.x) sq += xr[j] * xr[j];
    const T r = T(1) / d_sqrt(block_sum(sq) / T(C) + eps);
    if (threadIdx.x == 0) rstd[row] = r;
    for (int64_t j = threadIdx.x; j < C; j += blockDim.x) {
      const T g = weight ? offset + weight[j] : T(1);
      y[row * C + j] = xr[j] * r * g;
    }
  }
}

// partial: [gridDim.x][C] of dweight, zeroed by the caller; null: no weight gradient.
template <typename T>
__global__ void __launch_bounds__(1024)
    rms_norm_backward_kernel(const T* dy, const T* x, const T* weight, const T* rstd, int64_t rows, int64_t C, T offset,
                             T* dx, T* partial) {
  T* pw = partial ? partial + blockIdx.x * C : nullptr;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t base = row * C;
    const T r = rstd[row];
    T b = T(0);
    if (dx) {
      T sum = T(0);
      for (int64_t j = threadIdx.x; j < C; j += blockDim.x) {
        const T g = weight ? offset + weight[j] : T(1);
        sum += dy[base + j] * g * x[base + j] * r;
      }
      b = block_sum(sum) / T(C);
    }
    for (int64_t j = threadIdx.x; j < C; j += blockDim.x) {
      if (dx) {
        const T g = weight ? offset + weight[j] : T(1);
        dx[base + j] = r * (dy[base + j] * g - x[base + j] * r * b);
      }
      if (partial) pw[j] += dy[base + j] * x[base + j] * r;
    }
  }
}

// BatchNorm's elementwise parts, per (row, channel j).
template <typename T>
__global__ void batch_norm_apply_kernel(const T* x, const T* gamma, const T* beta, const T* mean, const T* rstd,
                                        int64_t rows, int64_t C, T* y) {
  NL_GRID_STRIDE(i, rows * C) {
    const int64_t j = i % C;
    T v = (x[i] - mean[j]) * rstd[j];
    if (gamma) v *= gamma[j];
    if (beta) v += beta[j];
    y[i] = v;
  }
}

// dx = rstd gamma (dy - s1/N - xhat s2/N), s1 = sum_rows dy, s2 = sum_rows dy xhat.
template <typename T>
__global__ void batch_norm_dx_kernel(const T* dy, const T* x, const T* gamma, const T* mean, const T* rstd, const T* s1,
                                     const T* s2, int64_t rows, int64_t C, T* dx) {
  const T n = T(rows);
  NL_GRID_STRIDE(i, rows * C) {
    const int64_t j = i % C;
    const T xhat = (x[i] - mean[j]) * rstd[j];
    const T g = gamma ? gamma[j] : T(1);
    dx[i] = rstd[j] * g * (dy[i] - s1[j] / n - xhat * s2[j] / n);
  }
}

}  // namespace

template <typename T>
cudaError_t group_norm_forward(const T* x, const T* gamma, const T* beta, int64_t rows, int64_t C, int64_t groups,
                               double eps, T* y, T* mean, T* rstd, cudaStream_t stream) {
  const int64_t segments = rows * groups, n = C / groups;
  if (segments > 0 && n > 0)
    group_norm_forward_kernel<<<segment_grid(segments), row_threads(n), 0, stream>>>(
        x, gamma, beta, segments, n, groups, static_cast<T>(eps), y, mean, rstd);
  return cudaGetLastError();
}

size_t norm_backward_scratch_bytes(int64_t segments, int64_t C, size_t acc_bytes) {
  return static_cast<size_t>(2 * row_blocks(segments) * C) * acc_bytes + 16;
}

template <typename T>
cudaError_t group_norm_backward(const T* dy, const T* x, const T* gamma, const T* mean, const T* rstd, int64_t rows,
                                int64_t C, int64_t groups, T* dx, T* dgamma, T* dbeta, void* scratch,
                                cudaStream_t stream) {
  const int64_t segments = rows * groups, n = C / groups, blocks = row_blocks(segments);
  const bool params = dgamma || dbeta;
  if (segments == 0 || n == 0 || (!dx && !params)) {
    if (params && C > 0) {  // no rows: the sums are empty
      if (dgamma) cudaMemsetAsync(dgamma, 0, static_cast<size_t>(C) * sizeof(T), stream);
      if (dbeta) cudaMemsetAsync(dbeta, 0, static_cast<size_t>(C) * sizeof(T), stream);
    }
    return cudaGetLastError();
  }
  T* partial = params ? static_cast<T*>(scratch) : nullptr;
  if (params) {
    const cudaError_t err = cudaMemsetAsync(partial, 0, static_cast<size_t>(2 * blocks * C) * sizeof(T), stream);
    if (err != cudaSuccess) return err;
  }
  group_norm_backward_kernel<<<static_cast<unsigned>(blocks), row_threads(n), 0, stream>>>(
      dy, x, gamma, mean, rstd, segments, n, groups, dx, partial);
  if (params) {
    auto finish = [=] __device__(int64_t j, const T* sums) {
      if (dgamma) dgamma[j] = sums[0];
      if (dbeta) dbeta[j] = sums[1];
    };
    column_finish_kernel<T, 2><<<grid_for(C), kThreads, 0, stream>>>(partial, blocks, C, finish);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t rms_norm_forward(const T* x, const T* weight, int64_t rows, int64_t C, double eps, bool unit_offset, T* y,
                             T* rstd, cudaStream_t stream) {
  if (rows > 0 && C > 0)
    rms_norm_forward_kernel<<<segment_grid(rows), row_threads(C), 0, stream>>>(x, weight, rows, C, static_cast<T>(eps),
                                                                               unit_offset ? T(1) : T(0), y, rstd);
  return cudaGetLastError();
}

template <typename T>
cudaError_t rms_norm_backward(const T* dy, const T* x, const T* weight, const T* rstd, int64_t rows, int64_t C,
                              bool unit_offset, T* dx, T* dweight, void* scratch, cudaStream_t stream) {
  const int64_t blocks = row_blocks(rows);
  if (rows == 0 || C == 0 || (!dx && !dweight)) {
    if (dweight && C > 0) cudaMemsetAsync(dweight, 0, static_cast<size_t>(C) * sizeof(T), stream);
    return cudaGetLastError();
  }
  T* partial = dweight ? static_cast<T*>(scratch) : nullptr;
  if (partial) {
    const cudaError_t err = cudaMemsetAsync(partial, 0, static_cast<size_t>(blocks * C) * sizeof(T), stream);
    if (err != cudaSuccess) return err;
  }
  rms_norm_backward_kernel<<<static_cast<unsigned>(blocks), row_threads(C), 0, stream>>>(
      dy, x, weight, rstd, rows, C, unit_offset ? T(1) : T(0), dx, partial);
  if (partial) {
    auto finish = [=] __device__(int64_t j, const T* sums) { dweight[j] = sums[0]; };
    column_finish_kernel<T, 1><<<grid_for(C), kThreads, 0, stream>>>(partial, blocks, C, finish);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t batch_norm_forward(const T* x, const T* gamma, const T* beta, int64_t rows, int64_t C, double eps, T* y,
                               T* mean, T* rstd, void* scratch, cudaStream_t stream) {
  const T n = T(rows), e = static_cast<T>(eps);
  auto sum_x = [=] __device__(int64_t r, int64_t j, T* acc) { acc[0] += x[r * C + j]; };
  auto to_mean = [=] __device__(int64_t j, const T* sums) { mean[j] = sums[0] / n; };
  cudaError_t err = column_sums<T, 1>(rows, C, sum_x, to_mean, scratch, stream);
  if (err != cudaSuccess) return err;
  auto sum_sq = [=] __device__(int64_t r, int64_t j, T* acc) {
    const T d = x[r * C + j] - mean[j];
    acc[0] += d * d;
  };
  auto to_rstd = [=] __device__(int64_t j, const T* sums) { rstd[j] = T(1) / d_sqrt(sums[0] / n + e); };
  err = column_sums<T, 1>(rows, C, sum_sq, to_rstd, scratch, stream);
  if (err != cudaSuccess) return err;
  if (rows * C > 0)
    batch_norm_apply_kernel<<<grid_for(rows * C), kThreads, 0, stream>>>(x, gamma, beta, mean, rstd, rows, C, y);
  return cudaGetLastError();
}

template <typename T>
cudaError_t batch_norm_backward(const T* dy, const T* x, const T* gamma, const T* mean, const T* rstd, int64_t rows,
                                int64_t C, T* dx, T* dgamma, T* dbeta, void* scratch, cudaStream_t stream) {
  const ColumnPlan plan = column_plan(rows, C);
  T* s1 = static_cast<T*>(scratch) + 2 * plan.chunks * C;  // after the partials
  T* s2 = s1 + C;
  auto term = [=] __device__(int64_t r, int64_t j, T* acc) {
    const T g = dy[r * C + j];
    acc[0] += g;
    acc[1] += g * (x[r * C + j] - mean[j]) * rstd[j];
  };
  auto finish = [=] __device__(int64_t j, const T* sums) {
    s1[j] = sums[0];
    s2[j] = sums[1];
    if (dbeta) dbeta[j] = sums[0];
    if (dgamma) dgamma[j] = sums[1];
  };
  cudaError_t err = column_sums<T, 2>(rows, C, term, finish, scratch, stream);
  if (err != cudaSuccess) return err;
  if (dx && rows * C > 0)
    batch_norm_dx_kernel<<<grid_for(rows * C), kThreads, 0, stream>>>(dy, x, gamma, mean, rstd, s1, s2, rows, C, dx);
  return cudaGetLastError();
}

#define NL_FLOATING(T)                                                                                                \
  template cudaError_t group_norm_forward<T>(const T*, const T*, const T*, int64_t, int64_t, int64_t, double, T*, T*, \
                                             T*, cudaStream_t);                                                       \
  template cudaError_t group_norm_backward<T>(const T*, const T*, const T*, const T*, const T*, int64_t, int64_t,     \
                                              int64_t, T*, T*, T*, void*, cudaStream_t);                              \
  template cudaError_t rms_norm_forward<T>(const T*, const T*, int64_t, int64_t, double, bool, T*, T*, cudaStream_t); \
  template cudaError_t rms_norm_backward<T>(const T*, const T*, const T*, const T*, int64_t, int64_t, bool, T*, T*,   \
                                            void*, cudaStream_t);                                                     \
  template cudaError_t batch_norm_forward<T>(const T*, const T*, const T*, int64_t, int64_t, double, T*, T*, T*,      \
                                             void*, cudaStream_t);                                                    \
  template cudaError_t batch_norm_backward<T>(const T*, const T*, const T*, const T*, const T*, int64_t, int64_t, T*, \
                                              T*, T*, void*, cudaStream_t);
NL_FLOATING(float)
NL_FLOATING(double)
#undef NL_FLOATING

}  // namespace normlab::cuda
