#include "nn/attention.h"

#include <cmath>

#include "autograd/ops.h"

namespace normlab {

CausalSelfAttention::CausalSelfAttention(const ModelConfig& config)
    : heads_(config.n_heads), dropout_(config.dropout) {
  const int64_t c = config.d_model;
  const DType dtype = parameter_dtype(config);
  q_ = register_module("q", std::make_shared<Linear>(c, c, config.bias, dtype));
  k_ = register_module("k", std::make_shared<Linear>(c, c, config.bias, dtype));
  v_ = register_module("v", std::make_shared<Linear>(c, c, config.bias, dtype));
  o_ = register_module("o", std::make_shared<Linear>(c, c, config.bias, dtype));
}

Var CausalSelfAttention::forward(const Var& x, uint64_t dropout_seed) {
  NL_CHECK(x.dim() == 3, "attention", "expected x (B,T,C), got {}", shape_str(x.shape()));
  const Var q = split_heads(q_->forward(x), heads_);  // (B,H,T,D)
  const Var k = split_heads(k_->forward(x), heads_);
  const Var v = split_heads(v_->forward(x), heads_);
  const double d_head = static_cast<double>(x.size(2) / heads_);
  const Var scores = scale(matmul(q, k, false, true), 1.0 / std::sqrt(d_head));  // (B,H,T,T)
  const Var probs = causal_softmax(scores);
  const Var heads = matmul(probs, v);                         // (B,H,T,D)
  const Var y = o_->forward(merge_heads(heads));              // (B,T,C)
  return dropout(y, dropout_, dropout_seed, is_training());
}

}  // namespace normlab
