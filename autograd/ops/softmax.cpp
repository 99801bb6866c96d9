// Softmax over the last axis, plain and causal (optionally windowed), of scale * x: attention's
// 1 / sqrt(D) and its mask live inside one kernel. Backward works row by row with y alone; the
// (C, C) Jacobian is never formed, so attention's (B, H, T, T) scores cost O(T^2) per row block.
//
// y_j = exp(s x_j) / sum_k exp(s x_k) per row (x (..., C), scale s). With z = s x the Jacobian is
// dy_j/dz_i = y_j ([i == j] - y_i), and dz_i/dx_i = s, so with g = dL/dy:
//   dx_i = s sum_j g_j y_j ([i == j] - y_i) = s y_i (g_i - sum_j g_j y_j)        (saves y)
// Causal (x (..., T, T)): row i only sees columns j <= i (with window W > 0: i - W <= j <= i);
// masked y_ij are exactly 0 and do not depend on x, so the same formula gives them dx = 0 (their y
// factor is 0), and the visible entries form an ordinary softmax whose dot product sum_j g_j y_j
// skips the masked columns (y = 0 there). docs/derivations.md, "Scaled, masked softmax".
// Under autocast the scores arrive in 16 bits; the kernel computes in float32 and rounds y once.
//
// Masked (key padding, cross-attention), x (B, ..., Tq, Tk): row (b, q) sees the keys k that are not
// padding (key_padding[b, k] == 0) and, when causal, k <= q. The forward composes kernels: a 0/-inf
// bias on the padded keys of every row that sees some key, the (causal) softmax, then times the 0/1
// keep mask [key k is not padding]. A row that sees no key at all gets bias 0 and y = 0 from the
// keep mask: no -inf - (-inf) = NaN. The backward is the formula above: y = 0 on every masked entry
// and on the whole of an empty row, so dx = 0 there. docs/derivations.md, "Key-padding masked softmax".
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/ops.h"
#include "core/ops.h"

namespace normlab {

static Var softmax_op(const char* name, const Var& x, const SoftmaxArgs& args) {
  NL_CHECK(x.dim() >= 1, name, "needs at least a 1-d input, got shape {}", shape_str(x.shape()));
  if (args.causal)
    NL_CHECK(x.dim() >= 2 && x.size(-1) == x.size(-2), name, "expected (..., T, T), got {}",
             shape_str(x.shape()));
  Tensor y = ops::softmax(x.value(), args);
  const double s = args.scale;
  return record(name, {x}, y, [y, s](const Tensor& g) -> Grads { return {ops::softmax_backward(y, g, s)}; });
}

Var softmax(const Var& x) { return softmax_op("softmax", x, {}); }

Var causal_softmax(const Var& x, int64_t window, double scale) {
  const char* name = window > 0 ? "sliding_window_softmax" : "causal_softmax";
  return softmax_op(name, x, {.causal = true, .window = window, .scale = scale});
}

namespace {

// The padding of (B, Tk) key_padding as 0/1 ints, checked against scores (B, ..., Tq, Tk).
std::vector<int32_t> key_padding_flags(const Shape& scores, const Tensor& key_padding) {
  const int64_t batch = scores[0], keys = scores.back();
  NL_CHECK(key_padding.dtype() == DType::I32, "masked_softmax", "key_padding must be int32 (1 = pad), got {}",
           dtype_name(key_padding.dtype()));
  NL_CHECK(key_padding.shape() == Shape({batch, keys}), "masked_softmax",
           "key_padding {} must be (B, Tk) = ({}, {}) for scores {}", shape_str(key_padding.shape()), batch,
           keys, shape_str(scores));
  std::vector<int32_t> pad = key_padding.to_ints();
  for (size_t i = 0; i < pad.size(); ++i)
    NL_CHECK(pad[i] == 0 || pad[i] == 1, "masked_softmax", "key_padding must hold 0 or 1, got {} at ({}, {})",
             pad[i], static_cast<int64_t>(i) / keys, static_cast<int64_t>(i) % keys);
  return pad;
}

// Padding masks of scores (B, ..., Tq, Tk), from pad (B, Tk), with ones for the axes between:
//   keep (B, 1.., 1, Tk)     = 1 - pad: y is multiplied by it (the padded keys' y become exactly 0);
//   bias (B, 1.., 1 or Tq, Tk) = -inf on the padded keys of the rows that see some unpadded key,
//   0 elsewhere (and on every key of a row that sees none, whose softmax is then finite and zeroed
//   by keep). A causal row q of batch entry b sees an unpadded key iff q >= first[b], the first
//   unpadded key; bias depends on q only when 0 < first[b] < Tk for some b (padding on the left).
std::pair<Tensor, Tensor> padding_masks(const Shape& scores, const std::vector<int32_t>& pad, bool causal,
                                        DType dtype) {
  const int64_t batch = scores[0], queries = scores[scores.size() - 2], keys = scores.back();
  std::vector<int64_t> first(static_cast<size_t>(batch), keys);
  for (int64_t b = batch - 1; b >= 0; --b)
    for (int64_t k = keys - 1; k >= 0; --k)
      if (pad[static_cast<size_t>(b * keys + k)] == 0) first[static_cast<size_t>(b)] = k;
  bool by_query = false;
  for (int64_t f : first) by_query = by_query || (causal && f > 0 && f < keys);
  const int64_t rows = by_query ? queries : 1;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> keep(static_cast<size_t>(batch * keys)), bias(static_cast<size_t>(batch * rows * keys));
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t f = first[static_cast<size_t>(b)];
    for (int64_t q = 0; q < rows; ++q) {
      const bool sees_a_key = by_query ? q >= f : f < keys;
      for (int64_t k = 0; k < keys; ++k) {
        const bool padded = pad[static_cast<size_t>(b * keys + k)] != 0;
        bias[static_cast<size_t>((b * rows + q) * keys + k)] = padded && sees_a_key ? -inf : 0.0;
        keep[static_cast<size_t>(b * keys + k)] = padded ? 0.0 : 1.0;
      }
    }
  }
  Shape keep_shape(scores.size(), 1), bias_shape(scores.size(), 1);
  keep_shape[0] = bias_shape[0] = batch;
  keep_shape.back() = bias_shape.back() = keys;
  bias_shape[scores.size() - 2] = rows;
  return {Tensor::from_vector(keep, keep_shape, dtype), Tensor::from_vector(bias, bias_shape, dtype)};
}

}  // namespace

// x (B, ..., Tq, Tk) scores, key_padding (B, Tk) int32 (1 = pad) or undefined -> y of x's shape.
Var masked_softmax(const Var& x, const Tensor& key_padding, bool causal, double scale) {
  const char* name = "masked_softmax";
  check_floating(x.value(), name, "scores");
  NL_CHECK(std::isfinite(scale) && scale > 0, name, "scale must be finite and > 0, got {}", scale);
  const bool padded = key_padding.defined();
  NL_CHECK(x.dim() >= (padded ? 3 : 2), name, "scores must be {}, got {}",
           padded ? "(B, ..., Tq, Tk)" : "(..., Tq, Tk)", shape_str(x.shape()));
  NL_CHECK(!causal || x.size(-1) == x.size(-2), name, "causal needs Tq == Tk, got scores {} (Tq {}, Tk {})",
           shape_str(x.shape()), x.size(-2), x.size(-1));
  const SoftmaxArgs args{.causal = causal, .scale = scale};
  std::vector<int32_t> pad;
  if (padded) pad = key_padding_flags(x.shape(), key_padding);
  const bool any_pad = std::find(pad.begin(), pad.end(), 1) != pad.end();
  Tensor y;
  if (!any_pad) {
    y = ops::softmax(x.value(), args);  // exactly softmax / causal_softmax of scale * x
  } else {
    auto [keep, bias] = padding_masks(x.shape(), pad, causal, x.value().dtype());  // (B,1..,1,Tk), (B,1..,1|Tq,Tk)
    const Device device = x.value().device();
    // (B, ..., Tq, Tk) = softmax(s (x + bias)) * keep
    y = ops::mul(ops::softmax(ops::add(x.value(), bias.to(device)), args), keep.to(device));
  }
  return record(name, {x}, y, [y, scale](const Tensor& g) -> Grads { return {ops::softmax_backward(y, g, scale)}; });
}

}  // namespace normlab
