// Device helpers shared by the kernels: math overloads for float/double, deterministic block
// reductions (a fixed shuffle tree per warp, then the warps' results in warp order), launch sizes,
// and the deterministic column sums (see ColumnPlan in kernels.h).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda/kernels.h"

namespace normlab::cuda {

// ---- math with one name for float and double ----
__device__ inline float d_exp(float x) { return expf(x); }
__device__ inline double d_exp(double x) { return ::exp(x); }
__device__ inline float d_log(float x) { return logf(x); }
__device__ inline double d_log(double x) { return ::log(x); }
__device__ inline float d_sqrt(float x) { return sqrtf(x); }
__device__ inline double d_sqrt(double x) { return ::sqrt(x); }
__device__ inline float d_tanh(float x) { return tanhf(x); }
__device__ inline double d_tanh(double x) { return ::tanh(x); }
template <typename T>
__device__ inline T d_max(T a, T b) {
  return a > b ? a : b;
}
template <typename T>
__device__ inline T d_neg_inf();
template <>
__device__ inline float d_neg_inf<float>() {
  return -INFINITY;
}
template <>
__device__ inline double d_neg_inf<double>() {
  return -static_cast<double>(INFINITY);
}

// ---- launch sizes ----
constexpr int kThreads = 256;
inline unsigned grid_for(int64_t n, int threads = kThreads) {
  // grid-stride loops cover what a grid of 2^20 blocks does not
  const int64_t blocks = (n + threads - 1) / threads;
  return static_cast<unsigned>(blocks < (1 << 20) ? (blocks > 0 ? blocks : 1) : (1 << 20));
}
// Threads for one block per row of `cols`: a multiple of 32, about 4 elements per thread, at most
// 1024 (row kernels carry __launch_bounds__(1024) so that every size they get can launch).
inline int row_threads(int64_t cols) {
  int64_t t = (cols + 3) / 4;
  t = (t + 31) / 32 * 32;
  return static_cast<int>(t < 32 ? 32 : (t > 1024 ? 1024 : t));
}

#define NL_GRID_STRIDE(i, n)                                                             \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

// ---- block reductions (blockDim.x a multiple of 32, at most 1024); every thread gets the result ----
template <typename A>
__device__ inline A warp_sum(A v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}
template <typename A>
__device__ inline A warp_max(A v) {
  for (int offset = 16; offset > 0; offset >>= 1) v = d_max(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

template <typename A>
__device__ inline A block_sum(A v) {
  __shared__ A shared[33];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  v = warp_sum(v);
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    A w = lane < warps ? shared[lane] : A(0);
    w = warp_sum(w);
    if (lane == 0) shared[32] = w;
  }
  __syncthreads();
  const A result = shared[32];
  __syncthreads();  // the next call may reuse `shared`
  return result;
}

template <typename A>
__device__ inline A block_max(A v) {
  __shared__ A shared[33];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  v = warp_max(v);
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    A w = lane < warps ? shared[lane] : d_neg_inf<A>();
    w = warp_max(w);
    if (lane == 0) shared[32] = w;
  }
  __syncthreads();
  const A result = shared[32];
  __syncthreads();
  return result;
}

// ---- deterministic column sums (ColumnPlan in kernels.h) ----
// Stage 1, block (32, 8): thread (tx, ty) sums rows chunk_start + ty, + 8, ... of column
// blockIdx.x * 32 + tx through term(r, j, acc) (which adds into acc[0..K)); the 8 partials of a
// column are then added in ty order. partial layout: [k][chunk][column].
template <typename A, int K, typename Term>
__global__ void column_partials_kernel(Term term, int64_t rows, int64_t cols, int64_t rows_per_chunk, int64_t chunks,
                                       A* partial) {
  __shared__ A shared[K][8][33];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t j = static_cast<int64_t>(blockIdx.x) * 32 + tx;
  const int64_t chunk = blockIdx.y;
  const int64_t r0 = chunk * rows_per_chunk;
  const int64_t r1 = r0 + rows_per_chunk < rows ? r0 + rows_per_chunk : rows;
  A acc[K];
  for (int k = 0; k < K; ++k) acc[k] = A(0);
  if (j < cols)
    for (int64_t r = r0 + ty; r < r1; r += 8) term(r, j, acc);
  for (int k = 0; k < K; ++k) shared[k][ty][tx] = acc[k];
  __syncthreads();
  if (ty == 0 && j < cols) {
    for (int k = 0; k < K; ++k) {
      A s = A(0);
      for (int i = 0; i < 8; ++i) s += shared[k][i][tx];
      partial[(k * chunks + chunk) * cols + j] = s;
    }
  }
}

// Stage 2: one thread per column adds its chunks in order and hands the K sums to finish(j, sums).
template <typename A, int K, typename Finish>
__global__ void column_finish_kernel(const A* partial, int64_t chunks, int64_t cols, Finish finish) {
  NL_GRID_STRIDE(j, cols) {
    A sums[K];
    for (int k = 0; k < K; ++k) {
      A s = A(0);
      for (int64_t c = 0; c < chunks; ++c) s += partial[(k * chunks + c) * cols + j];
      sums[k] = s;
    }
    finish(j, sums);
  }
}

// Both stages; `scratch` holds at least K * chunks * cols accumulators.
template <typename A, int K, typename Term, typename Finish>
cudaError_t column_sums(int64_t rows, int64_t cols, Term term, Finish finish, void* scratch, cudaStream_t stream) {
  if (cols == 0) return cudaGetLastError();
  const ColumnPlan plan = column_plan(rows, cols);
  A* partial = static_cast<A*>(scratch);
  const dim3 grid(static_cast<unsigned>((cols + 31) / 32), static_cast<unsigned>(plan.chunks));
  column_partials_kernel<A, K>
      <<<grid, dim3(32, 8), 0, stream>>>(term, rows, cols, plan.rows_per_chunk, plan.chunks, partial);
  column_finish_kernel<A, K><<<grid_for(cols), kThreads, 0, stream>>>(partial, plan.chunks, cols, finish);
  return cudaGetLastError();
}

}  // namespace normlab::cuda
