// Fused normalization kernels, forward and backward (formulas derived in core/cpu/cpu_norm.cpp and
// docs/derivations.md). Per normalized segment of n values:
//   mean = sum x / n,  var = sum (x - mean)^2 / n,  rstd = 1 / sqrt(var + eps),  xhat = (x - mean) rstd
//   y = gamma xhat + beta;  dxhat = dy gamma;  dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat))
//   RMSNorm: rstd = 1 / sqrt(mean(x^2) + eps), y = x rstd g;  dx = rstd (dy g - x rstd mean(dy g x rstd))
//   dgamma = sum over rows of dy xhat, dbeta = sum over rows of dy.
// LayerNorm, GroupNorm and RMSNorm forward: one block per segment (row or group), statistics in
// A = norm_acc_t<T> (T itself, float for __half/__nv_bfloat16) with block reductions, two passes
// over x (the re-reads come from L1/L2). 16-bit storage is loaded to float (ld) and stored rounded
// to nearest even (st); RMSNorm's cast order follows unit_offset (kernels.h, core/backend.h).
// Their backward is one fused pass over blocks of rows: block b takes segments b, b + G, b + 2G, ...
// (G = min(segments, 1024)), writes dx and adds each row's dy xhat and dy into its own partial
// row of dgamma/dbeta (column j always by the same thread: no races); a second kernel adds the G
// partials of a column in block order. BatchNorm: deterministic column sums (device_utils.cuh).
// No atomics anywhere: two runs give bit-identical gradients.
#include <type_traits>

#include "core/cuda/device_utils.cuh"

namespace normlab::cuda {

namespace {

// Storage <-> compute type: the identity for float and double.
__device__ inline float ld(float v) { return v; }
__device__ inline double ld(double v) { return v; }
__device__ inline float ld(__half v) { return __half2float(v); }
__device__ inline float ld(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T>
__device__ inline T st(norm_acc_t<T> v) {
  if constexpr (std::is_same_v<T, __half>) return __float2half_rn(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(v);
  else return v;
}
// v stored in T and loaded back: the 16-bit rounding (none for float and double).
template <typename T>
__device__ inline norm_acc_t<T> round_to(norm_acc_t<T> v) {
  return ld(st<T>(v));
}

inline unsigned segment_grid(int64_t segments) {
  constexpr int64_t kMax = 1 << 20;
  return static_cast<unsigned>(segments < kMax ? (segments > 0 ? segments : 1) : kMax);
}

// x (rows, C) as segments s = row * groups + group of n = C / groups contiguous values.
template <typename T, typename A = norm_acc_t<T>>
__global__ void __launch_bounds__(1024)
    group_norm_forward_kernel(const T* x, const T* gamma, const T* beta, int64_t segments, int64_t n, int64_t groups,
                              A eps, T* y, A* mean, A* rstd) {
  for (int64_t s = blockIdx.x; s < segments; s += gridDim.x) {
    const T* xs = x + s * n;
    const int64_t c0 = (s % groups) * n;
    A sum = A(0);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) sum += ld(xs[j]);
    const A m = block_sum(sum) / A(n);
    A sq = A(0);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const A d = ld(xs[j]) - m;
      sq += d * d;
    }
    const A r = A(1) / d_sqrt(block_sum(sq) / A(n) + eps);
    if (threadIdx.x == 0) {
      mean[s] = m;
      rstd[s] = r;
    }
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      A v = (ld(xs[j]) - m) * r;
      if (gamma) v *= ld(gamma[c0 + j]);
      if (beta) v += ld(beta[c0 + j]);
      y[s * n + j] = st<T>(v);
    }
  }
}

constexpr int64_t kMaxRowBlocks = 1024;
inline int64_t row_blocks(int64_t segments) {
  return segments < kMaxRowBlocks ? (segments > 0 ? segments : 1) : kMaxRowBlocks;
}

// partial: [2][gridDim.x][C] (dgamma's, then dbeta's), zeroed by the caller; null: no weight grads.
// The forward's 16-bit roundings count as the identity.
template <typename T, typename A = norm_acc_t<T>>
__global__ void __launch_bounds__(1024)
    group_norm_backward_kernel(const T* dy, const T* x, const T* gamma, const A* mean, const A* rstd, int64_t segments,
                               int64_t n, int64_t groups, T* dx, A* partial) {
  const int64_t C = n * groups;
  A* pg = partial ? partial + blockIdx.x * C : nullptr;
  A* pb = partial ? partial + (gridDim.x + blockIdx.x) * C : nullptr;
  for (int64_t s = blockIdx.x; s < segments; s += gridDim.x) {
    const int64_t base = s * n, c0 = (s % groups) * n;
    const A m = mean[s], r = rstd[s];
    A a = A(0), b = A(0);
    if (dx) {
      A sum_dxhat = A(0), sum_dxhat_xhat = A(0);
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
        const A dxhat = gamma ? ld(dy[base + j]) * ld(gamma[c0 + j]) : ld(dy[base + j]);
        sum_dxhat += dxhat;
        sum_dxhat_xhat += dxhat * (ld(x[base + j]) - m) * r;
      }
      a = block_sum(sum_dxhat) / A(n);
      b = block_sum(sum_dxhat_xhat) / A(n);
    }
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const A g = ld(dy[base + j]);
      const A xhat = (ld(x[base + j]) - m) * r;
      if (dx) {
        const A dxhat = gamma ? g * ld(gamma[c0 + j]) : g;
        dx[base + j] = st<T>(r * (dxhat - a - xhat * b));
      }
      if (partial) {
        pg[c0 + j] += g * xhat;
        pb[c0 + j] += g;
      }
    }
  }
}

template <typename T, typename A = norm_acc_t<T>>
__global__ void __launch_bounds__(1024)
    rms_norm_forward_kernel(const T* x, const T* weight, int64_t rows, int64_t C, A eps, bool unit_offset, T* y,
                            A* rstd) {
  const A offset = unit_offset ? A(1) : A(0);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * C;
    A sq = A(0);
    for (int64_t j = threadIdx.x; j < C; j += blockDim.x) sq += ld(xr[j]) * ld(xr[j]);
    const A r = A(1) / d_sqrt(block_sum(sq) / A(C) + eps);
    if (threadIdx.x == 0) rstd[row] = r;
    for (int64_t j = threadIdx.x; j < C; j += blockDim.x) {
      const A g = weight ? offset + ld(weight[j]) : A(1);
      // LLaMA (w) rounds x rstd to T before the weight; Gemma (1 + w) rounds once.
      const A xr_r = unit_offset ? ld(xr[j]) * r : round_to<T>(ld(xr[j]) * r);
      y[row * C + j] = st<T>(xr_r * g);
    }
  }
}

// partial: [gridDim.x][C] of dweight, zeroed by the caller; null: no weight gradient.
template <typename T, typename A = norm_acc_t<T>>
__global__ void __launch_bounds__(1024)
    rms_norm_backward_kernel(const T* dy, const T* x, const T* weight, const A* rstd, int64_t rows, int64_t C, A offset,
                             T* dx, A* partial) {
  A* pw = partial ? partial + blockIdx.x * C : nullptr;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t base = row * C;
    const A r = rstd[row];
    A b = A(0);
    if (dx) {
      A sum = A(0);
      for (int64_t j = threadIdx.x; j < C; j += blockDim.x) {
        const A g = weight ? offset + ld(weight[j]) : A(1);
        sum += ld(dy[base + j]) * g * ld(x[base + j]) * r;
      }
      b = block_sum(sum) / A(C);
    }
    for (int64_t j = threadIdx.x; j < C; j += blockDim.x) {
      if (dx) {
        const A g = weight ? offset + ld(weight[j]) : A(1);
        dx[base + j] = st<T>(r * (ld(dy[base + j]) * g - ld(x[base + j]) * r * b));
      }
      if (partial) pw[j] += ld(dy[base + j]) * ld(x[base + j]) * r;
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
                               double eps, T* y, norm_acc_t<T>* mean, norm_acc_t<T>* rstd, cudaStream_t stream) {
  const int64_t segments = rows * groups, n = C / groups;
  if (segments > 0 && n > 0)
    group_norm_forward_kernel<T><<<segment_grid(segments), row_threads(n), 0, stream>>>(
        x, gamma, beta, segments, n, groups, static_cast<norm_acc_t<T>>(eps), y, mean, rstd);
  return cudaGetLastError();
}

size_t norm_backward_scratch_bytes(int64_t segments, int64_t C, size_t acc_bytes) {
  return static_cast<size_t>(2 * row_blocks(segments) * C) * acc_bytes + 16;
}

template <typename T>
cudaError_t group_norm_backward(const T* dy, const T* x, const T* gamma, const norm_acc_t<T>* mean,
                                const norm_acc_t<T>* rstd, int64_t rows, int64_t C, int64_t groups, T* dx, T* dgamma,
                                T* dbeta, void* scratch, cudaStream_t stream) {
  using A = norm_acc_t<T>;
  const int64_t segments = rows * groups, n = C / groups, blocks = row_blocks(segments);
  const bool params = dgamma || dbeta;
  if (segments == 0 || n == 0 || (!dx && !params)) {
    if (params && C > 0) {  // no rows: the sums are empty
      if (dgamma) cudaMemsetAsync(dgamma, 0, static_cast<size_t>(C) * sizeof(T), stream);
      if (dbeta) cudaMemsetAsync(dbeta, 0, static_cast<size_t>(C) * sizeof(T), stream);
    }
    return cudaGetLastError();
  }
  A* partial = params ? static_cast<A*>(scratch) : nullptr;
  if (params) {
    const cudaError_t err = cudaMemsetAsync(partial, 0, static_cast<size_t>(2 * blocks * C) * sizeof(A), stream);
    if (err != cudaSuccess) return err;
  }
  group_norm_backward_kernel<T><<<static_cast<unsigned>(blocks), row_threads(n), 0, stream>>>(
      dy, x, gamma, mean, rstd, segments, n, groups, dx, partial);
  if (params) {
    auto finish = [=] __device__(int64_t j, const A* sums) {
      if (dgamma) dgamma[j] = st<T>(sums[0]);
      if (dbeta) dbeta[j] = st<T>(sums[1]);
    };
    column_finish_kernel<A, 2><<<grid_for(C), kThreads, 0, stream>>>(partial, blocks, C, finish);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t rms_norm_forward(const T* x, const T* weight, int64_t rows, int64_t C, double eps, bool unit_offset, T* y,
                             norm_acc_t<T>* rstd, cudaStream_t stream) {
  if (rows > 0 && C > 0)
    rms_norm_forward_kernel<T><<<segment_grid(rows), row_threads(C), 0, stream>>>(
        x, weight, rows, C, static_cast<norm_acc_t<T>>(eps), unit_offset, y, rstd);
  return cudaGetLastError();
}

template <typename T>
cudaError_t rms_norm_backward(const T* dy, const T* x, const T* weight, const norm_acc_t<T>* rstd, int64_t rows,
                              int64_t C, bool unit_offset, T* dx, T* dweight, void* scratch, cudaStream_t stream) {
  using A = norm_acc_t<T>;
  const int64_t blocks = row_blocks(rows);
  if (rows == 0 || C == 0 || (!dx && !dweight)) {
    if (dweight && C > 0) cudaMemsetAsync(dweight, 0, static_cast<size_t>(C) * sizeof(T), stream);
    return cudaGetLastError();
  }
  A* partial = dweight ? static_cast<A*>(scratch) : nullptr;
  if (partial) {
    const cudaError_t err = cudaMemsetAsync(partial, 0, static_cast<size_t>(blocks * C) * sizeof(A), stream);
    if (err != cudaSuccess) return err;
  }
  rms_norm_backward_kernel<T><<<static_cast<unsigned>(blocks), row_threads(C), 0, stream>>>(
      dy, x, weight, rstd, rows, C, unit_offset ? A(1) : A(0), dx, partial);
  if (partial) {
    auto finish = [=] __device__(int64_t j, const A* sums) { dweight[j] = st<T>(sums[0]); };
    column_finish_kernel<A, 1><<<grid_for(C), kThreads, 0, stream>>>(partial, blocks, C, finish);
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

#define NL_ROW_NORMS(T)                                                                                               \
  template cudaError_t group_norm_forward<T>(const T*, const T*, const T*, int64_t, int64_t, int64_t, double, T*,     \
                                             norm_acc_t<T>*, norm_acc_t<T>*, cudaStream_t);                           \
  template cudaError_t group_norm_backward<T>(const T*, const T*, const T*, const norm_acc_t<T>*,                     \
                                              const norm_acc_t<T>*, int64_t, int64_t, int64_t, T*, T*, T*, void*,     \
                                              cudaStream_t);                                                          \
  template cudaError_t rms_norm_forward<T>(const T*, const T*, int64_t, int64_t, double, bool, T*, norm_acc_t<T>*,    \
                                           cudaStream_t);                                                             \
  template cudaError_t rms_norm_backward<T>(const T*, const T*, const T*, const norm_acc_t<T>*, int64_t, int64_t,     \
                                            bool, T*, T*, void*, cudaStream_t);
NL_ROW_NORMS(float)
NL_ROW_NORMS(double)
NL_ROW_NORMS(__half)
NL_ROW_NORMS(__nv_bfloat16)
#undef NL_ROW_NORMS

#define NL_FLOATING(T)                                                                                                \
  template cudaError_t batch_norm_forward<T>(const T*, const T*, const T*, int64_t, int64_t, double, T*, T*, T*,      \
                                             void*, cudaStream_t);                                                    \
  template cudaError_t batch_norm_backward<T>(const T*, const T*, const T*, const T*, const T*, int64_t, int64_t, T*, \
                                              T*, T*, void*, cudaStream_t);
NL_FLOATING(float)
NL_FLOATING(double)
#undef NL_FLOATING

}  // namespace normlab::cuda
