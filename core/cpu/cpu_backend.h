// The CPU backend's float32/float64 kernels. cpu_backend() puts HalfStagingBackend
// (cpu_half_staging.h) in front of them: it runs bfloat16/float16 calls through float32.
// GEMM through OpenBLAS, everything else as plain loops over rows that the
// compiler vectorises, parallelised over rows with OpenMP when the tensor is large enough to pay.
// Kernel bodies are split by family: cpu_memory.cpp, cpu_elementwise.cpp, cpu_reduce.cpp,
// cpu_gemm.cpp, cpu_softmax.cpp, cpu_norm.cpp, cpu_embedding.cpp, cpu_loss.cpp, cpu_optim.cpp.
#pragma once
#include <type_traits>
#include <utility>

#include "core/backend.h"

namespace normlab {

class CpuBackend final : public Backend {
 public:
  Device device() const override { return Device::cpu(); }

  void* allocate(size_t bytes) override;
  void deallocate(void* ptr, size_t bytes) noexcept override;
  void copy_to_host(void* host_dst, const void* src, size_t bytes) override;
  void copy_from_host(void* dst, const void* host_src, size_t bytes) override;

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
};

// Calls f(T{}) with T = float or double matching dtype; throws "[op] ... float32 or float64" else.
template <typename F>
decltype(auto) dispatch_floating(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DType::F32: return f(float{});
    case DType::F64: return f(double{});
    default: fail(op, "expected float32 or float64, got {}", dtype_name(dtype));
  }
}

// dispatch_floating plus the half types (bfloat16, float16), for kernels that read half directly
// (sum_squares, all_finite); load elements with as_double.
template <typename F>
decltype(auto) dispatch_floating_or_half(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DType::BF16: return f(bfloat16{});
    case DType::F16: return f(float16{});
    default: return dispatch_floating(dtype, op, std::forward<F>(f));
  }
}

// The type a kernel computes in for storage type S: float32 for the half types, S itself otherwise.
template <typename S> using compute_t = std::conditional_t<is_half_v<S>, float, S>;

template <typename T> double as_double(T v) {
  if constexpr (is_half_v<T>) return static_cast<double>(load_float(v));
  else return static_cast<double>(v);
}

// t's elements, or nullptr for an undefined (optional) tensor such as a norm without affine.
template <typename T> const T* data_or_null(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}
template <typename T> T* data_or_null(Tensor& t) { return t.defined() ? t.data<T>() : nullptr; }

// Rows above which a row-parallel loop is worth starting threads for.
constexpr int64_t kParallelElements = 1 << 15;

}  // namespace normlab
