// Differentiable ops on Var. Each is implemented in autograd/ops/<family>.cpp with its backward
// directly below its forward and the derivation in a comment above; autograd/DERIVATIVES.md
// collects them in one table. Errors start with the op name: "[matmul] inner dimensions differ ...".
#pragma once
#include <cstdint>
#include <vector>

#include "autograd/tape.h"

namespace normlab {

// ---- elementwise, with numpy broadcasting (gradients un-broadcast by ops::sum_to) ----
Var add(const Var& a, const Var& b);
Var sub(const Var& a, const Var& b);
Var mul(const Var& a, const Var& b);
Var div(const Var& a, const Var& b);
// x + branch with equal shapes: the residual connection, recorded under its own name so that the
// gradient flowing through the skip path is visible on the tape. d x = d y, d branch = d y.
Var residual_add(const Var& x, const Var& branch);
Var scale(const Var& x, double alpha);
Var add_scalar(const Var& x, double alpha);
Var neg(const Var& x);
Var exp(const Var& x);
Var log(const Var& x);
Var sqrt(const Var& x);
Var square(const Var& x);
Var tanh(const Var& x);
Var relu(const Var& x);
Var gelu(const Var& x);  // tanh approximation, as GPT-2
Var silu(const Var& x);

// ---- reductions ----
Var sum(const Var& x, int axis, bool keepdim = false);
Var mean(const Var& x, int axis, bool keepdim = false);
Var sum_all(const Var& x);   // scalar, shape ()
Var mean_all(const Var& x);  // scalar, shape ()

// ---- shapes ----
Var reshape(const Var& x, const Shape& shape);
Var transpose(const Var& x, int a, int b);  // materialised contiguous
// (B, T, C) -> (B, H, T, C/H) and back.
Var split_heads(const Var& x, int64_t heads);
Var merge_heads(const Var& x);
// x[..., start : start + length] along the last axis (e.g. the halves of a fused SwiGLU projection).
Var narrow_last(const Var& x, int64_t start, int64_t length);
// y = x copied to `device` (CPU <-> CUDA). Copying changes no value, so dx = g copied back to x's device.
Var to_device(const Var& x, Device device);
// y = x converted to dtype (float32 <-> bfloat16/float16/float64; rounding when narrowing);
// dx = g converted back to x's dtype. Returns x itself when it already has that dtype.
Var cast(const Var& x, DType dtype);

// ---- index moves (autograd/ops/index.cpp): integer indices are constants of the forward ----
// x (..., E), idx (..., k) int32 -> y (..., k), y[..., j] = x[..., idx[..., j]] (take along the last axis).
Var gather_last(const Var& x, const Tensor& idx);
// src (n, C), rows (n,) int32 -> y (n_rows, C) = zeros with y[rows[i]] += src[i]. The row gather
// that undoes it is embedding(x, rows).
Var scatter_add_rows(const Var& src, const Tensor& rows, int64_t n_rows);

// ---- products ----
// op(a) @ op(b) over the last two axes; batched, or with b (K, N) shared across the batch.
Var matmul(const Var& a, const Var& b, bool trans_a = false, bool trans_b = false);
// y = x W^T + b, x (..., in), W (out, in) as in PyTorch, b (out,) or undefined.
Var linear(const Var& x, const Var& weight, const Var& bias);

// ---- softmax, embedding, loss, dropout ----
Var softmax(const Var& x);         // last axis
// Causal softmax of scale * x, x (..., T, T): entries above the diagonal get probability 0. With
// window > 0 (sliding window, as Hugging Face's Mistral) row i sees columns i - window .. i
// (window + 1 keys); the others get probability exactly 0. Attention passes 1 / sqrt(D) as scale.
Var causal_softmax(const Var& x, int64_t window = 0, double scale = 1.0);
// Attention softmax of scale * x with a key-padding mask, x (B, ..., Tq, Tk) scores, e.g.
// (B, H, Tq, Tk); Tq may differ from Tk (cross-attention). key_padding int32 (B, Tk), 1 = pad, 0 =
// key, or undefined (no padding). Padded keys get probability exactly 0; causal (needs Tq == Tk)
// also hides k > q. A row with no visible key (every key padded) is all zeros, its gradient zero.
// Without padding it equals softmax / causal_softmax(x, 0, scale) bitwise. dtypes as causal_softmax.
Var masked_softmax(const Var& x, const Tensor& key_padding, bool causal = false, double scale = 1.0);
// weight (V, C), ids int32 (any shape) -> (*ids, C); backward scatter-adds into weight, except into
// row padding_idx (torch's padding_idx: that row gets no gradient from the lookup; -1 = none).
Var embedding(const Var& weight, const Tensor& ids, int64_t padding_idx = -1);

// ---- rotary position embedding (autograd/ops/rope.cpp) ----
struct RopeTables {
  Tensor cos, sin;  // (T, D), on the host
};
// cos/sin of position t times inv_freq_i = theta^(-2i/D), i < D/2, repeated for both halves of the
// head; computed in float32 for a float32 dtype (as Hugging Face does) and in float64 for float64.
RopeTables rope_tables(int64_t positions, int64_t head_dim, double theta, DType dtype);
// x (..., T, D), D even: y = x * cos + rotate_half(x) * sin, rotate_half([x1, x2]) = [-x2, x1]
// (Hugging Face's layout: the head split in halves, not interleaved pairs). cos, sin (T, D).
Var rope(const Var& x, const Tensor& cos, const Tensor& sin);
// y = log sum_j exp(x_j) over the last axis, x (..., V) -> (...), stable (the row max subtracted
// first); dx = g softmax(x). The z-loss of nn/transformer.h is mean(logsumexp(logits)^2).
Var logsumexp(const Var& x);
// Mean token cross-entropy fused with log-softmax. logits (..., V), targets int32 (...);
// positions whose target == ignore_index are excluded from the mean.
Var cross_entropy(const Var& logits, const Tensor& targets, int32_t ignore_index = -1);
// fairseq's label-smoothed cross-entropy fused with log-softmax, as a mean over the counted tokens
// (fairseq sums): with eps_i = epsilon / (V - 1), each counted token adds
//   (1 - epsilon - eps_i) (-log p_target) + eps_i sum_j (-log p_j),
// the cross-entropy against q = 1 - epsilon on the target and eps_i on every other class. Positions
// whose target == ignore_index are excluded (all excluded: loss 0, gradient 0, as cross_entropy).
// epsilon in [0, 1); epsilon = 0 is cross_entropy exactly. Logits float32 or float64.
Var label_smoothed_cross_entropy(const Var& logits, const Tensor& targets, double epsilon,
                                 int32_t ignore_index = -1);
// Inverted dropout with a counter-based mask from `seed`; identity when !training or p == 0.
Var dropout(const Var& x, double p, uint64_t seed, bool training);

// ---- normalization: fused ops with analytic backward (autograd/ops/norm.cpp) ----
// LayerNorm over the last axis, biased variance: y = (x - mean) * rstd * gamma + beta,
// rstd = 1/sqrt(var + eps). gamma/beta may be undefined Vars (no affine).
Var layer_norm(const Var& x, const Var& gamma, const Var& beta, double eps = 1e-5);
// RMSNorm: y = x / sqrt(mean(x^2) + eps) * g, g = weight or (1 + weight) when unit_offset
// (Gemma). eps must be > 0.
Var rms_norm(const Var& x, const Var& weight, double eps = 1e-6, bool unit_offset = false);
// GroupNorm over the last axis split into `groups` contiguous groups, per row.
Var group_norm(const Var& x, const Var& gamma, const Var& beta, int64_t groups, double eps = 1e-5);
// BatchNorm over all rows per channel (last axis). In training uses batch statistics and, when
// running_mean/var are defined, updates them in place: r = (1 - momentum) r + momentum * batch
// (unbiased variance). In eval uses the running statistics.
Var batch_norm(const Var& x, const Var& gamma, const Var& beta, Tensor running_mean,
               Tensor running_var, bool training, double momentum = 0.1, double eps = 1e-5);
// The no-normalization baseline: y = x (its own tape node, "identity_norm"), dx = g.
Var identity_norm(const Var& x);

}  // namespace normlab
