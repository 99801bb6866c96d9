// Weight-decay exclusion by parameter role, and checkpoint state round trips.
#include <gtest/gtest.h>

#include "optim/optimizer.h"

namespace normlab {
namespace {

// A parameter whose registering module declared `role`.
Var with_role(const ParamRole& role, Tensor value = Tensor::full({2}, 2.0, DType::F64)) {
  Var p = parameter(std::move(value));
  p.set_role(role);
  return p;
}

TEST(WeightDecay, ExcludesNormsBiasesAndEmbeddingsByDefault) {
  OptimConfig c;
  const Var ffn = with_role({.kind = ParamKind::Matrix, .group = ParamGroup::Ffn, .layer = 0});
  const Var head = with_role({.kind = ParamKind::Matrix, .group = ParamGroup::Head});
  const Var gain = with_role({.kind = ParamKind::NormParam, .group = ParamGroup::Norms, .norm_initial = 1.0});
  const Var qk_gain = with_role({.kind = ParamKind::NormParam, .group = ParamGroup::Attention});
  const Var bias = with_role({.kind = ParamKind::Bias, .group = ParamGroup::Attention, .layer = 2});
  const Var tokens = with_role({.kind = ParamKind::TokenEmbedding, .group = ParamGroup::Embeddings});
  const Var positions = with_role({.kind = ParamKind::PositionEmbedding, .group = ParamGroup::Embeddings});
  EXPECT_TRUE(weight_decay_applies(ffn, c));
  EXPECT_TRUE(weight_decay_applies(head, c));
  EXPECT_FALSE(weight_decay_applies(gain, c));
  EXPECT_FALSE(weight_decay_applies(qk_gain, c));
  EXPECT_FALSE(weight_decay_applies(bias, c));
  EXPECT_FALSE(weight_decay_applies(tokens, c));
  EXPECT_FALSE(weight_decay_applies(positions, c));
  c.decay_norms_and_biases = true;
  EXPECT_TRUE(weight_decay_applies(gain, c));
  EXPECT_TRUE(weight_decay_applies(bias, c));
  EXPECT_FALSE(weight_decay_applies(tokens, c));
  c.decay_embeddings = true;
  EXPECT_TRUE(weight_decay_applies(tokens, c));
  EXPECT_TRUE(weight_decay_applies(positions, c));
}

TEST(WeightDecay, AdamWDecaysOnlyIncludedParameters) {
  // Zero gradients: AdamW's only movement is the decoupled decay p -= lr wd p.
  OptimConfig c;
  c.name = OptimizerKind::AdamW;
  c.weight_decay = 0.5;
  const std::vector<std::string> names = {"ffn.w1.weight", "norm1.weight", "ffn.w1.bias", "tok_emb.weight"};
  const std::vector<ParamKind> kinds = {ParamKind::Matrix, ParamKind::NormParam, ParamKind::Bias,
                                        ParamKind::TokenEmbedding};
  std::vector<std::pair<std::string, Var>> params;
  for (size_t i = 0; i < names.size(); ++i) {
    Var p = with_role({.kind = kinds[i]});
    p.grad() = Tensor::zeros({2}, DType::F64);
    params.emplace_back(names[i], p);
  }
  auto opt = make_optimizer(c, params);
  opt->step(0.1);
  EXPECT_DOUBLE_EQ(params[0].second.value().to_vector()[0], 2.0 - 0.1 * 0.5 * 2.0);
  for (size_t i = 1; i < params.size(); ++i)
    EXPECT_EQ(params[i].second.value().to_vector()[0], 2.0) << names[i];
}

std::vector<double> grad_at(int t) { return {0.1 * t - 0.2, 0.3 - 0.05 * t, 0.01 * t * t}; }

// Trains 5 steps straight through, and 2 steps + checkpoint + a fresh optimizer + 3 steps; the two
// must end bit-identical.
void check_round_trip(const std::string& name) {
  OptimConfig c;
  c.name = enum_value<OptimizerKind>(name, "check_round_trip");
  c.momentum = 0.9;
  c.weight_decay = 0.01;
  auto make = [](std::vector<double> v) {
    return parameter(Tensor::from_vector(v, {3}, DType::F64), "blocks.0.w");
  };
  Var straight = make({1.0, -2.0, 0.5});
  auto opt = make_optimizer(c, {{"blocks.0.w", straight}});
  std::vector<std::pair<std::string, Tensor>> saved;
  std::vector<double> saved_value;
  for (int t = 0; t < 5; ++t) {
    if (t == 2) {
      for (auto& [k, v] : opt->state()) saved.emplace_back(k, v.clone());
      saved_value = straight.value().to_vector();
    }
    straight.grad() = Tensor::from_vector(grad_at(t), {3}, DType::F64);
    opt->step(0.05);
  }
  ASSERT_FALSE(saved.empty()) << name;
  Var resumed = make(saved_value);
  auto opt2 = make_optimizer(c, {{"blocks.0.w", resumed}});
  opt2->load_state(saved, 2);
  EXPECT_EQ(opt2->step_count(), 2);
  for (int t = 2; t < 5; ++t) {
    resumed.grad() = Tensor::from_vector(grad_at(t), {3}, DType::F64);
    opt2->step(0.05);
  }
  EXPECT_EQ(resumed.value().to_vector(), straight.value().to_vector()) << name;
  // Without the state the continuation differs (the test can fail).
  Var cold = make(saved_value);
  auto opt3 = make_optimizer(c, {{"blocks.0.w", cold}});
  for (int t = 2; t < 5; ++t) {
    cold.grad() = Tensor::from_vector(grad_at(t), {3}, DType::F64);
    opt3->step(0.05);
  }
  EXPECT_NE(cold.value().to_vector(), straight.value().to_vector()) << name;
}

TEST(OptimizerState, RoundTripContinuesIdentically) {
  for (const char* name : {"sgd", "adam", "adamw", "radam"}) check_round_trip(name);
}

TEST(OptimizerState, KeysNameSlotAndParameter) {
  OptimConfig c;
  c.name = OptimizerKind::Adam;
  Var p = parameter(Tensor::zeros({2}, DType::F64), "head.weight");
  auto opt = make_optimizer(c, {{"head.weight", p}});
  EXPECT_TRUE(opt->state().empty());  // nothing allocated before the first step
  p.grad() = Tensor::ones({2}, DType::F64);
  opt->step(0.1);
  std::vector<std::string> keys;
  for (auto& [k, v] : opt->state()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"m.head.weight", "v.head.weight", "step.head.weight"}));

  c.name = OptimizerKind::Sgd;
  c.momentum = 0.5;
  auto sgd = make_optimizer(c, {{"head.weight", p}});
  sgd->step(0.1);
  ASSERT_EQ(sgd->state().size(), 1u);
  EXPECT_EQ(sgd->state()[0].first, "momentum.head.weight");
}

TEST(OptimizerState, LoadRejectsUnknownKeysAndShapes) {
  OptimConfig c;
  c.name = OptimizerKind::Adam;
  Var p = parameter(Tensor::zeros({2}, DType::F64), "w");
  auto opt = make_optimizer(c, {{"w", p}});
  EXPECT_THROW(opt->load_state({{"m.other", Tensor::zeros({2}, DType::F64)}}, 1), Error);
  EXPECT_THROW(opt->load_state({{"m.w", Tensor::zeros({3}, DType::F64)}}, 1), Error);
  EXPECT_THROW(opt->load_state({{"momentum.w", Tensor::zeros({2}, DType::F64)}}, 1), Error);
  EXPECT_NO_THROW(opt->load_state({{"m.w", Tensor::zeros({2}, DType::F64)}}, 1));
}

}  // namespace
}  // namespace normlab
