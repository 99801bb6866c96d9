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
#pragma once
#include <memory>

#include "nn/layers.h"
#include "nn/norms.h"
#include "nn/model_config.h"
#include "nn/module.h"

namespace normlab {

// The resolved attention shape of a config (0 = default in n_kv_heads and head_dim).
int64_t kv_heads_of(const ModelConfig& config);
int64_t head_dim_of(const ModelConfig& config);

class CausalSelfAttention : public Module {
 public:
  explicit CausalSelfAttention(const ModelConfig& config);
  // x (B,T,C) -> (B,T,C); dropout_seed is this site's seed.
  Var forward(const Var& x, uint64_t dropout_seed);

 private:
  // q (B,H,T,D), k, v (B,K,T,D) -> (B,H,T,D)
  Var attend(const Var& q, const Var& k, const Var& v) const;

  int64_t heads_, kv_heads_, head_dim_, window_;
  bool causal_, rope_;
  double rope_theta_, dropout_;
  std::shared_ptr<Linear> q_, k_, v_, o_;
  std::shared_ptr<Norm> q_norm_, k_norm_;  // config.qk_norm only
};

}  // namespace normlab
