// Gradient-check cases for softmax, causal and key-padded softmax, attention (self and cross),
// logsumexp, embedding, cross-entropy (plain and label-smoothed) and dropout.
// Nonlinear cases use step 1e-4: truncation error ~ h^2 f''' / 6 ~ 1e-9, rounding ~ 1e-16 |L| / h.
#include <cmath>
#include <vector>

#include "autograd/ops.h"
#include "autograd/ops/case_inputs.h"

namespace normlab {

using cases::normal_case;

namespace {

constexpr double kStep = 1e-4;

// Causal multi-head self-attention on given q, k, v (B, T, C):
//   per head: softmax_causal(q k^T / sqrt(D)) v, heads merged back to (B, T, C).
Var attention(const Var& q, const Var& k, const Var& v, int64_t heads) {
  const Var qh = split_heads(q, heads), kh = split_heads(k, heads), vh = split_heads(v, heads);
  const double d = static_cast<double>(q.size(-1) / heads);
  const Var probs = causal_softmax(matmul(qh, kh, false, true), 0, 1.0 / std::sqrt(d));  // (B, H, T, T)
  return merge_heads(matmul(probs, vh));                                               // (B, T, C)
}

// Grouped-query attention: q (B, T, H D) with H = 4 heads, k, v (B, T, K D) with K = 2 kv heads,
// D = 3; query head h reads kv head h / 2. Written without the grouped reshape of nn/attention.cpp:
// each kv head is copied for its queries (a slice per head), so the case checks the mapping as well;
// the scale is a separate op here (the composed form the fused softmax replaced).
Var gqa_reference(const Var& q, const Var& k, const Var& v, int64_t window) {
  const int64_t heads = 4, kv_heads = 2, d = 3;
  std::vector<Var> outputs;
  for (int64_t h = 0; h < heads; ++h) {
    const int64_t g = h / (heads / kv_heads);
    const Var qh = narrow_last(q, h * d, d), kh = narrow_last(k, g * d, d), vh = narrow_last(v, g * d, d);
    const Var scores = scale(matmul(qh, kh, false, true), 1.0 / std::sqrt(static_cast<double>(d)));
    outputs.push_back(matmul(causal_softmax(scores, window), vh));  // (B, T, D)
  }
  Var y = outputs[0];
  for (size_t h = 1; h < outputs.size(); ++h) y = add(y, scale(outputs[h], static_cast<double>(h + 1)));
  return y;  // a weighted sum keeps every head's gradient distinct
}

// Cross-attention, 2 heads: queries from the decoder q (B, Tq, C), keys and values from the encoder
// k, v (B, Tk, C), the source's key padding (B, Tk): per head masked_softmax(q k^T, pad, 1/sqrt(D)) v.
Var cross_attention(const Var& q, const Var& k, const Var& v, const Tensor& key_padding) {
  const Var qh = split_heads(q, 2), kh = split_heads(k, 2), vh = split_heads(v, 2);
  const double d = static_cast<double>(q.size(-1) / 2);
  const Var probs = masked_softmax(matmul(qh, kh, false, true), key_padding, false, 1.0 / std::sqrt(d));
  return merge_heads(matmul(probs, vh));  // (B, Tq, C)
}

void register_masked_softmax_cases(std::vector<OpCase>& c) {
  // Batch 0 pads keys 1 and 4 (inside and at the end), batch 1 pads every key: its rows are 0.
  const Tensor pad = Tensor::from_ints({0, 1, 0, 0, 1, 1, 1, 1, 1, 1}, {2, 5});
  c.push_back(normal_case("masked_softmax",
                          "key-padded softmax of 0.6 x, cross-attention scores (2, 2, 3, 5) (Tq 3, Tk 5): "
                          "batch 0 pads keys 1 and 4, batch 1 every key",
                          {"x"}, {{2, 2, 3, 5}},
                          [pad](const std::vector<Var>& v) { return masked_softmax(v[0], pad, false, 0.6); },
                          kStep));
  // Right padding (key 3), left padding (key 0: row 0 sees no key), padding inside (keys 1, 2).
  const Tensor causal_pad = Tensor::from_ints({0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0}, {3, 4});
  c.push_back(normal_case("masked_softmax_causal",
                          "causal key-padded softmax of 0.8 x, (3, 2, 4, 4): batch 0 pads key 3, batch 1 key 0 "
                          "(its row 0 sees no key), batch 2 keys 1 and 2",
                          {"x"}, {{3, 2, 4, 4}},
                          [causal_pad](const std::vector<Var>& v) {
                            return masked_softmax(v[0], causal_pad, true, 0.8);
                          },
                          kStep));
  const Tensor source_pad = Tensor::from_ints({0, 0, 0, 0, 1, 0, 0, 1, 1, 1}, {2, 5});
  c.push_back(normal_case("masked_cross_attention",
                          "cross-attention, q (2, 3, 6) from the decoder, k v (2, 5, 6) from the encoder, 2 heads, "
                          "source padding (1 and 3 keys): split_heads, q k^T, masked_softmax with 1 / sqrt(D), @ v",
                          {"q", "k", "v"}, {{2, 3, 6}, {2, 5, 6}, {2, 5, 6}},
                          [source_pad](const std::vector<Var>& v) {
                            return cross_attention(v[0], v[1], v[2], source_pad);
                          },
                          kStep));
}

}  // namespace

void register_softmax_loss_cases(std::vector<OpCase>& c) {
  c.push_back(normal_case("softmax", "softmax over the last axis of (3, 5)", {"x"}, {{3, 5}},
                          [](const std::vector<Var>& v) { return softmax(v[0]); }, kStep, true));
  c.push_back(normal_case("causal_softmax", "causal softmax of (2, 4, 4) scores", {"x"}, {{2, 4, 4}},
                          [](const std::vector<Var>& v) { return causal_softmax(v[0]); }, kStep));
  c.push_back(normal_case("scaled_causal_softmax", "causal softmax of 0.45 x, (2, 4, 4) scores (the scale fused)",
                          {"x"}, {{2, 4, 4}},
                          [](const std::vector<Var>& v) { return causal_softmax(v[0], 0, 0.45); }, kStep));
  c.push_back(normal_case("attention",
                          "causal self-attention, q k v (2, 4, 6), 2 heads: split_heads, q k^T, "
                          "causal_softmax with 1 / sqrt(D) fused (as nn/attention.cpp), @ v, merge_heads",
                          {"q", "k", "v"}, {{2, 4, 6}, {2, 4, 6}, {2, 4, 6}},
                          [](const std::vector<Var>& v) { return attention(v[0], v[1], v[2], 2); },
                          kStep));
  c.push_back(normal_case("sliding_window_softmax",
                          "causal softmax of 0.7 x, (2, 6, 6) scores with window 2: row i sees columns i-2 .. i",
                          {"x"}, {{2, 6, 6}},
                          [](const std::vector<Var>& v) { return causal_softmax(v[0], 2, 0.7); }, kStep));
  c.push_back(normal_case("gqa_attention",
                          "4 query heads on 2 kv heads (head h reads kv head h / 2), D 3, T 5, window 2, "
                          "each head by slices",
                          {"q", "k", "v"}, {{2, 5, 12}, {2, 5, 6}, {2, 5, 6}},
                          [](const std::vector<Var>& v) { return gqa_reference(v[0], v[1], v[2], 2); },
                          kStep));
  c.push_back(normal_case("logsumexp", "logsumexp over the last axis of (3, 5)", {"x"}, {{3, 5}},
                          [](const std::vector<Var>& v) { return logsumexp(v[0]); }, kStep, true));
  c.push_back(normal_case("logsumexp_large",
                          "logsumexp of x + 1000, (2, 3, 4): exp(1000) overflows, the max-shifted form does not",
                          {"x"}, {{2, 3, 4}},
                          [](const std::vector<Var>& v) { return logsumexp(add_scalar(v[0], 1000.0)); }, kStep));
  c.push_back(normal_case("rope", "rotary embedding of (2, 3, 5, 4), theta 100 (rotate-half layout)", {"x"},
                          {{2, 3, 5, 4}},
                          [](const std::vector<Var>& v) {
                            const RopeTables t = rope_tables(5, 4, 100.0, DType::F64);
                            return rope(v[0], t.cos, t.sin);
                          },
                          1e-3));
  {
    // ids (2, 3) with a repeated id (1 and 4 twice) and an unused row (2, 3): the scatter-add sums.
    const Tensor ids = Tensor::from_ints({1, 4, 1, 0, 5, 4}, {2, 3});
    c.push_back(normal_case("embedding", "weight (6, 4) looked up at ids (2, 3) with repeats", {"weight"},
                            {{6, 4}},
                            [ids](const std::vector<Var>& v) { return embedding(v[0], ids); }, 1e-3));
  }
  {
    // targets (2, 3) with one position ignored (-1): it must not count in the mean.
    const Tensor targets = Tensor::from_ints({1, 4, -1, 0, 2, 3}, {2, 3});
    c.push_back(normal_case("cross_entropy", "mean cross-entropy of logits (2, 3, 5), one target ignored",
                            {"logits"}, {{2, 3, 5}},
                            [targets](const std::vector<Var>& v) { return cross_entropy(v[0], targets, -1); },
                            kStep));
  }
  {
    // fairseq's convention: the padding id 0 is a class, and the ignore_index; two targets are padding.
    const Tensor targets = Tensor::from_ints({1, 4, 0, 0, 2, 3}, {2, 3});
    c.push_back(normal_case("label_smoothed_cross_entropy",
                            "label-smoothed cross-entropy, epsilon 0.2, logits (2, 3, 5), two targets ignored "
                            "(ignore_index 0)",
                            {"logits"}, {{2, 3, 5}},
                            [targets](const std::vector<Var>& v) {
                              return label_smoothed_cross_entropy(v[0], targets, 0.2, 0);
                            },
                            kStep));
  }
  register_masked_softmax_cases(c);
  c.push_back(normal_case("dropout", "dropout p = 0.3, seed 1234, training (a fixed mask)", {"x"}, {{4, 5}},
                          [](const std::vector<Var>& v) { return dropout(v[0], 0.3, 1234, true); }, 1e-3,
                          true));
}

}  // namespace normlab
