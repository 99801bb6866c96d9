// Softmax (plain and causal) and its backward, embedding gather and scatter-add, and cross-entropy
// fused with log-softmax. Row kernels use one block per row with block reductions (fixed order).
//   softmax:   z = scale x; y_j = exp(z_j - max) / sum_k exp(z_k - max); causal row i of a (T, T) block
//              keeps j <= i (window > 0: i - window <= j <= i), the others exactly 0
//   backward:  dx_j = scale y_j (dy_j - sum_k dy_k y_k)
//   cross-entropy: lse_r = max + log sum_j exp(x_rj - max);  loss_r = lse_r - x_{r, t_r}
//                  dx_rj = scale (exp(x_rj - lse_r) - [j == t_r]), 0 on ignored rows
#include "core/cuda/device_utils.cuh"

namespace normlab::cuda {

namespace {

constexpr unsigned kMaxRowBlocks = 1u << 20;
inline unsigned row_grid(int64_t rows) {
  return static_cast<unsigned>(rows < kMaxRowBlocks ? (rows > 0 ? rows : 1) : kMaxRowBlocks);
}

template <typename T>
__global__ void __launch_bounds__(1024)
    softmax_kernel(const T* x, T* y, int64_t rows, int64_t cols, bool causal, int64_t window, T scale) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    const int64_t i = r % cols;  // the query position inside its (T, T) block (causal)
    const int64_t lo = causal && window > 0 && i > window ? i - window : 0;
    const int64_t hi = causal ? i + 1 : cols;
    T m = d_neg_inf<T>();
    for (int64_t j = lo + threadIdx.x; j < hi; j += blockDim.x) m = d_max(m, xr[j] * scale);
    m = block_max(m);
    T s = T(0);
    for (int64_t j = lo + threadIdx.x; j < hi; j += blockDim.x) {
      const T e = d_exp(xr[j] * scale - m);
      yr[j] = e;
      s += e;
    }
    s = block_sum(s);
    const T inv = T(1) / s;
    for (int64_t j = lo + threadIdx.x; j < hi; j += blockDim.x) yr[j] *= inv;  // this thread's own writes
    for (int64_t j = threadIdx.x; j < lo; j += blockDim.x) yr[j] = T(0);
    for (int64_t j = hi + threadIdx.x; j < cols; j += blockDim.x) yr[j] = T(0);
  }
}

template <typename T>
__global__ void __launch_bounds__(1024)
    softmax_backward_kernel(const T* y, const T* dy, T* dx, int64_t rows, int64_t cols, T scale) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* yr = y + r * cols;
    const T* dyr = dy + r * cols;
    T dot = T(0);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) dot += dyr[j] * yr[j];
    dot = block_sum(dot);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) dx[r * cols + j] = yr[j] * (dyr[j] - dot) * scale;
  }
}

template <typename T>
__global__ void embedding_forward_kernel(const T* weight, const int32_t* ids, T* out, int64_t rows, int64_t vocab,
                                         int64_t dim, unsigned long long* bad_position) {
  NL_GRID_STRIDE(i, rows * dim) {
    const int64_t r = i / dim, j = i % dim;
    const int32_t id = ids[r];
    if (id >= 0 && id < vocab) {
      out[i] = weight[static_cast<int64_t>(id) * dim + j];
    } else {
      out[i] = T(0);
      if (j == 0) atomicMin(bad_position, static_cast<unsigned long long>(r));
    }
  }
}

__global__ void count_ids_kernel(const int32_t* ids, int64_t rows, int64_t vocab, int* counts) {
  NL_GRID_STRIDE(r, rows) {
    const int32_t id = ids[r];
    if (id >= 0 && id < vocab) atomicAdd(counts + id, 1);  // integer counts: exact in any order
  }
}

constexpr int kScatterThreads = 256;

// One block per vocabulary row v that occurs: scan the ids a tile at a time; the warps' ballots
// list the matching positions, which every thread walks in increasing r, adding dy[r, j] into its
// own columns j of dweight[v]. Same order of additions as the CPU loop, no atomics.
template <typename T>
__global__ void embedding_backward_kernel(const int32_t* ids, const T* dy, T* dweight, int64_t rows, int64_t vocab,
                                          int64_t dim, const int* counts) {
  __shared__ unsigned masks[kScatterThreads / 32];
  const int warps = blockDim.x / 32;
  for (int64_t v = blockIdx.x; v < vocab; v += gridDim.x) {
    const int count = counts[v];
    if (count == 0) continue;
    T* dst = dweight + v * dim;
    int found = 0;
    for (int64_t tile = 0; tile < rows && found < count; tile += blockDim.x) {
      const int64_t r = tile + threadIdx.x;
      const bool match = r < rows && ids[r] == v;
      const unsigned ballot = __ballot_sync(0xffffffffu, match);
      if ((threadIdx.x & 31) == 0) masks[threadIdx.x >> 5] = ballot;
      __syncthreads();
      for (int w = 0; w < warps; ++w) {
        unsigned mask = masks[w];
        while (mask != 0) {
          const int bit = __ffs(mask) - 1;
          mask &= mask - 1;
          const T* src = dy + (tile + w * 32 + bit) * dim;
          for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) dst[j] += src[j];
          ++found;
        }
      }
      __syncthreads();  // masks are rewritten by the next tile
    }
  }
}

template <typename T>
__global__ void __launch_bounds__(1024)
    cross_entropy_rows_kernel(const T* logits, const int32_t* targets, int32_t ignore_index, int64_t rows,
                              int64_t vocab, T* lse, double* row_loss, double* row_count, unsigned long long* bad_row) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = logits + r * vocab;
    T m = d_neg_inf<T>();
    for (int64_t j = threadIdx.x; j < vocab; j += blockDim.x) m = d_max(m, xr[j]);
    m = block_max(m);
    double s = 0.0;
    for (int64_t j = threadIdx.x; j < vocab; j += blockDim.x) s += ::exp(static_cast<double>(xr[j] - m));
    s = block_sum(s);
    if (threadIdx.x == 0) {
      const double lse_r = static_cast<double>(m) + ::log(s);
      lse[r] = static_cast<T>(lse_r);
      const int32_t t = targets[r];
      double loss = 0.0, counted = 0.0;
      if (t != ignore_index) {
        if (t >= 0 && t < vocab) {
          loss = lse_r - static_cast<double>(xr[t]);
          counted = 1.0;
        } else {
          atomicMin(bad_row, static_cast<unsigned long long>(r));
        }
      }
      row_loss[r] = loss;
      row_count[r] = counted;
    }
  }
}

__global__ void __launch_bounds__(1024)
    cross_entropy_total_kernel(const double* row_loss, const double* row_count, int64_t rows, double* result) {
  double total = 0.0, count = 0.0;
  for (int64_t r = threadIdx.x; r < rows; r += blockDim.x) {
    total += row_loss[r];
    count += row_count[r];
  }
  total = block_sum(total);
  count = block_sum(count);
  if (threadIdx.x == 0) {
    result[0] = total;
    result[1] = count;
  }
}

template <typename T>
__global__ void cross_entropy_backward_kernel(const T* logits, const int32_t* targets, int32_t ignore_index,
                                              const T* lse, T scale, T* dlogits, int64_t rows, int64_t vocab) {
  NL_GRID_STRIDE(i, rows * vocab) {
    const int64_t r = i / vocab, j = i % vocab;
    const int32_t t = targets[r];
    T d = T(0);
    if (t != ignore_index) {
      d = scale * d_exp(logits[i] - lse[r]);
      if (j == t) d -= scale;
    }
    dlogits[i] = d;
  }
}

}  // namespace

template <typename T>
cudaError_t softmax(const T* x, T* y, int64_t rows, int64_t cols, bool causal, int64_t window, T scale,
                    cudaStream_t stream) {
  if (rows > 0 && cols > 0)
    softmax_kernel<<<row_grid(rows), row_threads(cols), 0, stream>>>(x, y, rows, cols, causal, window, scale);
  return cudaGetLastError();
}

template <typename T>
cudaError_t softmax_backward(const T* y, const T* dy, T* dx, int64_t rows, int64_t cols, T scale,
                             cudaStream_t stream) {
  if (rows > 0 && cols > 0)
    softmax_backward_kernel<<<row_grid(rows), row_threads(cols), 0, stream>>>(y, dy, dx, rows, cols, scale);
  return cudaGetLastError();
}

template <typename T>
cudaError_t embedding_forward(const T* weight, const int32_t* ids, T* out, int64_t rows, int64_t vocab, int64_t dim,
                              unsigned long long* bad_position, cudaStream_t stream) {
  if (rows * dim > 0)
    embedding_forward_kernel<<<grid_for(rows * dim), kThreads, 0, stream>>>(weight, ids, out, rows, vocab, dim,
                                                                            bad_position);
  return cudaGetLastError();
}

template <typename T>
cudaError_t embedding_backward(const int32_t* ids, const T* dy, T* dweight, int64_t rows, int64_t vocab, int64_t dim,
                               int* counts, cudaStream_t stream) {
  if (rows == 0 || vocab == 0 || dim == 0) return cudaGetLastError();
  cudaError_t err = cudaMemsetAsync(counts, 0, static_cast<size_t>(vocab) * sizeof(int), stream);
  if (err != cudaSuccess) return err;
  count_ids_kernel<<<grid_for(rows), kThreads, 0, stream>>>(ids, rows, vocab, counts);
  embedding_backward_kernel<<<row_grid(vocab), kScatterThreads, 0, stream>>>(ids, dy, dweight, rows, vocab, dim,
                                                                             counts);
  return cudaGetLastError();
}

size_t cross_entropy_scratch_bytes(int64_t rows) { return static_cast<size_t>(2 * rows + 2) * sizeof(double); }

template <typename T>
cudaError_t cross_entropy_forward(const T* logits, const int32_t* targets, int32_t ignore_index, int64_t rows,
                                  int64_t vocab, T* lse, double* result, unsigned long long* bad_row, void* scratch,
                                  cudaStream_t stream) {
  double* row_loss = static_cast<double*>(scratch);
  double* row_count = row_loss + rows;
  if (rows > 0)
    cross_entropy_rows_kernel<<<row_grid(rows), row_threads(vocab), 0, stream>>>(
        logits, targets, ignore_index, rows, vocab, lse, row_loss, row_count, bad_row);
  cross_entropy_total_kernel<<<1, 1024, 0, stream>>>(row_loss, row_count, rows, result);
  return cudaGetLastError();
}

template <typename T>
cudaError_t cross_entropy_backward(const T* logits, const int32_t* targets, int32_t ignore_index, const T* lse, T scale,
                                   T* dlogits, int64_t rows, int64_t vocab, cudaStream_t stream) {
  if (rows * vocab > 0)
    cross_entropy_backward_kernel<<<grid_for(rows * vocab), kThreads, 0, stream>>>(logits, targets, ignore_index, lse,
                                                                                   scale, dlogits, rows, vocab);
  return cudaGetLastError();
}

#define NL_FLOATING(T)                                                                                                 \
  template cudaError_t softmax<T>(const T*, T*, int64_t, int64_t, bool, int64_t, T, cudaStream_t);                     \
  template cudaError_t softmax_backward<T>(const T*, const T*, T*, int64_t, int64_t, T, cudaStream_t);                 \
  template cudaError_t embedding_forward<T>(const T*, const int32_t*, T*, int64_t, int64_t, int64_t,                   \
                                            unsigned long long*, cudaStream_t);                                        \
  template cudaError_t embedding_backward<T>(const int32_t*, const T*, T*, int64_t, int64_t, int64_t, int*,            \
                                             cudaStream_t);                                                            \
  template cudaError_t cross_entropy_forward<T>(const T*, const int32_t*, int32_t, int64_t, int64_t, T*, double*,      \
                                                unsigned long long*, void*, cudaStream_t);                             \
  template cudaError_t cross_entropy_backward<T>(const T*, const int32_t*, int32_t, const T*, T, T*, int64_t, int64_t, \
                                                 cudaStream_t);
NL_FLOATING(float)
NL_FLOATING(double)
#undef NL_FLOATING

}  // namespace normlab::cuda
