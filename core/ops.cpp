#include "core/ops.h"

#include <cmath>
#include <limits>

#include "core/profiler.h"

namespace normlab::ops {

static Backend& backend_of(const Tensor& t) { return backend_for(t.device()); }

Tensor unary(UnaryOp op, const Tensor& x, double alpha) {
  ProfileScope scope(OpFamily::Elementwise);
  check_floating(x, "unary", "x");
  Tensor xc = x.contiguous();
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  backend_of(x).unary(op, xc, y, alpha);
  return y;
}

Tensor unary_backward(UnaryOp op, const Tensor& x, const Tensor& y, const Tensor& dy, double alpha) {
  ProfileScope scope(OpFamily::Elementwise);
  check_floating(dy, "unary_backward", "dy");
  Tensor dx = Tensor::empty(dy.shape(), dy.dtype(), dy.device());
  Tensor xc = x.defined() ? x.contiguous() : x, yc = y.defined() ? y.contiguous() : y;
  backend_of(dy).unary_backward(op, xc, yc, dy.contiguous(), dx, alpha);
  return dx;
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, const char* op_name) {
  ProfileScope scope(OpFamily::Elementwise);
  check_floating(a, op_name, "a");
  check_floating(b, op_name, "b");
  check_same_dtype(a, b, op_name);
  NL_CHECK(a.device() == b.device(), op_name, "inputs on different devices: {} and {}",
           a.device().str(), b.device().str());
  const Shape out_shape = broadcast_shapes(a.shape(), b.shape(), op_name);
  Tensor out = Tensor::empty(out_shape, a.dtype(), a.device());
  backend_of(a).binary(op, a.contiguous(), b.contiguous(), out);
  return out;
}

void axpy_(double alpha, const Tensor& x, Tensor& y) {
  ProfileScope scope(OpFamily::Elementwise);
  check_same_shape(x, y, "axpy", "x", "y");
  check_same_dtype(x, y, "axpy");
  NL_CHECK(y.is_contiguous(), "axpy", "destination must be contiguous");
  backend_of(y).axpy(alpha, x.contiguous(), y);
}

void scale_(Tensor& x, double alpha) {
  ProfileScope scope(OpFamily::Elementwise);
  check_floating(x, "scale_", "x");
  NL_CHECK(x.is_contiguous(), "scale_", "x must be contiguous, got shape {}", shape_str(x.shape()));
  backend_of(x).unary(UnaryOp::Scale, x, x, alpha);  // elementwise: reading and writing x is safe
}

Tensor sum_to(const Tensor& x, const Shape& shape) {
  ProfileScope scope(OpFamily::Elementwise);
  if (x.shape() == shape) return x;
  Tensor out = Tensor::empty(shape, x.dtype(), x.device());
  backend_of(x).sum_to_shape(x.contiguous(), out);
  return out;
}

Tensor reduce(ReduceOp op, const Tensor& x, int axis, bool keepdim) {
  ProfileScope scope(OpFamily::Elementwise);
  check_floating(x, "reduce", "x");
  const int ax = normalize_axis(axis, x.dim(), "reduce");
  Shape out_shape = x.shape();
  if (keepdim) out_shape[ax] = 1;
  else out_shape.erase(out_shape.begin() + ax);
  Tensor out = Tensor::empty(out_shape, x.dtype(), x.device());
  backend_of(x).reduce_axis(op, x.contiguous(), ax, out);
  return out;
}

double sum_squares(const Tensor& x) {
  ProfileScope scope(OpFamily::Elementwise);
  return backend_of(x).sum_squares(x.contiguous());
}

bool all_finite(const Tensor& x) {
  ProfileScope scope(OpFamily::Elementwise);
  return backend_of(x).all_finite(x.contiguous());
}

namespace {

// The body of matmul and matmul_bias: `bias` undefined or already checked to be (N,).
Tensor matmul_impl(const Tensor& a, const Tensor& b, bool trans_a, bool trans_b, const Tensor& bias) {
  check_floating(a, "matmul", "a");
  check_floating(b, "matmul", "b");
  check_same_dtype(a, b, "matmul");
  NL_CHECK(a.dim() >= 2 && b.dim() >= 2, "matmul", "needs at least 2-d inputs, got {} and {}",
           shape_str(a.shape()), shape_str(b.shape()));
  const int64_t m = trans_a ? a.size(-1) : a.size(-2), ka = trans_a ? a.size(-2) : a.size(-1);
  const int64_t kb = trans_b ? b.size(-1) : b.size(-2), n = trans_b ? b.size(-2) : b.size(-1);
  NL_CHECK(ka == kb, "matmul", "inner dimensions differ: a {}{} and b {}{}", shape_str(a.shape()),
           trans_a ? "^T" : "", shape_str(b.shape()), trans_b ? "^T" : "");
  const Shape batch_a(a.shape().begin(), a.shape().end() - 2);
  const Shape batch_b(b.shape().begin(), b.shape().end() - 2);
  Shape out_shape = batch_a;
  out_shape.push_back(m);
  out_shape.push_back(n);
  numel_of(out_shape, "matmul");  // so that m * n and the batch's products below fit
  GemmArgs g;
  g.trans_a = trans_a;
  g.trans_b = trans_b;
  g.m = m;
  g.n = n;
  g.k = ka;
  if (b.dim() == 2 && !trans_a) {
    // (..., M, K) @ (K, N): fold the batch into M rows: one big GEMM.
    g.m = numel_of(batch_a) * m;
  } else if (b.dim() == 2) {
    g.batch = numel_of(batch_a);
    g.stride_a = m * ka;
    g.stride_b = 0;
    g.stride_c = m * n;
  } else {
    NL_CHECK(batch_a == batch_b, "matmul", "batch axes differ: a {} and b {}", shape_str(a.shape()),
             shape_str(b.shape()));
    g.batch = numel_of(batch_a);
    g.stride_a = m * ka;
    g.stride_b = kb * n;
    g.stride_c = m * n;
  }
  check_gemm_size(g, a.shape(), b.shape(), "matmul");
  Tensor out;
  if (bias.defined()) {
    out = bias.expand(out_shape).clone();  // every row = bias (clone: a fresh tensor even when R = 1)
    g.beta = 1.0;
  } else {
    out = Tensor::empty(out_shape, a.dtype(), a.device());
  }
  backend_of(a).gemm(g, a.contiguous(), b.contiguous(), out);
  return out;
}

}  // namespace

void check_gemm_size(const GemmArgs& g, const Shape& a, const Shape& b, const char* op) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  NL_CHECK(g.m <= kMax && g.n <= kMax && g.k <= kMax && g.batch <= kMax, op,
           "a {} by b {} is a GEMM of batch {}, M {}, N {}, K {}; BLAS takes sizes up to 2^31 - 1",
           shape_str(a), shape_str(b), g.batch, g.m, g.n, g.k);
}

Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a, bool trans_b) {
  ProfileScope scope(OpFamily::Gemm);
  return matmul_impl(a, b, trans_a, trans_b, Tensor());
}

Tensor matmul_bias(const Tensor& a, const Tensor& b, const Tensor& bias, bool trans_b) {
  ProfileScope scope(OpFamily::Gemm);
  check_defined(bias, "matmul_bias", "bias");
  NL_CHECK(a.dim() == 2 && b.dim() == 2, "matmul_bias", "needs 2-d a and b, got {} and {}",
           shape_str(a.shape()), shape_str(b.shape()));
  const int64_t n = trans_b ? b.size(0) : b.size(1);
  NL_CHECK(bias.shape() == Shape{n}, "matmul_bias", "bias must be ({},) for a {} @ b {}{}, got {}", n,
           shape_str(a.shape()), shape_str(b.shape()), trans_b ? "^T" : "", shape_str(bias.shape()));
  check_same_dtype(a, bias, "matmul_bias");
  return matmul_impl(a, b, false, trans_b, bias);
}

Tensor softmax(const Tensor& x, const SoftmaxArgs& args) {
  ProfileScope scope(OpFamily::Attention);
  const char* op = args.causal ? "causal_softmax" : "softmax";
  check_floating(x, op, "x");
  NL_CHECK(args.window >= 0 && (args.causal || args.window == 0), op,
           "window must be >= 0 and needs causal, got window {} ({})", args.window,
           args.causal ? "causal" : "not causal");
  NL_CHECK(std::isfinite(args.scale), op, "scale must be finite, got {}", args.scale);
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  backend_of(x).softmax(args, x.contiguous(), y);
  return y;
}

Tensor softmax_backward(const Tensor& y, const Tensor& dy, double scale) {
  ProfileScope scope(OpFamily::Attention);
  check_same_shape(y, dy, "softmax_backward", "y", "dy");
  check_same_dtype(y, dy, "softmax_backward");
  Tensor dx = Tensor::empty(y.shape(), y.dtype(), y.device());
  backend_of(y).softmax_backward(scale, y.contiguous(), dy.contiguous(), dx);
  return dx;
}

Tensor embedding(const Tensor& weight, const Tensor& ids) {
  check_floating(weight, "embedding", "weight");
  NL_CHECK(weight.dim() == 2, "embedding", "weight must be (V, C), got {}", shape_str(weight.shape()));
  NL_CHECK(ids.defined() && ids.dtype() == DType::I32, "embedding", "ids must be int32, got {}",
           ids.defined() ? dtype_name(ids.dtype()) : "undefined");
  Shape out_shape = ids.shape();
  out_shape.push_back(weight.size(1));
  numel_of(out_shape, "embedding");
  Tensor out = Tensor::empty(out_shape, weight.dtype(), weight.device());
  // ids may come from the host (a batch); the kernel reads them on the weight's device.
  backend_of(weight).embedding_forward(weight.contiguous(), ids.to(weight.device()).contiguous(), out);
  return out;
}

Tensor narrow_last(const Tensor& x, int64_t start, int64_t length) {
  check_defined(x, "narrow_last", "x");
  NL_CHECK(x.dim() >= 1, "narrow_last", "needs at least a 1-d input, got shape {}", shape_str(x.shape()));
  const int64_t cols = x.size(-1);
  NL_CHECK(start >= 0 && length >= 0 && start + length <= cols, "narrow_last",
           "range [{}, {}) is outside the last axis of {}", start, start + length, shape_str(x.shape()));
  Shape out_shape = x.shape();
  out_shape.back() = length;
  Tensor out = Tensor::empty(out_shape, x.dtype(), x.device());
  backend_of(x).copy_columns(x.contiguous(), start, out, 0, length);
  return out;
}

Tensor pad_last(const Tensor& x, int64_t start, int64_t total) {
  check_defined(x, "pad_last", "x");
  NL_CHECK(x.dim() >= 1, "pad_last", "needs at least a 1-d input, got shape {}", shape_str(x.shape()));
  const int64_t length = x.size(-1);
  NL_CHECK(start >= 0 && start + length <= total, "pad_last",
           "cannot place {} at [{}, {}) of a last axis of {}", shape_str(x.shape()), start,
           start + length, total);
  Shape out_shape = x.shape();
  out_shape.back() = total;
  Tensor out = Tensor::zeros(out_shape, x.dtype(), x.device());
  backend_of(x).copy_columns(x.contiguous(), 0, out, start, length);
  return out;
}

}  // namespace normlab::ops
