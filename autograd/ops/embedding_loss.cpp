// Embedding lookup and the fused cross-entropy loss.
#include <algorithm>
#include <vector>

#include "autograd/ops.h"
#include "core/ops.h"

namespace normlab {

// y[r, :] = W[ids[r], :]   ids (rows,) any shape, W (V, C), y (*ids, C).
// dL/dW[v, :] = sum over the positions r with ids[r] == v of g[r, :] (a scatter-add; ids that repeat
// sum, rows never looked up get 0):   dW = zeros (V, C), then dW[ids[r]] += g[r]   (saves ids).
// ids are integers: no gradient. With padding_idx p >= 0 the lookup sends nothing into row p
// (torch's padding_idx): dW[p] = 0, as if W[p] were a constant.
Var embedding(const Var& weight, const Tensor& ids, int64_t padding_idx) {
  Tensor y = ops::embedding(weight.value(), ids);  // checks shapes, dtype and id range
  const Shape w_shape = weight.shape();
  Tensor saved_ids = ids.to(weight.value().device()).contiguous();
  NL_CHECK(padding_idx >= -1 && padding_idx < w_shape[0], "embedding",
           "padding_idx must be -1 or a row of weight {}, got {}", shape_str(w_shape), padding_idx);
  Tensor keep_rows;  // (V, 1): 1, and 0 at padding_idx
  if (padding_idx >= 0) {
    std::vector<double> keep(static_cast<size_t>(w_shape[0]), 1.0);
    keep[static_cast<size_t>(padding_idx)] = 0.0;
    keep_rows = Tensor::from_vector(keep, {w_shape[0], 1}, weight.value().dtype()).to(weight.value().device());
  }
  return record("embedding", {weight}, y, [w_shape, saved_ids, keep_rows](const Tensor& g) -> Grads {
    Tensor dw = Tensor::zeros(w_shape, g.dtype(), g.device());
    backend_for(g.device()).embedding_backward(saved_ids, g.contiguous(), dw);
    if (keep_rows.defined()) dw = ops::mul(dw, keep_rows);
    return {dw};
  });
}

// logits (..., V) as X (N, V), targets t (N,) int32; counted rows K = {r : t_r != ignore_index},
// n = |K|. L = (1/n) sum_{r in K} (lse_r - X[r, t_r]),  lse_r = log sum_j exp X[r, j].
// d lse_r / dX[r, j] = softmax(X_r)_j, so with g = dL_out/dL (a scalar):
//   dX[r, j] = (g / n) (softmax(X_r)_j - [j == t_r])  for r in K,   0 for ignored rows.
// The kernel recomputes softmax from the saved lse (exp(X - lse)); nothing (N, V) is saved but X.
Var cross_entropy(const Var& logits, const Tensor& targets, int32_t ignore_index) {
  check_floating(logits.value(), "cross_entropy", "logits");
  NL_CHECK(logits.dim() >= 1, "cross_entropy", "logits must be (..., V), got {}", shape_str(logits.shape()));
  NL_CHECK(targets.defined() && targets.dtype() == DType::I32, "cross_entropy",
           "targets must be int32, got {}", targets.defined() ? dtype_name(targets.dtype()) : "undefined");
  const Shape lead(logits.shape().begin(), logits.shape().end() - 1);
  NL_CHECK(targets.shape() == lead, "cross_entropy", "targets {} must have logits {} without the last axis",
           shape_str(targets.shape()), shape_str(logits.shape()));
  const int64_t vocab = logits.size(-1);
  Tensor x = logits.value().reshape({-1, vocab}).contiguous();  // (N, V)
  Tensor t = targets.reshape({-1}).to(x.device()).contiguous();  // (N,), on the logits' device
  // lse is float32 for half logits: rounding it to 8 bits of mantissa would make the backward's
  // softmax exp(X - lse) sum to 1 only within 2^-8.
  const DType lse_dtype = is_half(x.dtype()) ? DType::F32 : x.dtype();
  Tensor lse = Tensor::empty({x.size(0)}, lse_dtype, x.device());
  Backend& backend = backend_for(x.device());
  const double loss = backend.cross_entropy_forward(x, t, ignore_index, lse);
  // The mean's denominator: the number of counted targets (a host-side count of int ids; free
  // when the targets came from the host, one small copy when they are on a GPU).
  const std::vector<int32_t> ids = targets.to_ints();
  const int64_t count = static_cast<int64_t>(ids.size()) - std::count(ids.begin(), ids.end(), ignore_index);
  Tensor y = Tensor::full({}, loss, x.dtype(), x.device());
  const Shape logits_shape = logits.shape();
  return record("cross_entropy", {logits}, y,
                [x, t, lse, ignore_index, count, logits_shape](const Tensor& g) -> Grads {
                  const double scale = count > 0 ? g.item() / static_cast<double>(count) : 0.0;
                  Tensor dx = Tensor::empty(x.shape(), x.dtype(), x.device());
                  backend_for(x.device()).cross_entropy_backward(x, t, ignore_index, lse, scale, dx);
                  return {dx.reshape(logits_shape)};
                });
}

}  // namespace normlab
