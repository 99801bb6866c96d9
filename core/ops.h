// Tensor-level operations without autograd: each checks its arguments (errors name the op and the
// shapes), allocates its output and calls the backend of its inputs' device. autograd/ builds
// differentiable ops and their backward passes out of these.
#pragma once
#include "core/backend.h"
#include "core/tensor.h"

namespace normlab::ops {

Tensor unary(UnaryOp op, const Tensor& x, double alpha = 0.0);
Tensor unary_backward(UnaryOp op, const Tensor& x, const Tensor& y, const Tensor& dy,
                      double alpha = 0.0);
// Broadcasting binary op; `op_name` is used in errors ("[mul] cannot broadcast ...").
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, const char* op_name);
inline Tensor add(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Add, a, b, "add"); }
inline Tensor sub(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Sub, a, b, "sub"); }
inline Tensor mul(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Mul, a, b, "mul"); }
inline Tensor div(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Div, a, b, "div"); }
inline Tensor scale(const Tensor& x, double alpha) { return unary(UnaryOp::Scale, x, alpha); }
inline Tensor neg(const Tensor& x) { return unary(UnaryOp::Neg, x); }
// y += alpha * x (same shape and dtype), in place.
void axpy_(double alpha, const Tensor& x, Tensor& y);
// x *= alpha, in place (x contiguous): one read and one write per element, no temporary.
void scale_(Tensor& x, double alpha);

// Sum x down to `shape` over broadcast axes: the one un-broadcast of every gradient.
Tensor sum_to(const Tensor& x, const Shape& shape);
// Sum / mean / max over one axis; keepdim keeps it as size 1.
Tensor reduce(ReduceOp op, const Tensor& x, int axis, bool keepdim = false);
double sum_squares(const Tensor& x);
bool all_finite(const Tensor& x);

// Matrix product of the last two axes, op(a) @ op(b) with op = transpose when the flag is set.
//  * a (..., M, K) and b (..., K, N) with identical leading axes: batched;
//  * a (..., M, K) and b (K, N): b shared by every batch entry (a linear layer's weight).
// Throws "[matmul] ..." naming both shapes when the inner dimensions or batch axes differ.
Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a = false, bool trans_b = false);
// a (R, K) @ op(b) + bias, bias (N,) added to every row: the product accumulates (GEMM beta = 1)
// onto rows that already hold the bias, so the bias costs no pass of its own (a linear layer).
Tensor matmul_bias(const Tensor& a, const Tensor& b, const Tensor& bias, bool trans_b);
// BLAS and cuBLAS take 32-bit sizes: throws "[op] ... exceeds 2^31 - 1" naming both shapes when M,
// N, K (they are also the leading dimensions) or the batch count would not fit.
void check_gemm_size(const GemmArgs& g, const Shape& a, const Shape& b, const char* op);

// Softmax over the last axis of args.scale * x, causal and windowed as SoftmaxArgs says
// (core/backend.h). bfloat16/float16 compute in float32 inside the kernel and round once.
Tensor softmax(const Tensor& x, const SoftmaxArgs& args);
// dx = scale * y * (dy - sum_j dy_j y_j), the scale the forward used.
Tensor softmax_backward(const Tensor& y, const Tensor& dy, double scale);

// weight (V, C), ids int32 of any shape -> (*ids.shape, C).
Tensor embedding(const Tensor& weight, const Tensor& ids);

// x[..., start : start + length] along the last axis, as a fresh contiguous tensor.
// Throws "[narrow_last] ..." naming the shape when the range is outside the last axis.
Tensor narrow_last(const Tensor& x, int64_t start, int64_t length);
// The adjoint of narrow_last: a zero tensor (..., total) with x (..., L) written at
// [..., start : start + L].
Tensor pad_last(const Tensor& x, int64_t start, int64_t total);

}  // namespace normlab::ops
