// Initialisation: Xavier / GPT-2 variances, DeepNorm's beta, norm gains, determinism.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "nn/init.h"
#include "nn/transformer.h"
#include "nn_test_util.h"

namespace normlab {
namespace {

struct Moments {
  double mean = 0, var = 0;
};

Moments moments(const Tensor& t) {
  const std::vector<double> v = t.to_vector();
  Moments m;
  for (double x : v) m.mean += x / static_cast<double>(v.size());
  for (double x : v) m.var += (x - m.mean) * (x - m.mean) / static_cast<double>(v.size() - 1);
  return m;
}

std::map<std::string, Tensor> values(const TransformerLM& model) {
  std::map<std::string, Tensor> out;
  for (auto& [name, p] : model.named_parameters()) out[name] = p.value();
  return out;
}

ModelConfig wide_config(const std::string& placement, const std::string& init) {
  ModelConfig c = testing::small_config(placement, "layernorm", "relu");
  c.vocab_size = 300;
  c.d_model = 256;
  c.n_heads = 4;
  c.d_ff = 1024;
  c.n_layers = 2;
  c.context_length = 8;
  c.init = enum_value<InitScheme>(init, "wide_config");
  return c;
}

void expect_variance(const Tensor& w, double expected, const std::string& name) {
  const Moments m = moments(w);
  EXPECT_NEAR(m.var, expected, 0.05 * expected) << name;
  EXPECT_NEAR(m.mean, 0.0, 3.0 * std::sqrt(expected / static_cast<double>(w.numel()))) << name;
}

TEST(Init, XavierVarianceIsTwoOverFanInPlusFanOut) {
  const auto v = values(TransformerLM(wide_config("pre", "xavier")));
  expect_variance(v.at("blocks.0.ffn.w1.weight"), 2.0 / (256 + 1024), "w1 (1024, 256)");
  expect_variance(v.at("blocks.1.ffn.w2.weight"), 2.0 / (1024 + 256), "w2 (256, 1024)");
  expect_variance(v.at("blocks.1.attn.q.weight"), 2.0 / (256 + 256), "q (256, 256)");
  expect_variance(v.at("tok_emb.weight"), 2.0 / (300 + 256), "tok_emb (300, 256)");
  EXPECT_EQ(moments(v.at("blocks.0.ffn.w1.bias")).var, 0.0);
  EXPECT_EQ(v.at("blocks.0.ffn.w1.bias").to_vector()[3], 0.0);
  EXPECT_EQ(v.at("blocks.0.norm1.weight").to_vector(), std::vector<double>(256, 1.0));
  EXPECT_EQ(v.at("final_norm.bias").to_vector(), std::vector<double>(256, 0.0));
}

TEST(Init, Gpt2ScalesResidualOutputsBySqrtTwoL) {
  const auto v = values(TransformerLM(wide_config("pre", "gpt2")));
  const double s = 0.02 * 0.02;
  expect_variance(v.at("blocks.0.ffn.w1.weight"), s, "w1");
  expect_variance(v.at("blocks.0.attn.q.weight"), s, "q");
  expect_variance(v.at("tok_emb.weight"), s, "tok_emb");
  expect_variance(v.at("blocks.0.ffn.w2.weight"), s / 4.0, "w2 (2L = 4)");
  expect_variance(v.at("blocks.1.attn.o.weight"), s / 4.0, "o (2L = 4)");
}

TEST(Init, DeepNormScalesFfnValueAndOutputByBeta) {
  const auto v = values(TransformerLM(wide_config("deepnorm", "xavier")));
  const double beta2 = 1.0 / std::sqrt(8.0 * 2);  // beta^2 = (8L)^(-1/2)
  expect_variance(v.at("blocks.0.ffn.w1.weight"), beta2 * 2.0 / 1280, "w1");
  expect_variance(v.at("blocks.0.ffn.w2.weight"), beta2 * 2.0 / 1280, "w2");
  expect_variance(v.at("blocks.1.attn.v.weight"), beta2 * 2.0 / 512, "v");
  expect_variance(v.at("blocks.1.attn.o.weight"), beta2 * 2.0 / 512, "o");
  expect_variance(v.at("blocks.1.attn.q.weight"), 2.0 / 512, "q unscaled");
  expect_variance(v.at("blocks.1.attn.k.weight"), 2.0 / 512, "k unscaled");
}

TEST(Init, UnitOffsetGainIsStoredAsZero) {
  const auto v = values(TransformerLM(testing::small_config("pre", "rmsnorm_unit_offset")));
  EXPECT_EQ(v.at("blocks.0.norm2.weight").to_vector(), std::vector<double>(16, 0.0));
  EXPECT_EQ(v.at("final_norm.weight").to_vector(), std::vector<double>(16, 0.0));
}

TEST(Init, SameSeedSameWeightsInBothDtypes) {
  ModelConfig c = testing::small_config("post");
  const auto a = values(TransformerLM(c)), b = values(TransformerLM(c));
  c.dtype = ParamDType::Float64;
  const auto d = values(TransformerLM(c));
  for (auto& [name, t] : a) {
    EXPECT_EQ(t.to_vector(), b.at(name).to_vector()) << name;
    EXPECT_EQ(d.at(name).dtype(), DType::F64);
    const auto x = t.to_vector(), y = d.at(name).to_vector();
    for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(x[i], y[i], 1e-6) << name;
  }
}

}  // namespace
}  // namespace normlab
