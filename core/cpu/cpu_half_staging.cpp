// HalfStagingBackend's staged kernels (see cpu_half_staging.h; HalfStaging is core/half_staging.h).
#include "core/cpu/cpu_half_staging.h"

namespace normlab {

// ---- staged kernels: stage, run the float kernel, store ----

// unary, unary_backward, binary and axpy: core/cpu/cpu_half_elementwise.cpp.

void HalfStagingBackend::sum_to_shape(const Tensor& x, Tensor& out) {
  HalfStaging s(k_, "sum_to_shape", {&x}, {&out});
  k_.sum_to_shape(s.in(0), s.out(0));
  s.store_outputs();
}

// layer_norm and rms_norm read and write 16-bit tensors themselves (core/cpu/cpu_norm.cpp).
void HalfStagingBackend::layer_norm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps,
                                            Tensor& y, Tensor& mean, Tensor& rstd) {
  k_.layer_norm_forward(x, gamma, beta, eps, y, mean, rstd);
}
void HalfStagingBackend::layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                             const Tensor& mean, const Tensor& rstd, Tensor& dx, Tensor& dgamma,
                                             Tensor& dbeta) {
  k_.layer_norm_backward(dy, x, gamma, mean, rstd, dx, dgamma, dbeta);
}
void HalfStagingBackend::rms_norm_forward(const Tensor& x, const Tensor& weight, double eps, bool unit_offset,
                                          Tensor& y, Tensor& rstd) {
  k_.rms_norm_forward(x, weight, eps, unit_offset, y, rstd);
}
void HalfStagingBackend::rms_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& weight,
                                           const Tensor& rstd, bool unit_offset, Tensor& dx, Tensor& dweight) {
  k_.rms_norm_backward(dy, x, weight, rstd, unit_offset, dx, dweight);
}

void HalfStagingBackend::group_norm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                            int64_t groups, double eps, Tensor& y, Tensor& mean,
                                            Tensor& rstd) {
  HalfStaging s(k_, "group_norm", {&x, &gamma, &beta}, {&y, &mean, &rstd});
  k_.group_norm_forward(s.in(0), s.in(1), s.in(2), groups, eps, s.out(0), s.out(1), s.out(2));
  s.store_outputs();
}

void HalfStagingBackend::group_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                             const Tensor& mean, const Tensor& rstd, int64_t groups,
                                             Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  HalfStaging s(k_, "group_norm_backward", {&dy, &x, &gamma, &mean, &rstd}, {&dx, &dgamma, &dbeta});
  k_.group_norm_backward(s.in(0), s.in(1), s.in(2), s.in(3), s.in(4), groups, s.out(0), s.out(1),
                         s.out(2));
  s.store_outputs();
}

void HalfStagingBackend::batch_norm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                            double eps, Tensor& y, Tensor& mean, Tensor& rstd) {
  HalfStaging s(k_, "batch_norm", {&x, &gamma, &beta}, {&y, &mean, &rstd});
  k_.batch_norm_forward(s.in(0), s.in(1), s.in(2), eps, s.out(0), s.out(1), s.out(2));
  s.store_outputs();
}

void HalfStagingBackend::batch_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                             const Tensor& mean, const Tensor& rstd, Tensor& dx,
                                             Tensor& dgamma, Tensor& dbeta) {
  HalfStaging s(k_, "batch_norm_backward", {&dy, &x, &gamma, &mean, &rstd}, {&dx, &dgamma, &dbeta});
  k_.batch_norm_backward(s.in(0), s.in(1), s.in(2), s.in(3), s.in(4), s.out(0), s.out(1), s.out(2));
  s.store_outputs();
}

void HalfStagingBackend::embedding_backward(const Tensor& ids, const Tensor& dy, Tensor& dweight) {
  HalfStaging s(k_, "embedding_backward", {&dy}, {&dweight});
  k_.embedding_backward(ids, s.in(0), s.out(0));
  s.store_outputs();
}

double HalfStagingBackend::cross_entropy_forward(const Tensor& logits, const Tensor& targets,
                                                 int32_t ignore_index, Tensor& lse) {
  HalfStaging s(k_, "cross_entropy", {&logits}, {&lse});
  const double loss = k_.cross_entropy_forward(s.in(0), targets, ignore_index, s.out(0));
  s.store_outputs();
  return loss;
}

void HalfStagingBackend::cross_entropy_backward(const Tensor& logits, const Tensor& targets,
                                                int32_t ignore_index, const Tensor& lse,
                                                double scale, Tensor& dlogits) {
  HalfStaging s(k_, "cross_entropy_backward", {&logits, &lse}, {&dlogits});
  k_.cross_entropy_backward(s.in(0), targets, ignore_index, s.in(1), scale, s.out(0));
  s.store_outputs();
}

void HalfStagingBackend::dropout_mask(uint64_t seed, double p, Tensor& mask) {
  HalfStaging s(k_, "dropout", {}, {&mask});
  k_.dropout_mask(seed, p, s.out(0));
  s.store_outputs();
}

// ---- optimizers: float32 master weights only ----

static void refuse_half_params(const char* op, const Tensor& param) {
  NL_CHECK(!is_half(param.dtype()), op,
           "parameters are {}: optimizers update float32 master weights (keep a float32 copy and "
           "cast it to half for compute)",
           dtype_name(param.dtype()));
}

void HalfStagingBackend::adam_step(const AdamArgs& args, Tensor& param, const Tensor& grad,
                                   Tensor& m, Tensor& v) {
  refuse_half_params("adam", param);
  k_.adam_step(args, param, grad, m, v);
}

void HalfStagingBackend::sgd_step(double lr, double momentum, double weight_decay, Tensor& param,
                                  const Tensor& grad, Tensor& momentum_buf) {
  refuse_half_params("sgd", param);
  k_.sgd_step(lr, momentum, weight_decay, param, grad, momentum_buf);
}

void HalfStagingBackend::radam_step(const RAdamArgs& args, Tensor& param, const Tensor& grad,
                                    Tensor& m, Tensor& v) {
  refuse_half_params("radam", param);
  k_.radam_step(args, param, grad, m, v);
}

}  // namespace normlab
