// The backend interface: every kernel normlab runs, chosen by device. Op code (core/ops.h,
// autograd/) calls these and never asks which device it is on; the CPU implementation lives in
// core/cpu/, the CUDA one in core/cuda/ (its own library, which registers itself: see cuda_backend()).
//
// Conventions for every kernel below:
//  * inputs and outputs are contiguous, on this backend's device, and already allocated with the
//    right shape by the caller (core/ops.cpp checks shapes and names the op in errors);
//  * floating tensors of one call share a dtype (float32, float64, or a half type: bfloat16 and
//    float16 are computed in float32, see core/cpu/cpu_half_staging.h); ids/targets are int32;
//  * "rows" means all leading axes flattened: x of shape (..., C) is (rows, C).
#pragma once
#include <cstdint>

#include "core/norm_kernels.h"
#include "core/tensor.h"

namespace normlab {

enum class UnaryOp { Neg, Exp, Log, Sqrt, Square, Tanh, Relu, Gelu, Silu, Scale, AddScalar };
enum class BinaryOp { Add, Sub, Mul, Div };
enum class ReduceOp { Sum, Mean, Max };

// C[b] = alpha * op(A[b]) @ op(B[b]) + beta * C[b] for b in [0, batch).
// op(A) is (M, K), op(B) is (K, N), C is (M, N), all row-major. A stride of 0 broadcasts one matrix
// over the batch (a weight shared by every head/sequence).
struct GemmArgs {
  bool trans_a = false, trans_b = false;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // elements between batch entries
  double alpha = 1.0, beta = 0.0;
};

// y = softmax(scale * x) over the last axis. causal: x is (..., T, T) and row i sees columns j <= i,
// only i - window <= j <= i when window > 0 (window + 1 keys); the others get probability exactly 0.
struct SoftmaxArgs {
  bool causal = false;
  int64_t window = 0;  // causal only; 0: every j <= i
  double scale = 1.0;  // attention's 1 / sqrt(D), folded into the kernel
};

struct AdamArgs {
  double lr, beta1, beta2, eps, weight_decay;
  int64_t step;       // 1-based, for bias correction
  bool decoupled;     // true: AdamW (decay the weight), false: Adam (decay added to the gradient)
};

// RAdam (Liu et al. 2020). The optimizer computes the rectification r_t in double; the kernel does
// the elementwise part. rectification <= 0 means "SGD phase" (rho_t <= 5: momentum step, no v).
struct RAdamArgs {
  double lr, beta1, beta2, eps, weight_decay;
  int64_t step;          // 1-based, for bias correction
  double rectification;  // r_t, or 0 in the un-adapted phase
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;

  // ---- memory ----
  // allocate throws OutOfMemory when the device has no room. deallocate runs in destructors
  // (Storage's): it never throws and never fails for want of memory.
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* ptr, size_t bytes) noexcept = 0;
  virtual void copy_to_host(void* host_dst, const void* src, size_t bytes) = 0;
  virtual void copy_from_host(void* dst, const void* host_src, size_t bytes) = 0;

  // ---- data movement ----
  virtual void fill(Tensor& out, double value) = 0;
  // dst (contiguous) = src (any strides, same shape), converting dtype if they differ.
  virtual void copy_strided(const Tensor& src, Tensor& dst) = 0;
  // Column-range copy over rows: viewing src as (rows, Cs) and dst as (rows, Cd),
  // dst[r, dst_start + j] = src[r, src_start + j] for j in [0, length); other columns of dst are
  // untouched. Same dtype. (narrow_last's forward copies a range out; its backward writes one into
  // a zero tensor.)
  virtual void copy_columns(const Tensor& src, int64_t src_start, Tensor& dst, int64_t dst_start,
                            int64_t length) = 0;

  // ---- elementwise ----
  // y = f(x); alpha is the constant of Scale (y = alpha x) and AddScalar (y = x + alpha).
  virtual void unary(UnaryOp op, const Tensor& x, Tensor& y, double alpha = 0.0) = 0;
  // dx = dy * f'(x) (y = f(x) is passed too, for ops whose derivative is cheaper from it).
  virtual void unary_backward(UnaryOp op, const Tensor& x, const Tensor& y, const Tensor& dy,
                              Tensor& dx, double alpha = 0.0) = 0;
  // out = a (op) b with numpy broadcasting of a and b to out's shape.
  virtual void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) = 0;
  // y += alpha * x (same shape): gradient accumulation.
  virtual void axpy(double alpha, const Tensor& x, Tensor& y) = 0;

  // ---- reductions ----
  // out[o, i] = reduce_j x[o, j, i], viewing x as (outer, x.shape[axis], inner).
  virtual void reduce_axis(ReduceOp op, const Tensor& x, int axis, Tensor& out) = 0;
  // out = x summed over the axes that were broadcast to reach x's shape from out's shape
  // (the one place that un-broadcasts gradients).
  virtual void sum_to_shape(const Tensor& x, Tensor& out) = 0;
  // sum of squares of all elements (for gradient norms), accumulated in double.
  virtual double sum_squares(const Tensor& x) = 0;
  // true when every element is finite.
  virtual bool all_finite(const Tensor& x) = 0;

  // ---- matrix products ----
  virtual void gemm(const GemmArgs& args, const Tensor& a, const Tensor& b, Tensor& c) = 0;

  // ---- softmax over the last axis, of scale * x (SoftmaxArgs) ----
  virtual void softmax(const SoftmaxArgs& args, const Tensor& x, Tensor& y) = 0;
  // dx = scale * y * (dy - sum_j dy_j y_j) per row (masked entries have y = 0, so dx = 0).
  virtual void softmax_backward(double scale, const Tensor& y, const Tensor& dy, Tensor& dx) = 0;

  // ---- normalization (rows of length C; row statistics accumulated in double for every dtype;
  //      CPU weight-gradient sums in the dtype over blocks of 16 rows, in double across blocks) ----
  // gamma/beta may be undefined (no affine). mean, rstd: (rows,).
  // 16-bit storage (LayerNorm, RMSNorm, GroupNorm): x, the weights, y, dy, dx and the weight
  // gradients are all bfloat16 (or all float16); mean and rstd are float32 (never rounded to 16
  // bits: 300^2 overflows float16); everything is computed in float32 and each output rounded once,
  // except RMSNorm's cast order, which follows unit_offset as each Hugging Face family does:
  //   unit_offset = false (LLaMA, Mistral, Mixtral, Qwen): y = round(round(x rstd) w)
  //   unit_offset = true  (Gemma):                          y = round(x rstd (1 + w))
  // LayerNorm: y = round(xhat gamma + beta). Backward treats those roundings as the identity.
  // In float32/float64 the orders coincide (no rounding between the steps).
  // The kernels of core/norm_kernels.h (layer_norm_forward/backward, rms_norm_*, group_norm_*,
  // batch_norm_*), each with a default that throws "[name] not implemented on <device>":
  //   layer_norm:  mean, rstd (rows,); dgamma/dbeta are overwritten (not accumulated), skipped
  //                when undefined.
  //   rms_norm:    y = x * rstd * (unit_offset ? 1 + w : w), rstd = 1/sqrt(mean(x^2) + eps), (rows,).
  //   group_norm:  x (rows, C), C split into `groups` contiguous groups; mean, rstd (rows, groups).
  //   batch_norm:  batch statistics per channel over all rows: x (rows, C); mean, rstd (C,).
  NORMLAB_NORM_KERNELS(NORMLAB_DECLARE_NORM_DEFAULT)

  // ---- embedding ----
  // out[r, :] = weight[ids[r], :]; ids int32 (rows,), weight (V, C). Ids out of range throw.
  virtual void embedding_forward(const Tensor& weight, const Tensor& ids, Tensor& out) = 0;
  // dweight[ids[r], :] += dy[r, :] (accumulates; repeated ids sum).
  virtual void embedding_backward(const Tensor& ids, const Tensor& dy, Tensor& dweight) = 0;

  // ---- cross-entropy fused with log-softmax ----
  // logits (N, V), targets int32 (N,); rows whose target == ignore_index do not count.
  // Writes lse (N,) = logsumexp per row and returns the mean loss over counted rows (0 if none).
  virtual double cross_entropy_forward(const Tensor& logits, const Tensor& targets,
                                       int32_t ignore_index, Tensor& lse) = 0;
  // dlogits = scale * (softmax(logits) - onehot(target)) on counted rows, 0 on ignored rows.
  virtual void cross_entropy_backward(const Tensor& logits, const Tensor& targets,
                                      int32_t ignore_index, const Tensor& lse, double scale,
                                      Tensor& dlogits) = 0;

  // ---- dropout ----
  // mask = (counter_uniform(seed, i) >= p) / (1 - p); y = x * mask.
  virtual void dropout_mask(uint64_t seed, double p, Tensor& mask) = 0;

  // ---- optimizer updates (in place) ----
  virtual void adam_step(const AdamArgs& args, Tensor& param, const Tensor& grad, Tensor& m,
                         Tensor& v) = 0;
  // p -= lr * (buf = momentum * buf + grad + wd * p)   (buf undefined when momentum == 0)
  virtual void sgd_step(double lr, double momentum, double weight_decay, Tensor& param,
                        const Tensor& grad, Tensor& momentum_buf) = 0;
  // g' = g + wd p;  m = b1 m + (1-b1) g';  v = b2 v + (1-b2) g'^2;  m^ = m / (1 - b1^t)
  // r_t > 0: p -= lr r_t m^ sqrt(1 - b2^t) / (sqrt(v) + eps);   else: p -= lr m^
  virtual void radam_step(const RAdamArgs& args, Tensor& param, const Tensor& grad, Tensor& m,
                          Tensor& v) = 0;
};

// The backend that owns `device`'s memory and kernels.
Backend& backend_for(Device device);
Backend& cpu_backend();
// The CUDA backend is a library of its own (normlab_cuda, CMake target normlab::cuda) that
// registers itself below when a program links it, so core needs no CUDA symbol. Without it,
// cuda_backend() throws "[cuda] ... not linked" and cuda_available() is false.
Backend& cuda_backend();
bool cuda_available();
// Returns the CUDA caching allocator's unused blocks to the driver (cudaFree); the bytes released
// (0 without CUDA or without a device).
size_t cuda_trim_cache();
// True when a CUDA backend has registered itself (the program links normlab_cuda).
bool cuda_backend_linked();

// What normlab_cuda hands to core when it registers (from a static initializer in core/cuda/).
struct CudaBackendHooks {
  Backend& (*backend)() = nullptr;   // the process-wide backend; throws [cuda] without a device
  bool (*available)() = nullptr;     // a device is present
  size_t (*trim_cache)() = nullptr;  // cuda_trim_cache's work
};
void register_cuda_backend(const CudaBackendHooks& hooks);

// Host memory held by tensors (the CPU backend's allocator): bytes in use now, the peak since the
// last reset, and freed blocks kept for reuse.
struct HostMemoryStats {
  size_t in_use = 0, peak = 0, cached = 0;
};
HostMemoryStats host_memory_stats();
void reset_host_memory_peak();

// Threads used by the CPU kernels and OpenBLAS (0 = leave the library defaults).
// n <= 0 (train.threads = 0, "all cores") means the idle cores: default_thread_count over
// /proc/loadavg's 1-minute load, so runs sharing a busy machine do not oversubscribe it.
void set_num_threads(int n);
// The cores the load leaves idle, rounded to the nearest core, at least 1 and at most `cores`.
int default_thread_count(int cores, double load_1min);
int num_threads();

}  // namespace normlab
