// The CUDA backend: device memory through a caching allocator over plain cudaMalloc (never managed
// memory), one stream for every kernel, copy and cuBLAS call (so stream order alone makes a freed
// block safe to hand out again), cuBLAS for GEMMs and hand-written kernels for the rest
// (core/cuda/kernels.h). Host code lives in backend_*.cpp, kernels in kernels_*.cu.
// One device: every Device::cuda(i) maps to device 0 (multi-GPU is not supported yet).
// Errors: "[cuda] <call> failed: <cudaGetErrorString>" (cuBLAS: cublasGetStatusString).
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <vector>

#include "core/backend.h"
#include "core/half_staging.h"

namespace normlab {

class CudaBackend final : public Backend {
 public:
  CudaBackend();
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;
  Device device() const override { return Device::cuda(0); }

  // Blocks are rounded up to a size class (at most 25% slack) and kept in per-class free lists
  // when released; trim_cache() returns the unused ones to the driver.
  void* allocate(size_t bytes) override;
  void deallocate(void* ptr, size_t bytes) noexcept override;
  void copy_to_host(void* host_dst, const void* src, size_t bytes) override;
  void copy_from_host(void* dst, const void* host_src, size_t bytes) override;
  size_t trim_cache();  // bytes released
  cudaStream_t stream() const { return stream_; }

  void fill(Tensor& out, double value) override;
  void copy_strided(const Tensor& src, Tensor& dst) override;
  void copy_columns(const Tensor& src, int64_t src_start, Tensor& dst, int64_t dst_start,
                    int64_t length) override;

  void unary(UnaryOp op, const Tensor& x, Tensor& y, double alpha) override;
  void unary_backward(UnaryOp op, const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx,
                      double alpha) override;
  void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) override;
  void axpy(double alpha, const Tensor& x, Tensor& y) override;

  void reduce_axis(ReduceOp op, const Tensor& x, int axis, Tensor& out) override;
  void sum_to_shape(const Tensor& x, Tensor& out) override;
  double sum_squares(const Tensor& x) override;
  bool all_finite(const Tensor& x) override;

  void gemm(const GemmArgs& args, const Tensor& a, const Tensor& b, Tensor& c) override;

  void softmax(const SoftmaxArgs& args, const Tensor& x, Tensor& y) override;
  void softmax_backward(double scale, const Tensor& y, const Tensor& dy, Tensor& dx) override;

  NORMLAB_NORM_KERNEL_OVERRIDES

  void embedding_forward(const Tensor& weight, const Tensor& ids, Tensor& out) override;
  void embedding_backward(const Tensor& ids, const Tensor& dy, Tensor& dweight) override;

  double cross_entropy_forward(const Tensor& logits, const Tensor& targets, int32_t ignore_index,
                               Tensor& lse) override;
  void cross_entropy_backward(const Tensor& logits, const Tensor& targets, int32_t ignore_index,
                              const Tensor& lse, double scale, Tensor& dlogits) override;

  void dropout_mask(uint64_t seed, double p, Tensor& mask) override;

  void adam_step(const AdamArgs& args, Tensor& param, const Tensor& grad, Tensor& m,
                 Tensor& v) override;
  void sgd_step(double lr, double momentum, double weight_decay, Tensor& param, const Tensor& grad,
                Tensor& momentum_buf) override;
  void radam_step(const RAdamArgs& args, Tensor& param, const Tensor& grad, Tensor& m,
                  Tensor& v) override;

 private:
  // The 16-bit path of the ops without a 16-bit kernel here (all but the GEMM, the row norms and the
  // copies): `kernel` runs on float32 copies of the call's bfloat16/float16 tensors and its outputs
  // are rounded back once (core/half_staging.h), the CPU's rule. True when a tensor was 16-bit.
  template <typename Kernel>
  bool staged_half(const char* op, std::initializer_list<const Tensor*> inputs,
                   std::initializer_list<Tensor*> outputs, Kernel&& kernel) {
    bool any = false;
    for (const Tensor* t : inputs) any |= t->defined() && is_half(t->dtype());
    for (const Tensor* t : outputs) any |= t->defined() && is_half(t->dtype());
    if (!any) return false;
    HalfStaging staging(*this, op, inputs, outputs);
    kernel(staging);
    staging.store_outputs();
    return true;
  }

  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  std::mutex mutex_;
  std::map<size_t, std::vector<void*>> free_blocks_;  // size class -> cached blocks
  size_t cached_bytes_ = 0;
};

// The process-wide CUDA backend as its concrete type (cuda_backend() returns the same object).
CudaBackend& the_cuda_backend();

// Throws "[cuda] <call> failed: <reason>" when err is not cudaSuccess.
void cuda_check(cudaError_t err, const char* call);
#define NL_CUDA(call) ::normlab::cuda_check((call), #call)
// After a kernel launcher (core/cuda/kernels.h): "[cuda] <kernel> kernel failed: <reason>".
void check_kernel(cudaError_t err, const char* kernel);

// A temporary device buffer from the caching allocator, released when it goes out of scope
// (safe while kernels that use it are still queued: every user of the block is on one stream).
class DeviceScratch {
 public:
  DeviceScratch(CudaBackend& backend, size_t bytes)
      : backend_(backend), bytes_(bytes > 0 ? bytes : 1), ptr_(backend.allocate(bytes_)) {}
  ~DeviceScratch() { backend_.deallocate(ptr_, bytes_); }
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
  void* get() const { return ptr_; }
  template <typename T> T* as() const { return static_cast<T*>(ptr_); }

 private:
  CudaBackend& backend_;
  size_t bytes_;
  void* ptr_;
};

// Calls f(T{}) with T = float or double matching dtype; throws "[op] expected float32 or float64" else.
template <typename F>
decltype(auto) cuda_dispatch(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DType::F32: return f(float{});
    case DType::F64: return f(double{});
    default: fail(op, "expected float32 or float64 on cuda, got {}", dtype_name(dtype));
  }
}

template <typename T> const T* data_or_null(const Tensor& t) {
  return t.defined() ? static_cast<const T*>(t.raw_data()) : nullptr;
}
template <typename T> T* mutable_data_or_null(Tensor& t) {
  return t.defined() ? static_cast<T*>(t.raw_data()) : nullptr;
}
template <typename T> const T* dev(const Tensor& t) { return static_cast<const T*>(t.raw_data()); }
template <typename T> T* dev(Tensor& t) { return static_cast<T*>(t.raw_data()); }

}  // namespace normlab
