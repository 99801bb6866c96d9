// Launchers of the CUDA kernels. Plain pointers and sizes only (no normlab headers), so that the
// .cu files compile with nvcc alone; CudaBackend (host code) checks shapes and calls these.
// Every launcher enqueues on `stream`, does not wait, and returns cudaGetLastError() of its
// launches. T is float or double unless stated (explicit instantiations in the .cu files).
//
// Accumulation types: norm and softmax statistics in T (float32 statistics for float32 data, as
// GPU kernels usually do; the CPU backend uses double); sums that produce one number from many
// (reduce_axis, sum_to_shape, sum_squares, the cross-entropy loss) in double, as on the CPU.
// Every sum has a fixed order that depends only on the shapes: results are bit-identical from run
// to run on the same GPU (no floating-point atomics anywhere).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace normlab::cuda {

constexpr int kMaxDims = 8;

// A shape and one operand's strides (elements), passed to kernels by value.
struct Dims {
  int nd = 0;
  int64_t shape[kMaxDims] = {};
  int64_t stride[kMaxDims] = {};
};

// Mirrors of backend.h's enums (static_asserts in backend_ops.cpp keep the values in step).
enum class UOp : int { Neg, Exp, Log, Sqrt, Square, Tanh, Relu, Gelu, Silu, Scale, AddScalar };
enum class BOp : int { Add, Sub, Mul, Div };
enum class ROp : int { Sum, Mean, Max };

// ---- column sums: out[j] = sum over rows r of term(r, j), deterministic ----
// Stage 1 splits the rows into `chunks` of rows_per_chunk and writes one partial per (chunk, column);
// stage 2 adds the partials of a column in chunk order. The plan depends on (rows, cols) only.
struct ColumnPlan {
  int64_t rows = 0, cols = 0, chunks = 1, rows_per_chunk = 1;
};
inline ColumnPlan column_plan(int64_t rows, int64_t cols) {
  ColumnPlan p;
  p.rows = rows;
  p.cols = cols;
  const int64_t tiles = std::max<int64_t>((cols + 31) / 32, 1);
  // at least 32 rows per chunk, about 2048 blocks in all, at most 1024 chunks (grid.y limit 65535)
  int64_t chunks = std::min<int64_t>((rows + 31) / 32, std::max<int64_t>(2048 / tiles, 1));
  chunks = std::clamp<int64_t>(chunks, 1, 1024);
  p.rows_per_chunk = std::max<int64_t>((rows + chunks - 1) / chunks, 1);
  p.chunks = std::max<int64_t>((rows + p.rows_per_chunk - 1) / p.rows_per_chunk, 1);
  return p;
}
// Scratch for up to two column sums of `cols` with accumulators of acc_bytes each: the partials
// and, after them, the two finished sums (used by BatchNorm's backward).
inline size_t column_scratch_bytes(int64_t rows, int64_t cols, size_t acc_bytes) {
  const ColumnPlan p = column_plan(rows, cols);
  return static_cast<size_t>(2 * p.chunks * cols + 2 * cols) * acc_bytes + 16;
}

// ---- data movement and elementwise (kernels_elementwise.cu) ----
// T in {float, double, int32_t, __half, __nv_bfloat16}
template <typename T> cudaError_t fill(T* out, int64_t n, T value, cudaStream_t stream);
// dst[i] (contiguous, n = numel) = src at the multi-index i of src_dims (any strides), converted;
// S, D in {float, double, int32_t, __half, __nv_bfloat16} (16-bit values go through float).
template <typename S, typename D>
cudaError_t copy_strided(const S* src, const Dims& src_dims, D* dst, int64_t n, cudaStream_t stream);
template <typename T>
cudaError_t unary(UOp op, const T* x, T* y, int64_t n, T alpha, cudaStream_t stream);
// x or y may be null where the op's derivative does not read them.
template <typename T>
cudaError_t unary_backward(UOp op, const T* x, const T* y, const T* dy, T* dx, int64_t n, T alpha,
                           cudaStream_t stream);
// out (n elements) = a (op) b. Indexing:
//  * Same:    a[i], b[i]
//  * BSuffix: a[i], b[i % nb]      (b repeats over leading axes: bias add; nb = 1: scalar b)
//  * ASuffix: a[i % na], b[i]
//  * General: both through `dims` (out's shape; stride = a's broadcast strides, b_stride = b's)
enum class BinaryIndexing : int { Same, BSuffix, ASuffix, General };
template <typename T>
cudaError_t binary(BOp op, BinaryIndexing indexing, const T* a, const T* b, T* out, int64_t n,
                   int64_t na, int64_t nb, const Dims& dims, const Dims& b_dims, cudaStream_t stream);
template <typename T> cudaError_t axpy(T alpha, const T* x, T* y, int64_t n, cudaStream_t stream);
// mask[i] = counter_uniform(seed, i) >= p ? keep_scale : 0 (core/random.cpp's hash, bit for bit).
template <typename T>
cudaError_t dropout_mask(uint64_t seed, double p, T keep_scale, T* mask, int64_t n, cudaStream_t stream);

// ---- reductions (kernels_reduce.cu) ----
template <typename T>
cudaError_t reduce_axis(ROp op, const T* x, T* out, int64_t outer, int64_t n, int64_t inner,
                        cudaStream_t stream);
// out[j] = sum_r x[r * cols + j]; scratch: column_scratch_bytes(rows, cols, sizeof(double)).
template <typename T>
cudaError_t sum_rows(const T* x, T* out, int64_t rows, int64_t cols, void* scratch, cudaStream_t stream);
// out[o] = sum over the reduced multi-indices k (in lexicographic order) of
// x[offset(kept(o)) + offset(reduced(k))]: kept.shape are out's axes, reduced.shape the summed ones.
template <typename T>
cudaError_t sum_general(const T* x, T* out, int64_t out_n, const Dims& kept, const Dims& reduced,
                        int64_t reduced_n, cudaStream_t stream);
// *result = sum x^2 in double; scratch: sum_squares_scratch_bytes(n), whose first kSquaresBlocks
// doubles hold per-block partials (result may point just after them).
constexpr int kSquaresBlocks = 1024;
size_t sum_squares_scratch_bytes(int64_t n);
template <typename T>
cudaError_t sum_squares(const T* x, int64_t n, double* result, void* scratch, cudaStream_t stream);
// *flag (set to 1 by the caller) becomes 0 when any element is NaN or infinite.
template <typename T> cudaError_t all_finite(const T* x, int64_t n, int* flag, cudaStream_t stream);

// ---- softmax, embedding, cross-entropy (kernels_softmax_loss.cu) ----
template <typename T>
cudaError_t softmax(const T* x, T* y, int64_t rows, int64_t cols, bool causal, int64_t window, T scale,
                    cudaStream_t stream);
template <typename T>
cudaError_t softmax_backward(const T* y, const T* dy, T* dx, int64_t rows, int64_t cols, T scale,
                             cudaStream_t stream);
// out[r, :] = weight[ids[r], :]; *bad_position (set to UINT64_MAX by the caller) becomes the first
// position whose id is outside [0, vocab) (that row of out is left as zeros).
template <typename T>
cudaError_t embedding_forward(const T* weight, const int32_t* ids, T* out, int64_t rows, int64_t vocab,
                              int64_t dim, unsigned long long* bad_position, cudaStream_t stream);
// dweight[ids[r], :] += dy[r, :], every vocabulary row summing its positions in increasing r.
// counts: vocab ints of scratch. One block per vocabulary row; a row that occurs scans the ids
// (cost O(distinct ids x rows) id reads, from L2), a row that does not exits at once.
template <typename T>
cudaError_t embedding_backward(const int32_t* ids, const T* dy, T* dweight, int64_t rows, int64_t vocab,
                               int64_t dim, int* counts, cudaStream_t stream);
// lse[r] = logsumexp(logits[r, :]); result[0] = sum of lse_r - x[r, t_r] over counted rows,
// result[1] = their count; *bad_row (UINT64_MAX from the caller) = the first row whose target is
// neither ignore_index nor in [0, vocab). scratch: cross_entropy_scratch_bytes(rows).
size_t cross_entropy_scratch_bytes(int64_t rows);
template <typename T>
cudaError_t cross_entropy_forward(const T* logits, const int32_t* targets, int32_t ignore_index,
                                  int64_t rows, int64_t vocab, T* lse, double* result,
                                  unsigned long long* bad_row, void* scratch, cudaStream_t stream);
template <typename T>
cudaError_t cross_entropy_backward(const T* logits, const int32_t* targets, int32_t ignore_index,
                                   const T* lse, T scale, T* dlogits, int64_t rows, int64_t vocab,
                                   cudaStream_t stream);

// ---- normalization (kernels_norm.cu); gamma, beta, weight may be null (no affine) ----
// GroupNorm/LayerNorm and RMSNorm take T = float, double, __half or __nv_bfloat16 (storage): the
// 16-bit types are computed in float32 with float32 statistics and each output rounded once, except
// RMSNorm without unit_offset (LLaMA), which rounds x rstd to T before the weight (core/backend.h).
template <typename T> struct NormAcc {
  using type = T;
};
template <> struct NormAcc<__half> {
  using type = float;
};
template <> struct NormAcc<__nv_bfloat16> {
  using type = float;
};
template <typename T> using norm_acc_t = typename NormAcc<T>::type;

// Segments of n = C / groups values (LayerNorm: groups = 1); mean, rstd: (rows * groups).
template <typename T>
cudaError_t group_norm_forward(const T* x, const T* gamma, const T* beta, int64_t rows, int64_t C,
                               int64_t groups, double eps, T* y, norm_acc_t<T>* mean,
                               norm_acc_t<T>* rstd, cudaStream_t stream);
// One fused pass: dx (null: skipped) and the partial sums of dgamma = sum_rows dy xhat and
// dbeta = sum_rows dy per block of rows, then a second kernel adds the partials in block order
// (either output may be null). scratch: norm_backward_scratch_bytes(rows * groups, C,
// sizeof(norm_acc_t<T>)).
size_t norm_backward_scratch_bytes(int64_t segments, int64_t C, size_t acc_bytes);
template <typename T>
cudaError_t group_norm_backward(const T* dy, const T* x, const T* gamma, const norm_acc_t<T>* mean,
                                const norm_acc_t<T>* rstd, int64_t rows, int64_t C, int64_t groups,
                                T* dx, T* dgamma, T* dbeta, void* scratch, cudaStream_t stream);
template <typename T>
cudaError_t rms_norm_forward(const T* x, const T* weight, int64_t rows, int64_t C, double eps,
                             bool unit_offset, T* y, norm_acc_t<T>* rstd, cudaStream_t stream);
// dx (null: skipped) and dweight = sum_rows dy x rstd (null: skipped), as group_norm_backward.
template <typename T>
cudaError_t rms_norm_backward(const T* dy, const T* x, const T* weight, const norm_acc_t<T>* rstd, int64_t rows,
                              int64_t C, bool unit_offset, T* dx, T* dweight, void* scratch,
                              cudaStream_t stream);
// BatchNorm: scratch column_scratch_bytes(rows, C, sizeof(T)).
// Statistics per channel over all rows; mean, rstd: (C).
template <typename T>
cudaError_t batch_norm_forward(const T* x, const T* gamma, const T* beta, int64_t rows, int64_t C,
                               double eps, T* y, T* mean, T* rstd, void* scratch, cudaStream_t stream);
template <typename T>
cudaError_t batch_norm_backward(const T* dy, const T* x, const T* gamma, const T* mean, const T* rstd,
                                int64_t rows, int64_t C, T* dx, T* dgamma, T* dbeta, void* scratch,
                                cudaStream_t stream);

// ---- optimizer updates (kernels_optim.cu); constants precomputed on the host in double ----
struct AdamConstants {
  double beta1, beta2, lr, weight_decay, eps, step_size, inv_sqrt_bc2;
  bool decoupled;
};
template <typename T>
cudaError_t adam_step(const AdamConstants& c, T* param, const T* grad, T* m, T* v, int64_t n,
                      cudaStream_t stream);
template <typename T>
cudaError_t sgd_step(double lr, double momentum, double weight_decay, T* param, const T* grad, T* buf,
                     int64_t n, cudaStream_t stream);
struct RAdamConstants {
  double beta1, beta2, weight_decay, eps, momentum_size, adaptive_size;
  bool adaptive;
};
template <typename T>
cudaError_t radam_step(const RAdamConstants& c, T* param, const T* grad, T* m, T* v, int64_t n,
                       cudaStream_t stream);

}  // namespace normlab::cuda
