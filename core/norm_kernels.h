// The fused normalization kernels, listed once: X(name, parameter list) per kernel. Backend
// (core/backend.h) declares each with a default that throws "[name] not implemented on <device>";
// CpuBackend, HalfStagingBackend and CudaBackend declare their overrides from this same list
// (NORMLAB_NORM_KERNEL_OVERRIDES), so a kernel added here is declared everywhere at once. A new
// fused kernel can land on one backend first: declare it in Backend (its default throws there) and
// override it on that backend alone; it joins this list once every backend has it. A norm needs no
// kernel at all to work: its composed forward (nn/norm_kinds.h) runs on every backend.
// Conventions (shapes, dtypes, accumulation) are in core/backend.h, before the list's use.
#pragma once

#define NORMLAB_NORM_KERNELS(X)                                                                          \
  X(layer_norm_forward, (const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps, Tensor& y, \
                         Tensor& mean, Tensor& rstd))                                                     \
  X(layer_norm_backward, (const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,     \
                          const Tensor& rstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta))                 \
  X(rms_norm_forward, (const Tensor& x, const Tensor& weight, double eps, bool unit_offset, Tensor& y,    \
                       Tensor& rstd))                                                                     \
  X(rms_norm_backward, (const Tensor& dy, const Tensor& x, const Tensor& weight, const Tensor& rstd,      \
                        bool unit_offset, Tensor& dx, Tensor& dweight))                                   \
  X(group_norm_forward, (const Tensor& x, const Tensor& gamma, const Tensor& beta, int64_t groups,        \
                         double eps, Tensor& y, Tensor& mean, Tensor& rstd))                              \
  X(group_norm_backward, (const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,     \
                          const Tensor& rstd, int64_t groups, Tensor& dx, Tensor& dgamma, Tensor& dbeta)) \
  X(batch_norm_forward, (const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps, Tensor& y, \
                         Tensor& mean, Tensor& rstd))                                                     \
  X(batch_norm_backward, (const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,     \
                          const Tensor& rstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta))

#define NORMLAB_DECLARE_NORM_DEFAULT(name, params) virtual void name params;
#define NORMLAB_DECLARE_NORM_OVERRIDE(name, params) void name params override;
// Inside a backend class: the override of every kernel of the list.
#define NORMLAB_NORM_KERNEL_OVERRIDES NORMLAB_NORM_KERNELS(NORMLAB_DECLARE_NORM_OVERRIDE)
