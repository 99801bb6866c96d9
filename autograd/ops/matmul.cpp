// Matrix products. Transposes are folded into the GEMM flags; no transposed copy is ever made.
//
// For one matrix product C = op(A) op(B), op(A) (M, K), op(B) (K, N), G = dL/dC (M, N):
//   dL/d op(A) = G op(B)^T  (M, K)          dL/d op(B) = op(A)^T G  (K, N)
// and when op transposes, the gradient of the stored matrix is the transpose of that. Per flag pair
// (A stored (M, K) or, transposed, (K, M); B stored (K, N) or (N, K)):
//   nn  C = A B        dA = G B^T   (M,N)(N,K)        dB = A^T G   (K,M)(M,N)
//   tn  C = A^T B      dA = B G^T   (K,N)(N,M)        dB = A G     (K,M)(M,N)
//   nt  C = A B^T      dA = G B     (M,N)(N,K)        dB = G^T A   (N,M)(M,K)
//   tt  C = A^T B^T    dA = B^T G^T (K,N)(N,M)        dB = G^T A^T (N,M)(M,K)
// Batched (same leading axes on A and B): the same per batch entry.
// Shared weight (A (..., M, K) batched, B 2-d): B's gradient is the sum over the batch,
//   nn: dB = sum_b A_b^T G_b = A_rows^T G_rows, one GEMM over the flattened rows (R, K), (R, N);
//   nt: dB = sum_b G_b^T A_b = G_rows^T A_rows, likewise;
//   tn/tt: A_b is stored (K, M), so the summed index is not a row of a flat matrix: one batched
//   GEMM gives every dB_b, then they are summed over the batch.
// A's gradient for tn/tt multiplies the shared B from the left: a batched GEMM with B's stride 0.
#include "autograd/ops.h"
#include "core/ops.h"

namespace normlab {

namespace {

// C_b = op(S) op(X_b) for a shared 2-d S and every batch entry X_b of X (..., r, c).
Tensor shared_left_matmul(const Tensor& s, const Tensor& x, bool trans_s, bool trans_x) {
  GemmArgs args;
  args.trans_a = trans_s;
  args.trans_b = trans_x;
  args.m = trans_s ? s.size(1) : s.size(0);
  args.k = trans_s ? s.size(0) : s.size(1);
  const int64_t xk = trans_x ? x.size(-1) : x.size(-2);
  args.n = trans_x ? x.size(-2) : x.size(-1);
  NL_CHECK(args.k == xk, "matmul", "inner dimensions differ: {}{} and {}{}", shape_str(s.shape()),
           trans_s ? "^T" : "", shape_str(x.shape()), trans_x ? "^T" : "");
  const int64_t matrix = x.size(-2) * x.size(-1);
  args.batch = matrix == 0 ? 0 : x.numel() / matrix;
  args.stride_a = 0;
  args.stride_b = matrix;
  Shape out_shape = x.shape();
  out_shape[out_shape.size() - 2] = args.m;
  out_shape[out_shape.size() - 1] = args.n;
  numel_of(out_shape, "matmul");  // before m * n below
  args.stride_c = args.m * args.n;
  ops::check_gemm_size(args, s.shape(), x.shape(), "matmul");
  Tensor c = Tensor::empty(out_shape, x.dtype(), x.device());
  backend_for(x.device()).gemm(args, s.contiguous(), x.contiguous(), c);
  return c;
}

// op(X) op(Y) where X may be a shared 2-d matrix and Y batched.
Tensor product(const Tensor& x, const Tensor& y, bool tx, bool ty) {
  if (x.dim() == 2 && y.dim() > 2) return shared_left_matmul(x, y, tx, ty);
  return ops::matmul(x, y, tx, ty);
}

// (..., r, c) -> sum over the leading axes -> (r, c).
Tensor sum_batch(const Tensor& t) {
  const int64_t r = t.size(-2), c = t.size(-1);
  return ops::reduce(ReduceOp::Sum, t.reshape({-1, r, c}), 0);
}

Tensor rows_of(const Tensor& t) { return t.reshape({-1, t.size(-1)}); }

Tensor matmul_grad_a(const Tensor& g, const Tensor& b, bool ta, bool tb) {
  if (!ta) return ops::matmul(g, b, false, !tb);  // nn: G B^T, nt: G B  (B may be shared)
  return product(b, g, tb, true);                 // tn: B G^T, tt: B^T G^T
}

Tensor matmul_grad_b(const Tensor& g, const Tensor& a, const Tensor& b, bool ta, bool tb) {
  const bool shared = b.dim() == 2 && a.dim() > 2;
  if (shared && !ta) {
    // Fold the batch into rows: one GEMM accumulates over every (b, m).
    return tb ? ops::matmul(rows_of(g), rows_of(a), true, false)   // nt: G^T A
              : ops::matmul(rows_of(a), rows_of(g), true, false);  // nn: A^T G
  }
  Tensor per_batch = tb ? ops::matmul(g, a, true, ta)   // nt: G^T A, tt: G^T A^T
                        : ops::matmul(a, g, !ta, false);  // nn: A^T G, tn: A G
  return shared ? sum_batch(per_batch) : per_batch;
}

}  // namespace

Var matmul(const Var& a, const Var& b, bool trans_a, bool trans_b) {
  Tensor y = ops::matmul(a.value(), b.value(), trans_a, trans_b);
  Tensor av = a.value(), bv = b.value();
  const bool need_a = a.requires_grad(), need_b = b.requires_grad();
  return record("matmul", {a, b}, y,
                [av, bv, trans_a, trans_b, need_a, need_b](const Tensor& g) -> Grads {
                  Tensor da = need_a ? matmul_grad_a(g, bv, trans_a, trans_b) : Tensor();
                  Tensor db = need_b ? matmul_grad_b(g, av, bv, trans_a, trans_b) : Tensor();
                  return {da, db};
                });
}

// y = x W^T + b: x (..., in) flattened to rows X (R, in), W (out, in), b (out,), Y = G (R, out).
//   dX = G W        (R, out)(out, in)          one GEMM
//   dW = G^T X      (out, R)(R, in)            one GEMM over all rows (the sum over positions)
//   db = sum_r G_r  (out,)
Var linear(const Var& x, const Var& weight, const Var& bias) {
  NL_CHECK(weight.defined() && weight.dim() == 2, "linear", "weight must be (out, in), got {}",
           weight.defined() ? shape_str(weight.shape()) : "undefined");
  NL_CHECK(x.dim() >= 1 && x.size(-1) == weight.size(1), "linear",
           "x {} does not match weight {} (expected x's last axis = {})", shape_str(x.shape()),
           shape_str(weight.shape()), weight.size(1));
  const int64_t out_features = weight.size(0);
  if (bias.defined())
    NL_CHECK(bias.shape() == Shape{out_features}, "linear", "bias must be ({},) for weight {}, got {}",
             out_features, shape_str(weight.shape()), shape_str(bias.shape()));
  Shape y_shape = x.shape();
  y_shape.back() = out_features;
  const Tensor xv = x.value(), wv = weight.value();
  Tensor y = bias.defined() ? ops::matmul_bias(rows_of(xv), wv, bias.value(), true)  // (R, out)
                            : ops::matmul(rows_of(xv), wv, false, true);
  y = y.reshape(y_shape);

  std::vector<Var> inputs = {x, weight};
  if (bias.defined()) inputs.push_back(bias);
  const bool need_x = x.requires_grad(), need_w = weight.requires_grad();
  const bool has_bias = bias.defined(), need_b = has_bias && bias.requires_grad();
  return record("linear", std::move(inputs), y,
                [xv, wv, need_x, need_w, has_bias, need_b](const Tensor& g) -> Grads {
                  Tensor g_rows = rows_of(g);  // (R, out)
                  Grads grads(has_bias ? 3 : 2);
                  if (need_x) grads[0] = ops::matmul(g_rows, wv).reshape(xv.shape());
                  if (need_w) grads[1] = ops::matmul(g_rows, rows_of(xv), true, false);
                  if (need_b) grads[2] = ops::reduce(ReduceOp::Sum, g_rows, 0);
                  return grads;
                });
}

}  // namespace normlab
