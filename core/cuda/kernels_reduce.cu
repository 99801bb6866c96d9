// Reductions: reduce_axis (sum / mean / max over one axis), the un-broadcast sum_to_shape (a fast
// path for sums over leading axes, a general one), sum of squares and the finiteness check.
// Sums accumulate in double (max in T) and have a fixed order, so results repeat bit for bit.
#include "core/cuda/device_utils.cuh"

namespace normlab::cuda {

namespace {

// Reduce over the last axis (inner == 1): one block per output, block reduction.
template <typename T>
__global__ void __launch_bounds__(1024) reduce_rows_kernel(ROp op, const T* x, T* out, int64_t n) {
  const T* row = x + static_cast<int64_t>(blockIdx.x) * n;
  if (op == ROp::Max) {
    T m = d_neg_inf<T>();
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) m = d_max(m, row[j]);
    m = block_max(m);
    if (threadIdx.x == 0) out[blockIdx.x] = m;
  } else {
    double s = 0.0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) s += static_cast<double>(row[j]);
    s = block_sum(s);
    if (threadIdx.x == 0) out[blockIdx.x] = static_cast<T>(op == ROp::Mean ? s / static_cast<double>(n) : s);
  }
}

// Reduce over a middle axis: one thread per output (o, i), reading down the axis (coalesced in i).
template <typename T>
__global__ void reduce_strided_kernel(ROp op, const T* x, T* out, int64_t outer, int64_t n, int64_t inner) {
  NL_GRID_STRIDE(index, outer * inner) {
    const int64_t o = index / inner, i = index % inner;
    const T* base = x + o * n * inner + i;
    if (op == ROp::Max) {
      T m = d_neg_inf<T>();
      for (int64_t j = 0; j < n; ++j) m = d_max(m, base[j * inner]);
      out[index] = m;
    } else {
      double s = 0.0;
      for (int64_t j = 0; j < n; ++j) s += static_cast<double>(base[j * inner]);
      out[index] = static_cast<T>(op == ROp::Mean ? s / static_cast<double>(n) : s);
    }
  }
}

__device__ inline int64_t dims_offset(const Dims& dims, int64_t linear) {
  int64_t offset = 0;
  for (int d = dims.nd - 1; d >= 0; --d) {
    offset += (linear % dims.shape[d]) * dims.stride[d];
    linear /= dims.shape[d];
  }
  return offset;
}

template <typename T>
__global__ void sum_general_kernel(const T* x, T* out, int64_t out_n, Dims kept, Dims reduced, int64_t reduced_n) {
  NL_GRID_STRIDE(o, out_n) {
    const int64_t base = dims_offset(kept, o);
    double s = 0.0;
    for (int64_t k = 0; k < reduced_n; ++k) s += static_cast<double>(x[base + dims_offset(reduced, k)]);
    out[o] = static_cast<T>(s);
  }
}

inline int squares_blocks(int64_t n) {
  const int64_t blocks = (n + kThreads * 8 - 1) / (kThreads * 8);
  return static_cast<int>(blocks < 1 ? 1 : (blocks > kSquaresBlocks ? kSquaresBlocks : blocks));
}

template <typename T>
__global__ void squares_partial_kernel(const T* x, int64_t n, double* partial) {
  double s = 0.0;
  NL_GRID_STRIDE(i, n) {
    const double v = static_cast<double>(x[i]);
    s += v * v;
  }
  s = block_sum(s);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

__global__ void __launch_bounds__(1024) sum_partials_kernel(const double* partial, int count, double* result) {
  double s = 0.0;
  for (int i = threadIdx.x; i < count; i += blockDim.x) s += partial[i];
  s = block_sum(s);
  if (threadIdx.x == 0) *result = s;
}

template <typename T>
__global__ void finite_kernel(const T* x, int64_t n, int* flag) {
  NL_GRID_STRIDE(i, n) {
    if (!isfinite(x[i])) *flag = 0;  // every writer stores the same value
  }
}

}  // namespace

template <typename T>
cudaError_t reduce_axis(ROp op, const T* x, T* out, int64_t outer, int64_t n, int64_t inner, cudaStream_t stream) {
  if (outer * inner == 0) return cudaGetLastError();
  if (inner == 1)
    reduce_rows_kernel<<<static_cast<unsigned>(outer), row_threads(n), 0, stream>>>(op, x, out, n);
  else
    reduce_strided_kernel<<<grid_for(outer * inner), kThreads, 0, stream>>>(op, x, out, outer, n, inner);
  return cudaGetLastError();
}

template <typename T>
cudaError_t sum_rows(const T* x, T* out, int64_t rows, int64_t cols, void* scratch, cudaStream_t stream) {
  auto term = [x, cols] __device__(int64_t r, int64_t j, double* acc) {
    acc[0] += static_cast<double>(x[r * cols + j]);
  };
  auto finish = [out] __device__(int64_t j, const double* sums) { out[j] = static_cast<T>(sums[0]); };
  return column_sums<double, 1>(rows, cols, term, finish, scratch, stream);
}

template <typename T>
cudaError_t sum_general(const T* x, T* out, int64_t out_n, const Dims& kept, const Dims& reduced, int64_t reduced_n,
                        cudaStream_t stream) {
  if (out_n > 0) sum_general_kernel<<<grid_for(out_n), kThreads, 0, stream>>>(x, out, out_n, kept, reduced, reduced_n);
  return cudaGetLastError();
}

size_t sum_squares_scratch_bytes(int64_t n) { return (kSquaresBlocks + 1) * sizeof(double); }

template <typename T>
cudaError_t sum_squares(const T* x, int64_t n, double* result, void* scratch, cudaStream_t stream) {
  double* partial = static_cast<double*>(scratch);
  const int blocks = squares_blocks(n);
  squares_partial_kernel<<<blocks, kThreads, 0, stream>>>(x, n, partial);
  sum_partials_kernel<<<1, 1024, 0, stream>>>(partial, blocks, result);
  return cudaGetLastError();
}

template <typename T>
cudaError_t all_finite(const T* x, int64_t n, int* flag, cudaStream_t stream) {
  if (n > 0) finite_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, n, flag);
  return cudaGetLastError();
}

#define NL_FLOATING(T)                                                                                         \
  template cudaError_t reduce_axis<T>(ROp, const T*, T*, int64_t, int64_t, int64_t, cudaStream_t);             \
  template cudaError_t sum_rows<T>(const T*, T*, int64_t, int64_t, void*, cudaStream_t);                       \
  template cudaError_t sum_general<T>(const T*, T*, int64_t, const Dims&, const Dims&, int64_t, cudaStream_t); \
  template cudaError_t sum_squares<T>(const T*, int64_t, double*, void*, cudaStream_t);                        \
  template cudaError_t all_finite<T>(const T*, int64_t, int*, cudaStream_t);
NL_FLOATING(float)
NL_FLOATING(double)
#undef NL_FLOATING

}  // namespace normlab::cuda
