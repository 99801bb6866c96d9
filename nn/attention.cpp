#include "nn/attention.h"

#include <cmath>

#include "autograd/ops.h"
#include "autograd/tape.h"
#include "core/ops.h"
#include "nn/activation_record.h"

namespace normlab {

Tensor position_rows(const Tensor& table, int64_t start, int64_t count) {
  NL_CHECK(table.dim() == 2 && start >= 0 && count >= 1 && start + count <= table.size(0), "position_rows",
           "rows [{}, {}) of a (T, C) table, got {}", start, start + count, table.describe());
  const int64_t c = table.size(1);
  return ops::narrow_last(table.contiguous().reshape({1, table.numel()}), start * c, count * c).reshape({count, c});
}

namespace {
// cached (..., n) with fresh (..., m) appended on the last axis -> (..., n + m); cached undefined: fresh.
Var append_last(const Var& cached, const Var& fresh) {
  if (!cached.defined()) return fresh;
  const int64_t n = cached.size(-1), total = n + fresh.size(-1);
  return constant(ops::add(ops::pad_last(cached.value(), 0, total), ops::pad_last(fresh.value(), n, total)));
}
}  // namespace

int64_t kv_heads_of(const ModelConfig& config) {
  return config.n_kv_heads > 0 ? config.n_kv_heads : config.n_heads;
}

int64_t head_dim_of(const ModelConfig& config) {
  return config.head_dim > 0 ? config.head_dim : config.d_model / config.n_heads;
}

CausalSelfAttention::CausalSelfAttention(const ModelConfig& config)
    : CausalSelfAttention(config, is_causal(config)) {}

CausalSelfAttention::CausalSelfAttention(const ModelConfig& config, bool causal)
    : heads_(config.n_heads),
      kv_heads_(kv_heads_of(config)),
      head_dim_(head_dim_of(config)),
      window_(config.sliding_window),
      causal_(causal),
      rope_(config.position_embedding == PositionEmbedding::Rope),
      rope_theta_(config.rope_theta),
      dropout_(config.dropout) {
  NL_CHECK(heads_ % kv_heads_ == 0, "attention", "n_heads ({}) must be a multiple of n_kv_heads ({})", heads_,
           kv_heads_);
  const int64_t c = config.d_model, q_width = heads_ * head_dim_, kv_width = kv_heads_ * head_dim_;
  const DType dtype = parameter_dtype(config);
  q_ = register_module("q", std::make_shared<Linear>(c, q_width, config.bias, dtype));
  k_ = register_module("k", std::make_shared<Linear>(c, kv_width, config.bias, dtype));
  v_ = register_module("v", std::make_shared<Linear>(c, kv_width, config.bias, dtype));
  o_ = register_module("o", std::make_shared<Linear>(q_width, c, config.bias, dtype));
  mark_scaled_matrix(*v_, /*residual_output=*/false);
  mark_scaled_matrix(*o_, /*residual_output=*/true);
  if (config.qk_norm) {
    q_norm_ = register_module("q_norm", std::make_shared<Norm>(config, head_dim_));
    k_norm_ = register_module("k_norm", std::make_shared<Norm>(config, head_dim_));
  }
}

Var CausalSelfAttention::forward(const Var& x, uint64_t dropout_seed) {
  return run(x, x, nullptr, false, dropout_seed);
}

Var CausalSelfAttention::forward(const Var& x, const Tensor& key_padding, uint64_t dropout_seed) {
  return run(x, x, &key_padding, false, dropout_seed);
}

Var CausalSelfAttention::forward(const Var& x, const Var& memory, const Tensor& key_padding,
                                 uint64_t dropout_seed) {
  NL_CHECK(!causal_, "attention", "cross-attention cannot be causal (queries and keys are different sequences)");
  NL_CHECK(memory.dim() == 3 && x.dim() == 3 && memory.size(0) == x.size(0) && memory.size(2) == x.size(2),
           "attention", "cross-attention needs x (B,T,C) and memory (B,S,C), got {} and {}", shape_str(x.shape()),
           shape_str(memory.shape()));
  return run(x, memory, &key_padding, true, dropout_seed);
}

Var CausalSelfAttention::run(const Var& x, const Var& kv_source, const Tensor* key_padding, bool cross,
                             uint64_t dropout_seed) {
  NL_CHECK(x.dim() == 3, "attention", "expected x (B,T,C), got {}", shape_str(x.shape()));
  Var q = split_heads(q_->forward(x), heads_);             // (B,H,T,D)
  Var k = split_heads(k_->forward(kv_source), kv_heads_);  // (B,K,S,D), S = T for self-attention
  const Var v = split_heads(v_->forward(kv_source), kv_heads_);
  if (q_norm_) {  // QK-norm: each head's q and k over their D features
    q = q_norm_->forward(q);
    k = k_norm_->forward(k);
  }
  if (rope_ && !cross) {
    // cos/sin in float32 for a 16-bit model, then cast to its dtype (as Hugging Face's LLaMA)
    const DType dtype = q.value().dtype(), table_dtype = is_half(dtype) ? DType::F32 : dtype;
    const RopeTables tables = rope_tables(x.size(1), head_dim_, rope_theta_, table_dtype);
    const Tensor cos = tables.cos.to(dtype), sin = tables.sin.to(dtype);
    q = rope(q, cos, sin);
    k = rope(k, cos, sin);
  }
  const Var y = o_->forward(merge_heads(attend(q, k, v, key_padding)));  // (B,T,C)
  return dropout(y, dropout_, dropout_seed, is_training());
}

Var CausalSelfAttention::attend(const Var& q, const Var& k, const Var& v, const Tensor* key_padding) const {
  const int64_t b = q.size(0), tq = q.size(2), tk = k.size(2), group = heads_ / kv_heads_;
  // Query heads h = g * group + r (r < group) share kv head g: (B,H,Tq,D) is (B,K,group Tq,D) in memory.
  const Var q_grouped = group == 1 ? q : reshape(q, {b, kv_heads_, group * tq, head_dim_});
  Var scores = matmul(q_grouped, k, false, true);
  if (group != 1) scores = reshape(scores, {b, heads_, tq, tk});  // (B,H,Tq,Tk)
  const double scale_factor = 1.0 / std::sqrt(static_cast<double>(head_dim_));
  Var probs;
  if (key_padding) probs = masked_softmax(scores, *key_padding, causal_, scale_factor);  // encoder_decoder
  else probs = causal_ ? causal_softmax(scores, window_, scale_factor) : softmax(scale(scores, scale_factor));
  if (ActivationRecorder* recorder = activation_recorder())
    record_attention(*recorder, scope(), scores.value(), probs.value(), scale_factor, causal_, window_,
                     key_padding ? *key_padding : Tensor());
  if (group != 1) probs = reshape(probs, {b, kv_heads_, group * tq, tk});
  const Var heads = matmul(probs, v);                                          // (B,K,group Tq,D)
  return group == 1 ? heads : reshape(heads, {b, heads_, tq, head_dim_});    // (B,H,Tq,D)
}

}  // namespace normlab

namespace normlab {

Var CausalSelfAttention::step(const Var& x, int64_t position, KeyValueCache& cache) {
  NL_CHECK(!grad_enabled(), "attention", "incremental decoding runs without the tape (NoGradGuard)");
  NL_CHECK(causal_ && window_ == 0, "attention", "incremental decoding needs causal self-attention without a window");
  NL_CHECK(x.dim() == 3 && x.size(1) == 1, "attention", "a decoding step takes x (B,1,C), got {}", shape_str(x.shape()));
  const int64_t cached = cache.keys_t.defined() ? cache.keys_t.size(3) : 0;
  NL_CHECK(cached == position, "attention", "the cache holds {} positions, the step is at position {}", cached, position);
  Var q = split_heads(q_->forward(x), heads_);    // (B,H,1,D)
  Var k = split_heads(k_->forward(x), kv_heads_);  // (B,K,1,D)
  const Var v = split_heads(v_->forward(x), kv_heads_);
  if (q_norm_) {
    q = q_norm_->forward(q);
    k = k_norm_->forward(k);
  }
  if (rope_) {  // the tables of run(), row `position`
    const DType dtype = q.value().dtype(), table_dtype = is_half(dtype) ? DType::F32 : dtype;
    const RopeTables tables = rope_tables(position + 1, head_dim_, rope_theta_, table_dtype);
    const Tensor cos = position_rows(tables.cos, position, 1).to(dtype), sin = position_rows(tables.sin, position, 1).to(dtype);
    q = rope(q, cos, sin);
    k = rope(k, cos, sin);
  }
  cache.keys_t = append_last(cache.keys_t, transpose(k, 2, 3));  // (B,K,D,t)
  cache.values_t = append_last(cache.values_t, transpose(v, 2, 3));
  // One query per head, so query heads h = g * group + r are (B,K,group,D) in memory and the newest
  // position sees every cached one: the causal mask has nothing to hide.
  const int64_t b = x.size(0), group = heads_ / kv_heads_;
  const Var scores = matmul(reshape(q, {b, kv_heads_, group, head_dim_}), cache.keys_t);  // (B,K,group,t)
  const Var probs = softmax(scale(scores, 1.0 / std::sqrt(static_cast<double>(head_dim_))));
  const Var heads = matmul(probs, cache.values_t, false, true);  // (B,K,group,D)
  return o_->forward(merge_heads(reshape(heads, {b, heads_, 1, head_dim_})));  // (B,1,C)
}

MemoryKeyValues CausalSelfAttention::memory_keys_values(const Var& memory) {
  NL_CHECK(!causal_, "attention", "cross-attention cannot be causal (queries and keys are different sequences)");
  Var k = split_heads(k_->forward(memory), kv_heads_);  // (B,K,S,D)
  if (k_norm_) k = k_norm_->forward(k);
  return {k, split_heads(v_->forward(memory), kv_heads_)};
}

Var CausalSelfAttention::step_cross(const Var& x, const MemoryKeyValues& memory, const Tensor& key_padding) {
  NL_CHECK(x.dim() == 3 && x.size(1) == 1 && memory.keys.size(0) == x.size(0), "attention",
           "a cross-attention step takes x (B,1,C) and memory keys (B,K,S,D), got {} and {}", shape_str(x.shape()),
           shape_str(memory.keys.shape()));
  Var q = split_heads(q_->forward(x), heads_);  // (B,H,1,D)
  if (q_norm_) q = q_norm_->forward(q);
  return o_->forward(merge_heads(attend(q, memory.keys, memory.values, &key_padding)));  // (B,1,C)
}

}  // namespace normlab
