// CudaBackend: elementwise ops, broadcasting, reductions and the dropout mask. Shapes are checked
// by core/ops.cpp; this file picks the kernel variant (fast paths for the common broadcasts) and
// fills the index structures of the general ones.
#include <algorithm>

#include "core/cuda/cuda_backend.h"
#include "core/cuda/kernels.h"

namespace normlab {

// The kernels' enums mirror backend.h's: keep them in step.
#define NL_SAME_ENUM(A, B) static_assert(static_cast<int>(A) == static_cast<int>(B), #A " moved")
NL_SAME_ENUM(UnaryOp::Neg, cuda::UOp::Neg);
NL_SAME_ENUM(UnaryOp::Exp, cuda::UOp::Exp);
NL_SAME_ENUM(UnaryOp::Log, cuda::UOp::Log);
NL_SAME_ENUM(UnaryOp::Sqrt, cuda::UOp::Sqrt);
NL_SAME_ENUM(UnaryOp::Square, cuda::UOp::Square);
NL_SAME_ENUM(UnaryOp::Tanh, cuda::UOp::Tanh);
NL_SAME_ENUM(UnaryOp::Relu, cuda::UOp::Relu);
NL_SAME_ENUM(UnaryOp::Gelu, cuda::UOp::Gelu);
NL_SAME_ENUM(UnaryOp::Silu, cuda::UOp::Silu);
NL_SAME_ENUM(UnaryOp::Scale, cuda::UOp::Scale);
NL_SAME_ENUM(UnaryOp::AddScalar, cuda::UOp::AddScalar);
NL_SAME_ENUM(BinaryOp::Add, cuda::BOp::Add);
NL_SAME_ENUM(BinaryOp::Sub, cuda::BOp::Sub);
NL_SAME_ENUM(BinaryOp::Mul, cuda::BOp::Mul);
NL_SAME_ENUM(BinaryOp::Div, cuda::BOp::Div);
NL_SAME_ENUM(ReduceOp::Sum, cuda::ROp::Sum);
NL_SAME_ENUM(ReduceOp::Mean, cuda::ROp::Mean);
NL_SAME_ENUM(ReduceOp::Max, cuda::ROp::Max);
#undef NL_SAME_ENUM

namespace {

// t's shape is a suffix of `of` (t repeats over of's leading axes).
bool is_suffix(const Shape& t, const Shape& of) {
  return t.size() <= of.size() && std::equal(t.rbegin(), t.rend(), of.rbegin());
}

// out's shape, with t's strides broadcast to it (0 on broadcast axes).
cuda::Dims broadcast_dims(const Tensor& t, const Shape& out, const char* op) {
  NL_CHECK(out.size() <= static_cast<size_t>(cuda::kMaxDims), op,
           "cuda broadcasting supports up to {} dimensions, got {}", cuda::kMaxDims, shape_str(out));
  cuda::Dims dims;
  dims.nd = static_cast<int>(out.size());
  const size_t off = out.size() - t.shape().size();
  const Shape own = contiguous_strides(t.shape());
  for (size_t i = 0; i < out.size(); ++i) {
    dims.shape[i] = out[i];
    dims.stride[i] = i < off || t.shape()[i - off] == 1 ? 0 : own[i - off];
  }
  return dims;
}

}  // namespace

void CudaBackend::unary(UnaryOp op, const Tensor& x, Tensor& y, double alpha) {
  if (staged_half("unary", {&x}, {&y}, [&](HalfStaging& h) { unary(op, h.in(0), h.out(0), alpha); })) return;
  cuda_dispatch(x.dtype(), "unary", [&](auto t) {
    using T = decltype(t);
    check_kernel(
        cuda::unary(static_cast<cuda::UOp>(op), dev<T>(x), dev<T>(y), x.numel(), static_cast<T>(alpha), stream_),
        "unary");
  });
}

void CudaBackend::unary_backward(UnaryOp op, const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx,
                                 double alpha) {
  if (staged_half("unary_backward", {&x, &y, &dy}, {&dx},
                  [&](HalfStaging& h) { unary_backward(op, h.in(0), h.in(1), h.in(2), h.out(0), alpha); }))
    return;
  cuda_dispatch(dy.dtype(), "unary_backward", [&](auto t) {
    using T = decltype(t);
    check_kernel(cuda::unary_backward(static_cast<cuda::UOp>(op), data_or_null<T>(x), data_or_null<T>(y), dev<T>(dy),
                                      dev<T>(dx), dy.numel(), static_cast<T>(alpha), stream_),
                 "unary_backward");
  });
}

void CudaBackend::binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) {
  if (staged_half("binary", {&a, &b}, {&out}, [&](HalfStaging& h) { binary(op, h.in(0), h.in(1), h.out(0)); }))
    return;
  const Shape& os = out.shape();
  const int64_t n = out.numel(), na = a.numel(), nb = b.numel();
  cuda::BinaryIndexing ix = cuda::BinaryIndexing::General;
  cuda::Dims dims, b_dims;
  if (a.shape() == os && b.shape() == os)
    ix = cuda::BinaryIndexing::Same;
  else if (a.shape() == os && nb > 0 && n % nb == 0 && is_suffix(b.shape(), os))
    ix = cuda::BinaryIndexing::BSuffix;
  else if (b.shape() == os && na > 0 && n % na == 0 && is_suffix(a.shape(), os))
    ix = cuda::BinaryIndexing::ASuffix;
  else {
    dims = broadcast_dims(a, os, "binary");
    b_dims = broadcast_dims(b, os, "binary");
  }
  cuda_dispatch(out.dtype(), "binary", [&](auto t) {
    using T = decltype(t);
    check_kernel(cuda::binary(static_cast<cuda::BOp>(op), ix, dev<T>(a), dev<T>(b), dev<T>(out), n, na, nb, dims,
                              b_dims, stream_),
                 "binary");
  });
}

void CudaBackend::axpy(double alpha, const Tensor& x, Tensor& y) {
  if (staged_half("axpy", {&x}, {&y}, [&](HalfStaging& h) { axpy(alpha, h.in(0), h.out(0)); })) return;
  cuda_dispatch(y.dtype(), "axpy", [&](auto t) {
    using T = decltype(t);
    check_kernel(cuda::axpy(static_cast<T>(alpha), dev<T>(x), dev<T>(y), y.numel(), stream_), "axpy");
  });
}

void CudaBackend::dropout_mask(uint64_t seed, double p, Tensor& mask) {
  if (staged_half("dropout", {}, {&mask}, [&](HalfStaging& h) { dropout_mask(seed, p, h.out(0)); })) return;
  cuda_dispatch(mask.dtype(), "dropout", [&](auto t) {
    using T = decltype(t);
    const T keep_scale = static_cast<T>(1.0 / (1.0 - p));
    check_kernel(cuda::dropout_mask(seed, p, keep_scale, dev<T>(mask), mask.numel(), stream_), "dropout_mask");
  });
}

// ---- reductions ----

void CudaBackend::reduce_axis(ReduceOp op, const Tensor& x, int axis, Tensor& out) {
  if (staged_half("reduce", {&x}, {&out}, [&](HalfStaging& h) { reduce_axis(op, h.in(0), axis, h.out(0)); }))
    return;
  const int ax = normalize_axis(axis, x.dim(), "reduce");
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < ax; ++d) outer *= x.shape()[d];
  for (int d = ax + 1; d < x.dim(); ++d) inner *= x.shape()[d];
  const int64_t n = x.shape()[ax];
  cuda_dispatch(x.dtype(), "reduce", [&](auto t) {
    using T = decltype(t);
    check_kernel(cuda::reduce_axis(static_cast<cuda::ROp>(op), dev<T>(x), dev<T>(out), outer, n, inner, stream_),
                 "reduce_axis");
  });
}

// out = x summed over the axes broadcast from out's shape. Sums over leading axes (bias gradients)
// go through the deterministic column sums; anything else through one thread per output element
// that adds its inputs in x's order (the CPU's order).
void CudaBackend::sum_to_shape(const Tensor& x, Tensor& out) {
  if (staged_half("sum_to_shape", {&x}, {&out}, [&](HalfStaging& h) { sum_to_shape(h.in(0), h.out(0)); })) return;
  const Shape& xs = x.shape();
  const Shape& os = out.shape();
  NL_CHECK(os.size() <= xs.size(), "sum_to_shape", "cannot reduce {} to {}", shape_str(xs), shape_str(os));
  const size_t off = xs.size() - os.size();
  for (size_t i = 0; i < os.size(); ++i)
    NL_CHECK(os[i] == xs[off + i] || os[i] == 1, "sum_to_shape", "cannot reduce {} to {}", shape_str(xs),
             shape_str(os));
  if (out.numel() == 0) return;
  if (x.numel() == 0) {
    fill(out, 0.0);
    return;
  }
  cuda_dispatch(x.dtype(), "sum_to_shape", [&](auto t) {
    using T = decltype(t);
    if (is_suffix(os, xs)) {
      const int64_t cols = out.numel(), rows = x.numel() / cols;
      DeviceScratch scratch(*this, cuda::column_scratch_bytes(rows, cols, sizeof(double)));
      check_kernel(cuda::sum_rows(dev<T>(x), dev<T>(out), rows, cols, scratch.get(), stream_), "sum_rows");
      return;
    }
    NL_CHECK(xs.size() <= static_cast<size_t>(cuda::kMaxDims), "sum_to_shape",
             "cuda supports up to {} dimensions, got {}", cuda::kMaxDims, shape_str(xs));
    const Shape strides = contiguous_strides(xs);
    cuda::Dims kept, reduced;
    int64_t reduced_n = 1;
    for (size_t d = 0; d < xs.size(); ++d) {
      const int64_t od = d < off ? 1 : os[d - off];
      cuda::Dims& target = od == xs[d] ? kept : reduced;
      target.shape[target.nd] = xs[d];
      target.stride[target.nd] = strides[d];
      ++target.nd;
      if (od != xs[d]) reduced_n *= xs[d];
    }
    check_kernel(cuda::sum_general(dev<T>(x), dev<T>(out), out.numel(), kept, reduced, reduced_n, stream_),
                 "sum_general");
  });
}

double CudaBackend::sum_squares(const Tensor& x) {
  double staged_result = 0.0;
  if (staged_half("sum_squares", {&x}, {}, [&](HalfStaging& h) { staged_result = sum_squares(h.in(0)); }))
    return staged_result;
  return cuda_dispatch(x.dtype(), "sum_squares", [&](auto t) {
    using T = decltype(t);
    DeviceScratch scratch(*this, cuda::sum_squares_scratch_bytes(x.numel()));
    double* result = scratch.as<double>() + cuda::kSquaresBlocks;  // after the partials
    check_kernel(cuda::sum_squares(dev<T>(x), x.numel(), result, scratch.get(), stream_), "sum_squares");
    double host = 0.0;
    copy_to_host(&host, result, sizeof(host));
    return host;
  });
}

bool CudaBackend::all_finite(const Tensor& x) {
  bool staged_result = false;
  if (staged_half("all_finite", {&x}, {}, [&](HalfStaging& h) { staged_result = all_finite(h.in(0)); }))
    return staged_result;
  return cuda_dispatch(x.dtype(), "all_finite", [&](auto t) {
    using T = decltype(t);
    DeviceScratch flag(*this, sizeof(int));
    check_kernel(cuda::fill(flag.as<int32_t>(), 1, int32_t{1}, stream_), "fill");
    check_kernel(cuda::all_finite(dev<T>(x), x.numel(), flag.as<int>(), stream_), "all_finite");
    int host = 0;
    copy_to_host(&host, flag.get(), sizeof(host));
    return host != 0;
  });
}

}  // namespace normlab
