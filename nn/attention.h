// Causal multi-head self-attention with separate projections (children "q", "k", "v", "o", each a
// Linear (C, C) with bias when config.bias), so that init and gradient logs can address each one:
//   q, k, v = x Wq^T, x Wk^T, x Wv^T                 (B,T,C)
//   split into H heads                               (B,H,T,D), D = C/H
//   p = causal_softmax(q k^T / sqrt(D))              (B,H,T,T)
//   y = merge_heads(p v) Wo^T                        (B,T,C), then dropout(config.dropout)
#pragma once
#include <memory>

#include "nn/layers.h"
#include "nn/model_config.h"
#include "nn/module.h"

namespace normlab {

class CausalSelfAttention : public Module {
 public:
  explicit CausalSelfAttention(const ModelConfig& config);
  // x (B,T,C) -> (B,T,C); dropout_seed is this site's seed.
  Var forward(const Var& x, uint64_t dropout_seed);

 private:
  int64_t heads_;
  double dropout_;
  std::shared_ptr<Linear> q_, k_, v_, o_;
};

}  // namespace normlab
