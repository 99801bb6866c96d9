// Mixtral's sparse mixture-of-experts feed-forward layer (Hugging Face's MixtralSparseMoeBlock),
// ffn_type "moe". For each token x (C,) of x (B,T,C), with E = n_experts, k = experts_top_k:
//   l = W_r x                              router logits (E,), W_r (E, C), no bias
//   p = softmax(l)                         over ALL E experts (what the load-balancing loss sees)
//   S = the k largest p_e                  the routing: chosen on the host, a constant of the forward
//   w_j = p_j / sum_{i in S} p_i, j in S   renormalised to sum 1 (= softmax over the k chosen logits)
//   y = sum_{j in S} w_j expert_j(x),      expert_e(x) = w2(silu(w1 x) * w3 x) (a SwiGLU FeedForward)
// then dropout(config.dropout). No capacity limit: every token reaches its k experts.
// Children: "router" (Linear C -> E, no bias), "experts" with "0" .. "E-1" (each w1, w2, w3), so
// parameters read "blocks.0.ffn.experts.3.w1.weight". Gradients flow through w (and so through p
// and the router) and through the chosen experts; an expert that no token chose gets none.
#pragma once
#include <memory>
#include <vector>

#include "nn/ffn.h"

namespace normlab {

// One layer's routing in a forward.
struct Routing {
  Var probs;       // (N, E) softmax of the router logits over all experts
  Tensor experts;  // (N, k) int32 on the host: each token's k most probable experts, most probable
                   // first (equal probabilities: the lower index first)
};

// p = softmax(logits (N, E)) and its top k per row (1 <= k <= E).
Routing route_top_k(const Var& logits, int64_t k);

// The smallest gap, over rows, between the least probable chosen expert's log-probability and the
// most probable unchosen one's (a gap of logits, as log p = logit - logsumexp): logits that move by
// less than half of it keep the same experts. Infinity when k = E.
double routing_margin(const Routing& routing);
// How many (token, slot) pairs chose each expert: (E,) counts.
std::vector<int64_t> expert_counts(const Routing& routing);

// The Switch Transformer / Mixtral load-balancing loss over every layer's routing, as Hugging
// Face's load_balancing_loss_func: with all layers' tokens pooled (M rows in all),
//   f_e = (number of (row, slot) pairs that chose e) / M,   P_e = (sum over rows of p_e) / M,
//   aux = E sum_e f_e P_e        (k when perfectly balanced: f_e = k/E, P_e = 1/E).
// f is a count (no gradient); the gradient reaches the router through P.
Var load_balancing_loss(const std::vector<Routing>& routings);

class MoeFeedForward : public FeedForwardLayer {
 public:
  // Throws "[model] ..." unless n_experts >= 1 and 1 <= experts_top_k <= n_experts.
  explicit MoeFeedForward(const ModelConfig& config);
  // x (B,T,C) -> (B,T,C)
  Var forward(const Var& x, uint64_t dropout_seed) override;
  // The routing of the last forward (probs undefined before the first).
  const Routing& last_routing() const { return routing_; }

 private:
  // The chosen experts' outputs, weighted and summed per token: tokens (N,C), weights (N,k).
  Var combine(const Var& tokens, const Var& weights) const;

  int64_t top_k_;
  double dropout_;
  std::shared_ptr<Linear> router_;
  std::vector<std::shared_ptr<FeedForward>> experts_;
  Routing routing_;
};

}  // namespace normlab
