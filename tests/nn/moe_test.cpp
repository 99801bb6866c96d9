// The MoE FFN (nn/moe.h) against a plain-loops float64 reference written from Hugging Face's
// MixtralSparseMoeBlock (softmax over all experts, top k, renormalise, SwiGLU experts), its
// routing (a non-chosen expert cannot change a token's output, a chosen one does), and what a
// config with ffn_type "moe" builds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "autograd/ops.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/random.h"
#include "nn/model_cases.h"
#include "nn/moe.h"
#include "nn/transformer.h"

namespace normlab {
namespace {

ModelConfig layer_config(int64_t experts, int64_t k, bool bias) {
  ModelConfig c;
  c.d_model = 6;
  c.d_ff = 5;
  c.ffn_type = FfnType::Moe;
  c.n_experts = experts;
  c.experts_top_k = k;
  c.bias = bias;
  c.dtype = ParamDType::Float64;
  return c;
}

// A layer with N(0, 0.5^2) parameters (biases too, so that no term hides behind a zero).
std::shared_ptr<MoeFeedForward> random_layer(const ModelConfig& c, uint64_t seed) {
  auto layer = std::make_shared<MoeFeedForward>(c);
  Generator gen(seed);
  for (Var& p : layer->parameters()) p.value().copy_(Tensor::randn(p.shape(), gen, 0.0, 0.5, DType::F64));
  return layer;
}

std::map<std::string, std::vector<double>> values(const Module& m) {
  std::map<std::string, std::vector<double>> out;
  for (const auto& [name, p] : m.named_parameters()) out[name] = p.value().to_vector();
  return out;
}

// y = W v (+ b) with W (out, in) row-major.
std::vector<double> affine(const std::vector<double>& w, const std::vector<double>* b, const std::vector<double>& v) {
  const size_t in = v.size(), out = w.size() / in;
  std::vector<double> y(out, 0.0);
  for (size_t o = 0; o < out; ++o) {
    for (size_t i = 0; i < in; ++i) y[o] += w[o * in + i] * v[i];
    if (b) y[o] += (*b)[o];
  }
  return y;
}

// The reference, one token at a time, in plain loops.
std::vector<double> reference_moe(const std::map<std::string, std::vector<double>>& p, const ModelConfig& c,
                                  const std::vector<double>& x) {
  const size_t C = static_cast<size_t>(c.d_model), E = static_cast<size_t>(c.n_experts);
  const size_t k = static_cast<size_t>(c.experts_top_k), N = x.size() / C;
  std::vector<double> y(x.size(), 0.0);
  auto bias = [&](const std::string& name) { return c.bias ? &p.at(name) : nullptr; };
  for (size_t t = 0; t < N; ++t) {
    const std::vector<double> xt(x.begin() + t * C, x.begin() + (t + 1) * C);
    const std::vector<double> logits = affine(p.at("router.weight"), nullptr, xt);
    const double top = *std::max_element(logits.begin(), logits.end());
    std::vector<double> prob(E);
    double z = 0.0;
    for (size_t e = 0; e < E; ++e) z += prob[e] = std::exp(logits[e] - top);
    for (double& q : prob) q /= z;  // softmax over all E
    std::vector<size_t> order(E);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return prob[a] > prob[b]; });
    double chosen_sum = 0.0;
    for (size_t j = 0; j < k; ++j) chosen_sum += prob[order[j]];
    for (size_t j = 0; j < k; ++j) {
      const size_t e = order[j];
      const std::string pre = "experts." + std::to_string(e) + ".";
      const auto h1 = affine(p.at(pre + "w1.weight"), bias(pre + "w1.bias"), xt);
      const auto h3 = affine(p.at(pre + "w3.weight"), bias(pre + "w3.bias"), xt);
      std::vector<double> h(h1.size());
      for (size_t f = 0; f < h.size(); ++f) h[f] = h1[f] / (1.0 + std::exp(-h1[f])) * h3[f];
      const auto out = affine(p.at(pre + "w2.weight"), bias(pre + "w2.bias"), h);
      for (size_t i = 0; i < C; ++i) y[t * C + i] += prob[e] / chosen_sum * out[i];
    }
  }
  return y;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0.0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

TEST(Moe, MatchesThePlainLoopsReference) {
  for (const ModelConfig& c : {layer_config(4, 2, false), layer_config(5, 3, true), layer_config(3, 1, true),
                               layer_config(3, 3, false)}) {
    SCOPED_TRACE(fmt::format("E {} k {} bias {}", c.n_experts, c.experts_top_k, c.bias));
    auto layer = random_layer(c, 11);
    Generator gen(3);
    const Tensor x = Tensor::randn({2, 7, 6}, gen, 0.0, 1.0, DType::F64);
    const Var y = layer->forward(constant(x), 0);
    ASSERT_EQ(y.shape(), x.shape());
    const std::vector<double> expected = reference_moe(values(*layer), c, x.to_vector());
    EXPECT_LT(max_abs_diff(y.value().to_vector(), expected), 1e-13);
  }
}

// Each token's row of the output, with one expert's matrices zeroed or scaled.
std::vector<double> output_with_expert(const ModelConfig& c, uint64_t seed, const Tensor& x, int expert,
                                       double factor) {
  auto layer = random_layer(c, seed);
  for (auto& [name, p] : layer->named_parameters())
    if (name.rfind("experts." + std::to_string(expert) + ".", 0) == 0) p.value().copy_(ops::scale(p.value(), factor));
  return layer->forward(constant(x), 0).value().to_vector();
}

TEST(Moe, OnlyTheChosenExpertsReachAToken) {
  const ModelConfig c = layer_config(5, 2, true);
  Generator gen(5);
  const Tensor x = Tensor::randn({1, 9, 6}, gen, 0.0, 1.0, DType::F64);
  auto layer = random_layer(c, 21);
  layer->forward(constant(x), 0);
  const std::vector<int32_t> chosen = layer->last_routing().experts.to_ints();  // (9, 2)
  const std::vector<double> base = output_with_expert(c, 21, x, 0, 1.0);
  int checked_unchosen = 0;
  for (int e = 0; e < 5; ++e) {
    const std::vector<double> zeroed = output_with_expert(c, 21, x, e, 0.0);
    for (int t = 0; t < 9; ++t) {
      const bool is_chosen = chosen[2 * t] == e || chosen[2 * t + 1] == e;
      const std::vector<double> a(base.begin() + 6 * t, base.begin() + 6 * (t + 1));
      const std::vector<double> b(zeroed.begin() + 6 * t, zeroed.begin() + 6 * (t + 1));
      if (is_chosen) {
        EXPECT_GT(max_abs_diff(a, b), 1e-6) << "token " << t << " expert " << e;
      } else {
        EXPECT_EQ(a, b) << "token " << t << " changed when its unchosen expert " << e << " was zeroed";
        ++checked_unchosen;
      }
    }
  }
  EXPECT_EQ(checked_unchosen, 9 * 3);
}

TEST(Moe, RoutingIsTheTopKOfTheSoftmaxAndItsWeightsSumToOne) {
  // Logits with a known order per row: row 0 prefers 2 > 0 > 3 > 1, row 1 3 > 1 > 2 > 0.
  const Tensor logits = Tensor::from_vector({1.0, -2.0, 3.0, 0.5, -1.0, 2.0, 0.0, 4.0}, {2, 4}, DType::F64);
  const Routing r = route_top_k(constant(logits), 2);
  EXPECT_EQ(r.experts.to_ints(), (std::vector<int32_t>{2, 0, 3, 1}));
  const std::vector<double> p = r.probs.value().to_vector();
  EXPECT_NEAR(std::accumulate(p.begin(), p.begin() + 4, 0.0), 1.0, 1e-15);  // over all four
  EXPECT_NEAR(p[2] / p[0], std::exp(2.0), 1e-12);
  EXPECT_NEAR(routing_margin(r), std::min(1.0 - 0.5, 2.0 - 0.0), 1e-12);
  EXPECT_EQ(expert_counts(r), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_THROW(route_top_k(constant(logits), 5), Error);
}

// The gates w depend only on the chosen logits, so an expert that no token chose gets a router
// gradient of zero from them (up to rounding); the load-balancing loss reaches it through P.
TEST(Moe, AnUnchosenExpertsRouterRowGetsNoGradientFromTheGates) {
  const ModelConfig c = layer_config(6, 2, false);
  auto layer = random_layer(c, 8);
  Generator gen(2);
  const Tensor x = Tensor::randn({1, 2, 6}, gen, 0.0, 1.0, DType::F64);  // 2 tokens: at least 2 experts unchosen
  layer->forward(constant(x), 0);
  const std::vector<int64_t> counts = expert_counts(layer->last_routing());
  const int unchosen = static_cast<int>(std::find(counts.begin(), counts.end(), 0) - counts.begin());
  ASSERT_LT(unchosen, 6);
  auto router_grad = [&](bool with_aux) {
    layer->zero_grad();
    Var loss = sum_all(square(layer->forward(constant(x), 0)));
    if (with_aux) loss = add(loss, load_balancing_loss({layer->last_routing()}));
    backward(loss);
    return layer->named_parameters().front().second.grad().to_vector();  // router.weight (6, 6)
  };
  const std::vector<double> plain = router_grad(false), aux = router_grad(true);
  double chosen_max = 0.0, unchosen_max = 0.0, unchosen_aux = 0.0;
  for (int e = 0; e < 6; ++e)
    for (int i = 0; i < 6; ++i) {
      const double g = std::abs(plain[e * 6 + i]);
      if (e == unchosen) {
        unchosen_max = std::max(unchosen_max, g);
        unchosen_aux = std::max(unchosen_aux, std::abs(aux[e * 6 + i]));
      } else {
        chosen_max = std::max(chosen_max, g);
      }
    }
  EXPECT_GT(chosen_max, 1e-3);
  EXPECT_LT(unchosen_max, 1e-14 * chosen_max);
  EXPECT_GT(unchosen_aux, 1e-6);
}

TEST(Moe, ParametersAreNamedPerExpert) {
  ModelConfig c = tiny_moe_model_config();
  TransformerLM model(c);
  std::vector<std::string> names;
  for (const auto& [name, p] : model.named_parameters()) names.push_back(name);
  for (const char* expected : {"blocks.0.ffn.router.weight", "blocks.1.ffn.experts.2.w1.weight",
                               "blocks.1.ffn.experts.2.w3.bias", "blocks.0.ffn.experts.0.w2.weight"})
    EXPECT_EQ(std::count(names.begin(), names.end(), expected), 1) << expected;
  EXPECT_EQ(std::count(names.begin(), names.end(), "blocks.0.ffn.router.bias"), 0);
  EXPECT_EQ(std::count(names.begin(), names.end(), "blocks.0.ffn.w1.weight"), 0);
}

TEST(Moe, TrainingLossAddsTheScaledAuxLossOnlyWhenItsCoefficientIsPositive) {
  ModelConfig c = tiny_moe_model_config();
  const TinyBatch batch = tiny_batch(c);
  TransformerLM model(c);
  const double with_aux = model.training_loss(batch.ids, batch.targets).item();
  const double aux = model.router_aux_loss().item();
  const double ce = model.loss(batch.ids, batch.targets).item();
  EXPECT_GT(aux, 0.0);
  EXPECT_NEAR(with_aux, ce + 0.1 * aux, 1e-14);
  c.router_aux_loss_coef = 0.0;
  TransformerLM plain(c);
  EXPECT_EQ(plain.training_loss(batch.ids, batch.targets).item(), plain.loss(batch.ids, batch.targets).item());
}

TEST(Moe, BadExpertCountsAreModelErrors) {
  ModelConfig c = tiny_moe_model_config();
  c.experts_top_k = 4;  // > n_experts 3
  EXPECT_THROW(TransformerLM{c}, Error);
  c.experts_top_k = 0;
  EXPECT_THROW(TransformerLM{c}, Error);
  c.experts_top_k = 1;
  c.n_experts = 0;
  EXPECT_THROW(TransformerLM{c}, Error);
  ModelConfig dense = tiny_model_config(NormPlacement::Pre);
  TransformerLM d(dense);
  EXPECT_THROW(d.router_aux_loss(), Error);
}

}  // namespace
}  // namespace normlab
