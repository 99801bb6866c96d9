// CudaBackend: the fused normalization kernels (kernels_norm.cu). x is viewed as (rows, C);
// gamma, beta, weight and the outputs dx, dgamma, dbeta may be undefined (skipped).
// Weight gradients: per-block partial sums reduced in a fixed order (scratch from the caching
// allocator), see kernels_norm.cu. LayerNorm, GroupNorm and RMSNorm also take bfloat16/float16
// (float32 statistics); BatchNorm float32/float64 only.
#include "core/cuda/cuda_backend.h"
#include "core/cuda/kernels.h"

namespace normlab {

namespace {

struct RowsC {
  int64_t rows, C;
};
RowsC rows_c(const Tensor& x) {
  const int64_t C = x.dim() == 0 ? 1 : x.shape().back();
  return {C == 0 ? 0 : x.numel() / C, C};
}

// Calls f(T{}) for the storage types of the row norms: float, double, and the 16-bit types as
// CUDA's __nv_bfloat16/__half (same bits as normlab's bfloat16/float16); statistics are
// cuda::norm_acc_t<T> (float for the 16-bit types).
template <typename F> void row_norm_dispatch(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DType::F32: return f(float{});
    case DType::F64: return f(double{});
    case DType::BF16: return f(__nv_bfloat16{});
    case DType::F16: return f(__half{});
    default: fail(op, "expected float32, float64, bfloat16 or float16 on cuda, got {}", dtype_name(dtype));
  }
}

void check_groups(const Tensor& x, int64_t groups) {
  NL_CHECK(groups > 0 && x.size(-1) % groups == 0, "group_norm", "{} groups do not divide C = {}", groups, x.size(-1));
}

}  // namespace

void CudaBackend::group_norm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, int64_t groups,
                                     double eps, Tensor& y, Tensor& mean, Tensor& rstd) {
  check_groups(x, groups);
  const auto [rows, C] = rows_c(x);
  row_norm_dispatch(x.dtype(), "group_norm", [&](auto t) {
    using T = decltype(t);
    using A = cuda::norm_acc_t<T>;
    check_kernel(cuda::group_norm_forward(dev<T>(x), data_or_null<T>(gamma), data_or_null<T>(beta), rows, C, groups,
                                          eps, dev<T>(y), dev<A>(mean), dev<A>(rstd), stream_),
                 "group_norm_forward");
  });
}

void CudaBackend::group_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                      const Tensor& rstd, int64_t groups, Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  check_groups(x, groups);
  const auto [rows, C] = rows_c(x);
  row_norm_dispatch(x.dtype(), "group_norm_backward", [&](auto t) {
    using T = decltype(t);
    using A = cuda::norm_acc_t<T>;
    const bool params = dgamma.defined() || dbeta.defined();
    DeviceScratch scratch(*this, params ? cuda::norm_backward_scratch_bytes(rows * groups, C, sizeof(A)) : 1);
    check_kernel(
        cuda::group_norm_backward(dev<T>(dy), dev<T>(x), data_or_null<T>(gamma), dev<A>(mean), dev<A>(rstd), rows, C,
                                  groups, mutable_data_or_null<T>(dx), mutable_data_or_null<T>(dgamma),
                                  mutable_data_or_null<T>(dbeta), scratch.get(), stream_),
        "group_norm_backward");
  });
}

// LayerNorm is GroupNorm with one group per row.
void CudaBackend::layer_norm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps, Tensor& y,
                                     Tensor& mean, Tensor& rstd) {
  group_norm_forward(x, gamma, beta, 1, eps, y, mean, rstd);
}

void CudaBackend::layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                      const Tensor& rstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  group_norm_backward(dy, x, gamma, mean, rstd, 1, dx, dgamma, dbeta);
}

void CudaBackend::rms_norm_forward(const Tensor& x, const Tensor& weight, double eps, bool unit_offset, Tensor& y,
                                   Tensor& rstd) {
  const auto [rows, C] = rows_c(x);
  row_norm_dispatch(x.dtype(), "rms_norm", [&](auto t) {
    using T = decltype(t);
    using A = cuda::norm_acc_t<T>;
    check_kernel(cuda::rms_norm_forward(dev<T>(x), data_or_null<T>(weight), rows, C, eps, unit_offset, dev<T>(y),
                                        dev<A>(rstd), stream_),
                 "rms_norm_forward");
  });
}

void CudaBackend::rms_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& weight, const Tensor& rstd,
                                    bool unit_offset, Tensor& dx, Tensor& dweight) {
  const auto [rows, C] = rows_c(x);
  row_norm_dispatch(x.dtype(), "rms_norm_backward", [&](auto t) {
    using T = decltype(t);
    using A = cuda::norm_acc_t<T>;
    DeviceScratch scratch(*this, dweight.defined() ? cuda::norm_backward_scratch_bytes(rows, C, sizeof(A)) : 1);
    check_kernel(
        cuda::rms_norm_backward(dev<T>(dy), dev<T>(x), data_or_null<T>(weight), dev<A>(rstd), rows, C, unit_offset,
                                mutable_data_or_null<T>(dx), mutable_data_or_null<T>(dweight), scratch.get(), stream_),
        "rms_norm_backward");
  });
}

void CudaBackend::batch_norm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps, Tensor& y,
                                     Tensor& mean, Tensor& rstd) {
  if (staged_half("batch_norm", {&x, &gamma, &beta}, {&y, &mean, &rstd}, [&](HalfStaging& h) {
        batch_norm_forward(h.in(0), h.in(1), h.in(2), eps, h.out(0), h.out(1), h.out(2));
      }))
    return;
  const auto [rows, C] = rows_c(x);
  cuda_dispatch(x.dtype(), "batch_norm", [&](auto t) {
    using T = decltype(t);
    DeviceScratch scratch(*this, cuda::column_scratch_bytes(rows, C, sizeof(T)));
    check_kernel(cuda::batch_norm_forward(dev<T>(x), data_or_null<T>(gamma), data_or_null<T>(beta), rows, C, eps,
                                          dev<T>(y), dev<T>(mean), dev<T>(rstd), scratch.get(), stream_),
                 "batch_norm_forward");
  });
}

void CudaBackend::batch_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                      const Tensor& rstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  if (staged_half("batch_norm_backward", {&dy, &x, &gamma, &mean, &rstd}, {&dx, &dgamma, &dbeta},
                  [&](HalfStaging& h) {
                    batch_norm_backward(h.in(0), h.in(1), h.in(2), h.in(3), h.in(4), h.out(0), h.out(1), h.out(2));
                  }))
    return;
  const auto [rows, C] = rows_c(x);
  cuda_dispatch(x.dtype(), "batch_norm_backward", [&](auto t) {
    using T = decltype(t);
    DeviceScratch scratch(*this, cuda::column_scratch_bytes(rows, C, sizeof(T)));
    check_kernel(cuda::batch_norm_backward(dev<T>(dy), dev<T>(x), data_or_null<T>(gamma), dev<T>(mean), dev<T>(rstd),
                                           rows, C, mutable_data_or_null<T>(dx), mutable_data_or_null<T>(dgamma),
                                           mutable_data_or_null<T>(dbeta), scratch.get(), stream_),
                 "batch_norm_backward");
  });
}

}  // namespace normlab
