#include "core/norm_ops.h"

#include <cmath>

#include "core/backend.h"
#include "core/profiler.h"

namespace normlab::ops {

namespace {

Tensor contiguous_or_undefined(const Tensor& t) { return t.defined() ? t.contiguous() : t; }

// x.shape without its last axis, with `extra` appended when > 0: the shape of per-row statistics.
Shape stats_shape(const Tensor& x, int64_t extra = 0) {
  Shape s(x.shape().begin(), x.shape().end() - 1);
  if (extra > 0) s.push_back(extra);
  return s;
}

// Norm statistics (mean, rstd) are kept in float32 when x is a 16-bit type (core/backend.h).
DType stats_dtype(const Tensor& x) { return is_half(x.dtype()) ? DType::F32 : x.dtype(); }

Tensor empty_stats(const Tensor& x, int64_t extra = 0) {
  return Tensor::empty(stats_shape(x, extra), stats_dtype(x), x.device());
}

void check_eps(double eps, const char* op, bool strictly_positive) {
  const bool ok = std::isfinite(eps) && (strictly_positive ? eps > 0 : eps >= 0);
  NL_CHECK(ok, op, "eps must be {}, got {}", strictly_positive ? "> 0" : ">= 0", eps);
}

void check_backward_args(const Tensor& dy, const Tensor& x, const NormForward& saved, const char* op) {
  check_same_shape(dy, x, op, "dy", "x");
  check_same_dtype(dy, x, op);
  NL_CHECK(saved.rstd.defined(), op, "backward needs the rstd saved by forward");
}

// The per-row norms (layer, rms, group) keep 16-bit inputs' statistics in float32.
void check_saved_stats(const Tensor& x, const NormForward& saved, const char* op) {
  for (const Tensor* stat : {&saved.mean, &saved.rstd})
    NL_CHECK(!stat->defined() || stat->dtype() == stats_dtype(x), op,
             "saved statistics must be {} for x of dtype {}, got {}", dtype_name(stats_dtype(x)),
             dtype_name(x.dtype()), dtype_name(stat->dtype()));
}

Tensor empty_like_if(bool needed, const Tensor& x) {
  return needed ? Tensor::empty({x.size(-1)}, x.dtype(), x.device()) : Tensor();
}

}  // namespace

void check_norm_input(const Tensor& x, const char* op) {
  check_defined(x, op, "x");
  NL_CHECK(is_floating(x.dtype()), op, "x must be float32, float64, bfloat16 or float16, got {}",
           dtype_name(x.dtype()));
  NL_CHECK(x.dim() >= 1 && x.size(-1) > 0, op, "x must have a non-empty last axis, got {}",
           shape_str(x.shape()));
}

void check_norm_param(const Tensor& param, const Tensor& x, const char* op, const char* name) {
  if (!param.defined()) return;
  NL_CHECK(param.shape() == Shape{x.size(-1)}, op, "{} must have shape ({},) to match x {}, got {}",
           name, x.size(-1), shape_str(x.shape()), shape_str(param.shape()));
  NL_CHECK(param.dtype() == x.dtype(), op, "{} has dtype {} but x has {}", name,
           dtype_name(param.dtype()), dtype_name(x.dtype()));
  NL_CHECK(param.device() == x.device(), op, "{} is on {} but x is on {}", name,
           param.device().str(), x.device().str());
}

// ---- LayerNorm ----

NormForward layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  ProfileScope scope(OpFamily::Norm);
  check_norm_input(x, "layer_norm");
  check_norm_param(gamma, x, "layer_norm", "gamma");
  check_norm_param(beta, x, "layer_norm", "beta");
  check_eps(eps, "layer_norm", false);
  NormForward f{Tensor::empty(x.shape(), x.dtype(), x.device()), empty_stats(x), empty_stats(x)};
  backend_for(x.device()).layer_norm_forward(x.contiguous(), contiguous_or_undefined(gamma),
                                             contiguous_or_undefined(beta), eps, f.y, f.mean, f.rstd);
  return f;
}

NormBackward layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                 const NormForward& saved, bool need_dgamma, bool need_dbeta) {
  ProfileScope scope(OpFamily::Norm);
  check_backward_args(dy, x, saved, "layer_norm_backward");
  check_saved_stats(x, saved, "layer_norm_backward");
  NormBackward b{Tensor::empty(x.shape(), x.dtype(), x.device()), empty_like_if(need_dgamma, x),
                 empty_like_if(need_dbeta, x)};
  backend_for(x.device()).layer_norm_backward(dy.contiguous(), x.contiguous(),
                                              contiguous_or_undefined(gamma), saved.mean,
                                              saved.rstd, b.dx, b.dgamma, b.dbeta);
  return b;
}

// ---- RMSNorm ----

NormForward rms_norm(const Tensor& x, const Tensor& weight, double eps, bool unit_offset) {
  ProfileScope scope(OpFamily::Norm);
  check_norm_input(x, "rms_norm");
  check_norm_param(weight, x, "rms_norm", "weight");
  check_eps(eps, "rms_norm", true);
  NormForward f{Tensor::empty(x.shape(), x.dtype(), x.device()), Tensor(), empty_stats(x)};
  backend_for(x.device()).rms_norm_forward(x.contiguous(), contiguous_or_undefined(weight), eps,
                                           unit_offset, f.y, f.rstd);
  return f;
}

NormBackward rms_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& weight,
                               const NormForward& saved, bool unit_offset, bool need_dweight) {
  ProfileScope scope(OpFamily::Norm);
  check_backward_args(dy, x, saved, "rms_norm_backward");
  check_saved_stats(x, saved, "rms_norm_backward");
  NormBackward b{Tensor::empty(x.shape(), x.dtype(), x.device()), empty_like_if(need_dweight, x),
                 Tensor()};
  backend_for(x.device()).rms_norm_backward(dy.contiguous(), x.contiguous(),
                                            contiguous_or_undefined(weight), saved.rstd,
                                            unit_offset, b.dx, b.dgamma);
  return b;
}

// ---- GroupNorm ----

NormForward group_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, int64_t groups,
                       double eps) {
  ProfileScope scope(OpFamily::Norm);
  check_norm_input(x, "group_norm");
  NL_CHECK(groups > 0 && x.size(-1) % groups == 0, "group_norm",
           "groups must divide the channels: C = {} (x {}) is not divisible by {} groups",
           x.size(-1), shape_str(x.shape()), groups);
  check_norm_param(gamma, x, "group_norm", "gamma");
  check_norm_param(beta, x, "group_norm", "beta");
  check_eps(eps, "group_norm", false);
  NormForward f{Tensor::empty(x.shape(), x.dtype(), x.device()), empty_stats(x, groups),
                empty_stats(x, groups)};
  backend_for(x.device()).group_norm_forward(x.contiguous(), contiguous_or_undefined(gamma),
                                             contiguous_or_undefined(beta), groups, eps, f.y,
                                             f.mean, f.rstd);
  return f;
}

NormBackward group_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                 const NormForward& saved, int64_t groups, bool need_dgamma,
                                 bool need_dbeta) {
  ProfileScope scope(OpFamily::Norm);
  check_backward_args(dy, x, saved, "group_norm_backward");
  check_saved_stats(x, saved, "group_norm_backward");
  NormBackward b{Tensor::empty(x.shape(), x.dtype(), x.device()), empty_like_if(need_dgamma, x),
                 empty_like_if(need_dbeta, x)};
  backend_for(x.device()).group_norm_backward(dy.contiguous(), x.contiguous(),
                                              contiguous_or_undefined(gamma), saved.mean,
                                              saved.rstd, groups, b.dx, b.dgamma, b.dbeta);
  return b;
}

// ---- BatchNorm (batch statistics) ----

NormForward batch_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  ProfileScope scope(OpFamily::Norm);
  check_norm_input(x, "batch_norm");
  check_norm_param(gamma, x, "batch_norm", "gamma");
  check_norm_param(beta, x, "batch_norm", "beta");
  check_eps(eps, "batch_norm", false);
  NL_CHECK(x.numel() > 0, "batch_norm", "batch statistics need at least one row, got x {}",
           shape_str(x.shape()));
  const int64_t C = x.size(-1);
  NormForward f{Tensor::empty(x.shape(), x.dtype(), x.device()),
                Tensor::empty({C}, x.dtype(), x.device()), Tensor::empty({C}, x.dtype(), x.device())};
  backend_for(x.device()).batch_norm_forward(x.contiguous(), contiguous_or_undefined(gamma),
                                             contiguous_or_undefined(beta), eps, f.y, f.mean, f.rstd);
  return f;
}

NormBackward batch_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                 const NormForward& saved, bool need_dgamma, bool need_dbeta) {
  ProfileScope scope(OpFamily::Norm);
  check_backward_args(dy, x, saved, "batch_norm_backward");
  NormBackward b{Tensor::empty(x.shape(), x.dtype(), x.device()), empty_like_if(need_dgamma, x),
                 empty_like_if(need_dbeta, x)};
  backend_for(x.device()).batch_norm_backward(dy.contiguous(), x.contiguous(),
                                              contiguous_or_undefined(gamma), saved.mean,
                                              saved.rstd, b.dx, b.dgamma, b.dbeta);
  return b;
}

}  // namespace normlab::ops
