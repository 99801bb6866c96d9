// Tensor-level normalization ops without autograd (the fused kernels of core/backend.h behind
// argument checks). Each forward returns its output and the statistics its backward needs; each
// backward returns dx and, when asked, the affine gradients (undefined otherwise).
// Shapes: x (..., C) viewed as (rows, C); gamma, beta, weight (C,) or undefined (no affine).
// Errors name the op and the shapes: "[layer_norm] gamma must have shape (8,) to match x (3, 5, 8), got (7,)".
#pragma once
#include "core/tensor.h"

namespace normlab::ops {

struct NormForward {
  Tensor y;
  Tensor mean;  // undefined for RMSNorm
  Tensor rstd;  // 1 / sqrt(var + eps)   (RMSNorm: 1 / sqrt(mean(x^2) + eps))
};

struct NormBackward {
  Tensor dx;
  Tensor dgamma;  // RMSNorm: dweight
  Tensor dbeta;
};

// LayerNorm over the last axis, biased variance. mean, rstd: (...,) = x.shape without C.
NormForward layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps);
NormBackward layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                 const NormForward& saved, bool need_dgamma, bool need_dbeta);

// RMSNorm: y = x rstd g with g = weight, or 1 + weight when unit_offset (Gemma). eps must be > 0.
// rstd: (...,).
NormForward rms_norm(const Tensor& x, const Tensor& weight, double eps, bool unit_offset);
NormBackward rms_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& weight,
                               const NormForward& saved, bool unit_offset, bool need_dweight);

// GroupNorm: C split into `groups` contiguous groups, statistics per (row, group).
// mean, rstd: (..., groups).
NormForward group_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, int64_t groups,
                       double eps);
NormBackward group_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                 const NormForward& saved, int64_t groups, bool need_dgamma,
                                 bool need_dbeta);

// BatchNorm with batch statistics: per channel over all rows (biased variance). mean, rstd: (C,).
NormForward batch_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps);
NormBackward batch_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                 const NormForward& saved, bool need_dgamma, bool need_dbeta);

// Checks shared with autograd/ops/norm.cpp: x floating with C > 0, param (C,) of x's dtype when
// defined ("[op] name must have shape (C,) to match x (...), got (...)").
void check_norm_input(const Tensor& x, const char* op);
void check_norm_param(const Tensor& param, const Tensor& x, const char* op, const char* name);

}  // namespace normlab::ops
