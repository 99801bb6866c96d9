// Half precision on the CPU. HalfStagingBackend sits in front of the float kernels (CpuBackend)
// and stages each kernel call whose tensors are half (core/half_staging.h: float32 copies in, the
// float32 kernel, outputs rounded once back into their half tensors).
//
// Kernels that handle half themselves pass straight through: memory, fill, copy (they convert),
// copy_columns and embedding_forward (byte copies), sum_squares, all_finite and reduce_axis (they
// read half and accumulate in double), gemm, softmax and layer_norm/rms_norm (their own files). The
// optimizer steps refuse half parameters: the parameters an optimizer updates are float32 master
// weights.
#pragma once
#include "core/backend.h"
#include "core/half_staging.h"

namespace normlab {

class HalfStagingBackend final : public Backend {
 public:
  explicit HalfStagingBackend(Backend& kernels) : k_(kernels) {}
  Device device() const override { return k_.device(); }

  void* allocate(size_t bytes) override { return k_.allocate(bytes); }
  void deallocate(void* ptr, size_t bytes) noexcept override { k_.deallocate(ptr, bytes); }
  void copy_to_host(void* host_dst, const void* src, size_t bytes) override {
    k_.copy_to_host(host_dst, src, bytes);
  }
  void copy_from_host(void* dst, const void* host_src, size_t bytes) override {
    k_.copy_from_host(dst, host_src, bytes);
  }
  void fill(Tensor& out, double value) override { k_.fill(out, value); }
  void copy_strided(const Tensor& src, Tensor& dst) override { k_.copy_strided(src, dst); }
  void copy_columns(const Tensor& src, int64_t src_start, Tensor& dst, int64_t dst_start,
                    int64_t length) override {
    k_.copy_columns(src, src_start, dst, dst_start, length);
  }

  void unary(UnaryOp op, const Tensor& x, Tensor& y, double alpha) override;
  void unary_backward(UnaryOp op, const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx,
                      double alpha) override;
  void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) override;
  void axpy(double alpha, const Tensor& x, Tensor& y) override;

  void reduce_axis(ReduceOp op, const Tensor& x, int axis, Tensor& out) override {
    k_.reduce_axis(op, x, axis, out);
  }
  void sum_to_shape(const Tensor& x, Tensor& out) override;
  double sum_squares(const Tensor& x) override { return k_.sum_squares(x); }
  bool all_finite(const Tensor& x) override { return k_.all_finite(x); }

  void gemm(const GemmArgs& args, const Tensor& a, const Tensor& b, Tensor& c) override {
    k_.gemm(args, a, b, c);
  }

  void softmax(const SoftmaxArgs& args, const Tensor& x, Tensor& y) override { k_.softmax(args, x, y); }
  void softmax_backward(double scale, const Tensor& y, const Tensor& dy, Tensor& dx) override {
    k_.softmax_backward(scale, y, dy, dx);
  }

  NORMLAB_NORM_KERNEL_OVERRIDES  // layer_norm, rms_norm: their own 16-bit kernels; the others staged

  void embedding_forward(const Tensor& weight, const Tensor& ids, Tensor& out) override {
    k_.embedding_forward(weight, ids, out);
  }
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
  Backend& k_;  // the float32/float64 kernels
};

}  // namespace normlab
