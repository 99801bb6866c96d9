#include "nn/moe.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "autograd/autocast.h"
#include "autograd/ops.h"

namespace normlab {

namespace {

// "experts": children named "0", "1", ...
class ExpertList : public Module {
 public:
  std::shared_ptr<FeedForward> append(std::shared_ptr<FeedForward> expert) {
    return register_module(std::to_string(count_++), std::move(expert));
  }

 private:
  int64_t count_ = 0;
};

// The dense SwiGLU FFN each expert is (no dropout inside; the layer applies it once).
ModelConfig expert_config(const ModelConfig& config) {
  ModelConfig c = config;
  c.ffn_type = FfnType::SwiGlu;
  c.dropout = 0.0;
  return c;
}

}  // namespace

Routing route_top_k(const Var& logits, int64_t k) {
  NL_CHECK(logits.dim() == 2, "moe", "router logits must be (N, E), got {}", shape_str(logits.shape()));
  const int64_t n = logits.size(0), e = logits.size(1);
  NL_CHECK(k >= 1 && k <= e, "moe", "top_k must be in [1, n_experts = {}], got {}", e, k);
  Routing r;
  r.probs = softmax(in_float32(logits));  // (N, E), float32 under autocast (as Hugging Face's Mixtral)
  const std::vector<double> p = r.probs.value().to_vector();
  std::vector<int32_t> chosen(static_cast<size_t>(n * k));
  std::vector<int32_t> order(static_cast<size_t>(e));
  for (int64_t row = 0; row < n; ++row) {
    const double* pr = p.data() + row * e;
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [pr](int32_t a, int32_t b) { return pr[a] > pr[b]; });
    std::copy(order.begin(), order.begin() + k, chosen.begin() + row * k);
  }
  r.experts = Tensor::from_ints(chosen, {n, k});
  return r;
}

double routing_margin(const Routing& r) {
  const int64_t n = r.probs.size(0), e = r.probs.size(1), k = r.experts.size(1);
  const std::vector<double> p = r.probs.value().to_vector();
  const std::vector<int32_t> chosen = r.experts.to_ints();
  double margin = std::numeric_limits<double>::infinity();
  for (int64_t row = 0; row < n; ++row) {
    std::vector<bool> is_chosen(static_cast<size_t>(e), false);
    for (int64_t j = 0; j < k; ++j) is_chosen[static_cast<size_t>(chosen[row * k + j])] = true;
    double low_chosen = std::numeric_limits<double>::infinity(), high_other = 0.0;
    for (int64_t i = 0; i < e; ++i) {
      const double pi = p[static_cast<size_t>(row * e + i)];
      if (is_chosen[static_cast<size_t>(i)]) low_chosen = std::min(low_chosen, pi);
      else high_other = std::max(high_other, pi);
    }
    if (k < e) margin = std::min(margin, std::log(low_chosen) - std::log(high_other));
  }
  return margin;
}

std::vector<int64_t> expert_counts(const Routing& r) {
  std::vector<int64_t> counts(static_cast<size_t>(r.probs.size(1)), 0);
  for (int32_t e : r.experts.to_ints()) ++counts[static_cast<size_t>(e)];
  return counts;
}

Var load_balancing_loss(const std::vector<Routing>& routings) {
  NL_CHECK(!routings.empty(), "load_balancing_loss", "needs at least one layer's routing");
  const int64_t experts = routings.front().probs.size(-1);
  std::vector<double> chosen_count(static_cast<size_t>(experts), 0.0);
  double rows = 0.0;
  Var prob_sum;  // (E,) sum of p over every layer's rows
  for (const Routing& r : routings) {
    NL_CHECK(r.probs.defined() && r.probs.dim() == 2 && r.probs.size(1) == experts, "load_balancing_loss",
             "every layer needs probs (N, E = {}), got {}", experts,
             r.probs.defined() ? shape_str(r.probs.shape()) : "undefined");
    const std::vector<int64_t> counts = expert_counts(r);
    for (size_t e = 0; e < counts.size(); ++e) chosen_count[e] += static_cast<double>(counts[e]);
    rows += static_cast<double>(r.probs.size(0));
    const Var layer_sum = sum(r.probs, 0);
    prob_sum = prob_sum.defined() ? add(prob_sum, layer_sum) : layer_sum;
  }
  std::vector<double> f(chosen_count.size());
  for (size_t e = 0; e < f.size(); ++e) f[e] = chosen_count[e] / rows;
  const Tensor& like = routings.front().probs.value();
  const Tensor f_t = Tensor::from_vector(f, {experts}, like.dtype()).to(like.device());
  // E sum_e f_e (prob_sum_e / M)
  return scale(sum_all(mul(prob_sum, constant(f_t))), static_cast<double>(experts) / rows);
}

MoeFeedForward::MoeFeedForward(const ModelConfig& config)
    : top_k_(config.experts_top_k), dropout_(config.dropout) {
  NL_CHECK(config.n_experts >= 1, "model", "n_experts must be >= 1, got {}", config.n_experts);
  NL_CHECK(config.experts_top_k >= 1 && config.experts_top_k <= config.n_experts, "model",
           "experts_top_k must be in [1, n_experts = {}], got {}", config.n_experts, config.experts_top_k);
  router_ = register_module("router", std::make_shared<Linear>(config.d_model, config.n_experts, false,
                                                               parameter_dtype(config)));
  auto list = register_module("experts", std::make_shared<ExpertList>());
  const ModelConfig expert = expert_config(config);
  for (int64_t e = 0; e < config.n_experts; ++e)
    experts_.push_back(list->append(std::make_shared<FeedForward>(expert)));
}

Var MoeFeedForward::forward(const Var& x, uint64_t dropout_seed) {
  NL_CHECK(x.dim() >= 1, "moe", "expected (..., C), got {}", shape_str(x.shape()));
  const Var tokens = reshape(x, {-1, x.size(-1)});              // (N,C)
  routing_ = route_top_k(router_->forward(tokens), top_k_);      // probs (N,E), experts (N,k)
  const Var chosen = gather_last(routing_.probs, routing_.experts);  // (N,k) p_j, j in S
  const Var weights = autocast(div(chosen, sum(chosen, -1, true)));  // (N,k) w_j, summing to 1
  const Var y = reshape(combine(tokens, weights), x.shape());    // (B,T,C)
  return dropout(y, dropout_, dropout_seed, is_training());
}

// For each expert e: the (token, slot) pairs that chose it, the tokens gathered to (n_e, C), the
// expert applied, each row times its weight w, and the rows added back at their tokens (N, C).
Var MoeFeedForward::combine(const Var& tokens, const Var& weights) const {
  const int64_t n = tokens.size(0), k = top_k_;
  const std::vector<int32_t> chosen = routing_.experts.to_ints();  // (N k,)
  const Var flat_weights = reshape(weights, {n * k, 1});           // (N k, 1)
  Var out;
  for (size_t e = 0; e < experts_.size(); ++e) {
    std::vector<int32_t> rows, slots;
    for (int64_t i = 0; i < n * k; ++i)
      if (chosen[static_cast<size_t>(i)] == static_cast<int32_t>(e)) {
        rows.push_back(static_cast<int32_t>(i / k));
        slots.push_back(static_cast<int32_t>(i));
      }
    if (rows.empty()) continue;  // no token chose e
    const int64_t m = static_cast<int64_t>(rows.size());
    const Tensor rows_t = Tensor::from_ints(rows, {m}), slots_t = Tensor::from_ints(slots, {m});
    const Var expert_out = experts_[e]->forward(embedding(tokens, rows_t), 0);  // (n_e, C)
    const Var weighted = mul(expert_out, embedding(flat_weights, slots_t));    // (n_e, C) * (n_e, 1)
    const Var back = scatter_add_rows(weighted, rows_t, n);                    // (N, C)
    out = out.defined() ? add(out, back) : back;
  }
  return out;  // every token chose k >= 1 experts, so some expert ran
}

}  // namespace normlab
