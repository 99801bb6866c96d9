// Index ops: values moved by integer indices that are constants of the forward (no gradient),
// as a mixture-of-experts layer moves tokens to its experts and back. Both are linear in their
// floating input, and each one's backward is the other's kind of move: a gather's adjoint is a
// scatter-add, a scatter-add's adjoint is a gather. The kernels are the embedding lookup and its
// backward (core/backend.h), so every backend that has an embedding has these.
// Notation: g = dL/dy (y's shape), dx = dL/dx (x's shape).
#include <algorithm>
#include <limits>

#include "autograd/ops.h"
#include "core/ops.h"

namespace normlab {

namespace {

// ids on the host, each checked to lie in [0, limit): "[op] index 7 at position 3 is outside [0, 4)".
std::vector<int32_t> checked_indices(const Tensor& idx, int64_t limit, const char* op) {
  NL_CHECK(idx.defined() && idx.dtype() == DType::I32, op, "indices must be int32, got {}",
           idx.defined() ? idx.describe() : std::string("undefined"));
  std::vector<int32_t> ids = idx.to_ints();
  for (size_t i = 0; i < ids.size(); ++i)
    NL_CHECK(ids[i] >= 0 && ids[i] < limit, op, "index {} at position {} is outside [0, {})", ids[i], i,
             limit);
  return ids;
}

}  // namespace

// x (..., E), idx (..., k) int32 with the same leading axes:  y[r, j] = x[r, idx[r, j]]  (rows r).
// Seen as a lookup of the (R E, 1) column x_flat at flat ids f[r k + j] = r E + idx[r, j]:
//   dx_flat = zeros, dx_flat[f[i]] += g_flat[i]   (a scatter-add; an index repeated in a row sums)
Var gather_last(const Var& x, const Tensor& idx) {
  NL_CHECK(x.dim() >= 1 && idx.defined() && idx.dim() == x.dim(), "gather_last",
           "x (..., E) and idx (..., k) need the same rank, got x {} and idx {}", shape_str(x.shape()),
           idx.defined() ? shape_str(idx.shape()) : "undefined");
  for (int a = 0; a + 1 < x.dim(); ++a)
    NL_CHECK(x.size(a) == idx.size(a), "gather_last", "leading axes differ: x {} and idx {}",
             shape_str(x.shape()), shape_str(idx.shape()));
  const int64_t E = x.size(-1), k = idx.size(-1), rows = idx.numel() / std::max<int64_t>(k, 1);
  const std::vector<int32_t> ids = checked_indices(idx, E, "gather_last");
  std::vector<int32_t> flat(ids.size());
  for (size_t i = 0; i < ids.size(); ++i)
    flat[i] = static_cast<int32_t>(static_cast<int64_t>(i) / k * E + ids[i]);
  NL_CHECK(x.value().numel() <= std::numeric_limits<int32_t>::max(), "gather_last",
           "x {} has more than 2^31 - 1 elements", shape_str(x.shape()));
  const Device device = x.value().device();
  const Tensor flat_ids = Tensor::from_ints(flat, {rows * k}).to(device);
  Tensor y = ops::embedding(x.value().reshape({-1, 1}), flat_ids).reshape(idx.shape());
  const Shape x_shape = x.shape();
  return record("gather_last", {x}, y, [flat_ids, x_shape](const Tensor& g) -> Grads {
    Tensor dx = Tensor::zeros({numel_of(x_shape, "gather_last"), 1}, g.dtype(), g.device());
    backend_for(g.device()).embedding_backward(flat_ids, g.contiguous().reshape({-1, 1}), dx);
    return {dx.reshape(x_shape)};
  });
}

// src (n, C), rows (n,) int32 in [0, R):  y (R, C) = zeros, y[rows[i]] += src[i]  (repeats sum,
// rows nobody names stay 0). Each y[r] is a sum of the src rows i with rows[i] = r, so
// dsrc[i] = g[rows[i]]:   dsrc = g looked up at rows (a gather).
Var scatter_add_rows(const Var& src, const Tensor& rows, int64_t n_rows) {
  NL_CHECK(src.dim() == 2 && rows.defined() && rows.dim() == 1 && rows.size(0) == src.size(0),
           "scatter_add_rows", "expected src (n, C) and rows (n,), got src {} and rows {}",
           shape_str(src.shape()), rows.defined() ? shape_str(rows.shape()) : "undefined");
  NL_CHECK(n_rows >= 0, "scatter_add_rows", "the row count must be >= 0, got {}", n_rows);
  checked_indices(rows, n_rows, "scatter_add_rows");
  const Tensor saved_rows = rows.to(src.value().device()).contiguous();
  Tensor y = Tensor::zeros({n_rows, src.size(1)}, src.dtype(), src.value().device());
  backend_for(y.device()).embedding_backward(saved_rows, src.value().contiguous(), y);
  return record("scatter_add_rows", {src}, y, [saved_rows](const Tensor& g) -> Grads {
    return {ops::embedding(g, saved_rows)};
  });
}

}  // namespace normlab
