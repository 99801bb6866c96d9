// Embedding lookup and the fused cross-entropy losses (plain and label-smoothed).
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

namespace {

// logits (..., V) and int32 targets (...) checked and flattened: X (N, V) and t (N,) on X's device.
struct LossRows {
  Tensor x, t;
};

LossRows loss_rows(const char* op, const Var& logits, const Tensor& targets) {
  check_floating(logits.value(), op, "logits");
  NL_CHECK(logits.dim() >= 1, op, "logits must be (..., V), got {}", shape_str(logits.shape()));
  NL_CHECK(targets.defined() && targets.dtype() == DType::I32, op, "targets must be int32, got {}",
           targets.defined() ? dtype_name(targets.dtype()) : "undefined");
  const Shape lead(logits.shape().begin(), logits.shape().end() - 1);
  NL_CHECK(targets.shape() == lead, op, "targets {} must have logits {} without the last axis",
           shape_str(targets.shape()), shape_str(logits.shape()));
  Tensor x = logits.value().reshape({-1, logits.size(-1)}).contiguous();  // (N, V)
  Tensor t = targets.reshape({-1}).to(x.device()).contiguous();           // (N,), on the logits' device
  return {x, t};
}

}  // namespace

// logits (..., V) as X (N, V), targets t (N,) int32; counted rows K = {r : t_r != ignore_index},
// n = |K|. L = (1/n) sum_{r in K} (lse_r - X[r, t_r]),  lse_r = log sum_j exp X[r, j].
// d lse_r / dX[r, j] = softmax(X_r)_j, so with g = dL_out/dL (a scalar):
//   dX[r, j] = (g / n) (softmax(X_r)_j - [j == t_r])  for r in K,   0 for ignored rows.
// The kernel recomputes softmax from the saved lse (exp(X - lse)); nothing (N, V) is saved but X.
Var cross_entropy(const Var& logits, const Tensor& targets, int32_t ignore_index) {
  const LossRows rows = loss_rows("cross_entropy", logits, targets);
  const Tensor x = rows.x, t = rows.t;  // (N, V), (N,)
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

namespace {

// Every target is a class of [0, V) or ignore_index; the error names the position in targets.
void check_targets(const char* op, const std::vector<int32_t>& ids, const Shape& shape, int64_t vocab,
                   int32_t ignore_index) {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] == ignore_index || (ids[i] >= 0 && ids[i] < vocab)) continue;
    Shape position(shape.size());
    for (int64_t rest = static_cast<int64_t>(i), a = static_cast<int64_t>(shape.size()) - 1; a >= 0; --a) {
      position[static_cast<size_t>(a)] = rest % shape[static_cast<size_t>(a)];
      rest /= shape[static_cast<size_t>(a)];
    }
    NL_CHECK(false, op, "target {} at {} of targets {} is outside [0, {}) and is not ignore_index {}", ids[i],
             shape_str(position), shape_str(shape), vocab, ignore_index);
  }
}

// (1/n) sum_{r in K} smooth_r, smooth_r = -sum_j log softmax(X_r)_j = V lse_r - sum_j X[r, j], from
// X (N, V), lse (N,) and the 0/1 counted rows; 0 when no row counts. Accumulated in double.
double mean_smooth_loss(const Tensor& x, const Tensor& lse, const std::vector<double>& counted) {
  const std::vector<double> lse_r = lse.to_vector(), sum_r = ops::reduce(ReduceOp::Sum, x, 1).to_vector();
  const double vocab = static_cast<double>(x.size(1));
  double total = 0.0, n = 0.0;
  for (size_t r = 0; r < counted.size(); ++r) {
    if (counted[r] == 0) continue;
    total += vocab * lse_r[r] - sum_r[r];
    n += 1;
  }
  return n > 0 ? total / n : 0.0;
}

}  // namespace

// fairseq's label_smoothed_nll_loss (the form since fairseq 791ab7c, 2021), with the mean over counted
// rows K (n = |K|) instead of fairseq's sum. eps_i = eps / (V - 1), p_r = softmax(X_r):
//   l_r = (1 - eps - eps_i) nll_r + eps_i smooth_r,   nll_r = lse_r - X[r, t_r],
//   smooth_r = -sum_j log p_rj = V lse_r - sum_j X[r, j],          L = (1/n) sum_{r in K} l_r,
// i.e. the cross-entropy against q_r = (1 - eps - eps_i) onehot(t_r) + eps_i (q = 1 - eps on the
// target, eps_i on each other class, the padding class included as in fairseq; sum_j q_rj = 1).
// d nll_r / dX[r, j] = p_rj - [j == t_r] and d smooth_r / dX[r, j] = V p_rj - 1, so for r in K
//   dX[r, j] = (g / n) ((1 - eps - eps_i) (p_rj - [j == t_r]) + eps_i (V p_rj - 1)) = (g / n) (p_rj - q_rj)
// (the p terms: 1 - eps - eps_i + V eps_i = 1), and 0 on ignored rows. eps = 0 is cross_entropy exactly.
Var label_smoothed_cross_entropy(const Var& logits, const Tensor& targets, double epsilon, int32_t ignore_index) {
  const char* name = "label_smoothed_cross_entropy";
  NL_CHECK(epsilon >= 0 && epsilon < 1, name, "epsilon must be in [0, 1), got {}", epsilon);
  const LossRows rows = loss_rows(name, logits, targets);
  const Tensor x = rows.x, t = rows.t;  // (N, V), (N,)
  NL_CHECK(!is_half(x.dtype()), name, "logits must be float32 or float64, got {} (cast them up first)",
           dtype_name(x.dtype()));
  const int64_t vocab = x.size(1);
  NL_CHECK(epsilon == 0 || vocab >= 2, name, "epsilon > 0 needs V >= 2 classes, got logits {}",
           shape_str(logits.shape()));
  const std::vector<int32_t> ids = targets.to_ints();
  check_targets(name, ids, targets.shape(), vocab, ignore_index);
  std::vector<double> counted(ids.size());  // 1 on the rows in K
  for (size_t r = 0; r < ids.size(); ++r) counted[r] = ids[r] == ignore_index ? 0.0 : 1.0;
  const int64_t count = static_cast<int64_t>(std::count(counted.begin(), counted.end(), 1.0));
  Tensor lse = Tensor::empty({x.size(0)}, x.dtype(), x.device());
  const double nll = backend_for(x.device()).cross_entropy_forward(x, t, ignore_index, lse);  // mean over K
  const double eps_i = epsilon > 0 ? epsilon / static_cast<double>(vocab - 1) : 0.0;
  const double smooth = epsilon > 0 ? mean_smooth_loss(x, lse, counted) : 0.0;
  const double keep_target = 1.0 - epsilon - eps_i;
  Tensor y = Tensor::full({}, keep_target * nll + eps_i * smooth, x.dtype(), x.device());
  Tensor counted_rows = Tensor::from_vector(counted, {x.size(0), 1}, x.dtype()).to(x.device());  // (N, 1)
  const Shape logits_shape = logits.shape();
  auto d_logits = [x, t, lse, ignore_index, count, keep_target, eps_i, vocab, counted_rows,
                   logits_shape](const Tensor& g) -> Grads {
    const double s = count > 0 ? g.item() / static_cast<double>(count) : 0.0;
    Tensor dx = Tensor::empty(x.shape(), x.dtype(), x.device());
    backend_for(x.device()).cross_entropy_backward(x, t, ignore_index, lse, s * keep_target, dx);
    if (eps_i > 0) {
      const Tensor w = ops::scale(counted_rows, s * eps_i);  // (N, 1): (g / n) eps_i on K, 0 elsewhere
      const Tensor p = ops::softmax(x, {});
      ops::axpy_(1.0, ops::sub(ops::mul(p, ops::scale(w, static_cast<double>(vocab))), w), dx);
    }
    return {dx.reshape(logits_shape)};
  };
  return record(name, {logits}, y, d_logits);
}

}  // namespace normlab
