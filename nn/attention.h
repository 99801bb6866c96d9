// Self-attention, causal in a decoder and bidirectional in an encoder (model.arch), with separate
// projections (children "q", "k", "v", "o", each a Linear with bias when config.bias), so that init
// and gradient logs can address each one. H = n_heads query
// heads, K = n_kv_heads key/value heads (K divides H; K = H is plain multi-head, K = 1 multi-query),
// D = head_dim (d_model / H unless set):
//   q = x Wq^T (B,T,H D), k = x Wk^T, v = x Wv^T (B,T,K D)
//   split into heads: q (B,H,T,D), k, v (B,K,T,D); config.qk_norm: q, k normalized over D
//   (children "q_norm", "k_norm": the model's norm_type); rope: q, k rotated by position (rotate-half)
//   query head h reads key/value head h / (H/K): q viewed as (B,K,(H/K) T,D), so each group's
//   queries share one batched product with their k and v (no copies of k, v)
//   p = causal_softmax(q k^T, sliding_window, 1 / sqrt(D)) (B,H,T,T): scale, mask and softmax in
//       one kernel (float32 inside it under autocast, p stored in the scores' dtype);
//       arch "encoder": p = softmax(q k^T / sqrt(D)), no mask (bidirectional; sliding_window unused)
//   y = merge_heads(p v) Wo^T                             (B,T,C), then dropout(config.dropout)
// Key padding and cross-attention (model.arch "encoder_decoder", fairseq's Transformer): with a
// key_padding (B,S) int32 (1 = pad) the probabilities are masked_softmax(q k^T, key_padding, causal,
// 1 / sqrt(D)), padded keys getting exactly 0; cross-attention takes q from x (B,T,C) and k, v from
// the encoder's output memory (B,S,C), S may differ from T, never causal and without rope (the
// positions of queries and keys are in different sequences).
#pragma once
#include <memory>

#include "nn/layers.h"
#include "nn/norms.h"
#include "nn/model_config.h"
#include "nn/module.h"

namespace normlab {

// Rows [start, start + count) of a (T, C) position table (sinusoidal positions, rope's cos and sin)
// as a fresh (count, C) tensor: the positions of the newest tokens in incremental decoding.
Tensor position_rows(const Tensor& table, int64_t start, int64_t count);

// Incremental decoding (no tape, eval mode) keeps, per self-attention, the keys and values of the
// positions decoded so far, transposed, (B,K,D,t), so that a new position appends on the last axis.
// Cross-attention's keys and values come from the encoder's memory once: (B,K,S,D).
struct KeyValueCache {
  Var keys_t, values_t;  // (B,K,D,t); undefined before the first position
};
struct MemoryKeyValues {
  Var keys, values;  // (B,K,S,D)
};

// The resolved attention shape of a config (0 = default in n_kv_heads and head_dim).
int64_t kv_heads_of(const ModelConfig& config);
int64_t head_dim_of(const ModelConfig& config);

class CausalSelfAttention : public Module {
 public:
  // Causal as is_causal(config) says.
  explicit CausalSelfAttention(const ModelConfig& config);
  // Causal or bidirectional as `causal` says (the stacks of an encoder_decoder model).
  CausalSelfAttention(const ModelConfig& config, bool causal);
  // x (B,T,C) -> (B,T,C); dropout_seed is this site's seed.
  Var forward(const Var& x, uint64_t dropout_seed);
  // Self-attention with a key-padding mask: x (B,T,C), key_padding (B,T) int32 or undefined.
  Var forward(const Var& x, const Tensor& key_padding, uint64_t dropout_seed);
  // Cross-attention: q from x (B,T,C), k and v from memory (B,S,C); key_padding (B,S) int32 or
  // undefined -> (B,T,C). Throws when built causal.
  Var forward(const Var& x, const Var& memory, const Tensor& key_padding, uint64_t dropout_seed);

  // ---- incremental decoding (nn/transformer.h's decode_step) ----
  // Causal self-attention of the newest position: x (B,1,C) at `position` (= the cache's length),
  // its key and value appended to `cache` -> (B,1,C), what forward gives at that position.
  Var step(const Var& x, int64_t position, KeyValueCache& cache);
  // Cross-attention's keys and values of memory (B,S,C) (k_norm applied), made once per source batch.
  MemoryKeyValues memory_keys_values(const Var& memory);
  // Cross-attention of x (B,1,C) over memory's keys and values; key_padding (B,S) or undefined.
  Var step_cross(const Var& x, const MemoryKeyValues& memory, const Tensor& key_padding);

 private:
  // The shared body: q from x, k and v from kv_source (x itself for self-attention).
  Var run(const Var& x, const Var& kv_source, const Tensor* key_padding, bool cross, uint64_t dropout_seed);
  // q (B,H,Tq,D), k, v (B,K,Tk,D) -> (B,H,Tq,D); key_padding null: the decoder-only path
  // (causal_softmax / softmax), else masked_softmax with *key_padding (possibly undefined).
  Var attend(const Var& q, const Var& k, const Var& v, const Tensor* key_padding) const;

  int64_t heads_, kv_heads_, head_dim_, window_;
  bool causal_, rope_;
  double rope_theta_, dropout_;
  std::shared_ptr<Linear> q_, k_, v_, o_;
  std::shared_ptr<Norm> q_norm_, k_norm_;  // config.qk_norm only
};

}  // namespace normlab
