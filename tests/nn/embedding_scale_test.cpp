// model.embedding_scale = EmbeddingScale::SqrtD (fairseq's Transformer, Gemma): the forward multiplies the token
// embeddings by sqrt(d_model), and with init "xavier" the embedding starts N(0, 1 / d_model).
#include <gtest/gtest.h>

#include <cmath>

#include "autograd/tape.h"
#include "core/ops.h"
#include "nn/init.h"
#include "nn/transformer.h"
#include "nn_test_util.h"

namespace normlab {
namespace {

using testing::random_ids;
using testing::small_config;

Var parameter(const Module& m, const std::string& name) {
  for (auto& [n, p] : m.named_parameters())
    if (n == name) return p;
  ADD_FAILURE() << "no parameter " << name;
  return {};
}

double sample_std(const Tensor& t) {
  const std::vector<double> v = t.to_vector();
  double sum = 0, sq = 0;
  for (const double x : v) sum += x;
  const double mean = sum / static_cast<double>(v.size());
  for (const double x : v) sq += (x - mean) * (x - mean);
  return std::sqrt(sq / static_cast<double>(v.size() - 1));
}

// The scaled model equals an unscaled one whose embedding holds sqrt(d) times the weights; the
// head is untied so that only the input side differs.
TEST(EmbeddingScale, SqrtDMultipliesTheTokenEmbeddings) {
  for (const char* placement : {"post", "pre"}) {
    ModelConfig scaled = small_config(placement, "layernorm", "relu", /*tied=*/false);
    scaled.embedding_scale = EmbeddingScale::SqrtD;
    ModelConfig plain = scaled;
    plain.embedding_scale = EmbeddingScale::None;
    TransformerLM a(scaled), b(plain);
    {
      NoGradGuard no_grad;
      for (auto& [name, p] : b.named_parameters()) p.value().copy_(parameter(a, name).value());
      Tensor emb = parameter(b, "tok_emb.weight").value();
      emb.copy_(ops::scale(emb, std::sqrt(static_cast<double>(scaled.d_model))));
    }
    const Tensor ids = random_ids(3, 5, scaled.vocab_size, 11);
    const std::vector<double> la = a.forward(ids).value().to_vector(), lb = b.forward(ids).value().to_vector();
    ASSERT_EQ(la.size(), lb.size());
    double worst = 0;
    for (size_t i = 0; i < la.size(); ++i) worst = std::max(worst, std::abs(la[i] - lb[i]));
    EXPECT_LT(worst, 1e-4) << placement;
    // ... and differs from the same weights unscaled (the multiplier is not a no-op).
    TransformerLM c(plain);
    {
      NoGradGuard no_grad;
      for (auto& [name, p] : c.named_parameters()) p.value().copy_(parameter(a, name).value());
    }
    const std::vector<double> lc = c.forward(ids).value().to_vector();
    double moved = 0;
    for (size_t i = 0; i < la.size(); ++i) moved = std::max(moved, std::abs(la[i] - lc[i]));
    EXPECT_GT(moved, 1e-2) << placement;
  }
}

TEST(EmbeddingScale, XavierInitPairsSqrtDWithStdOneOverSqrtD) {
  ModelConfig c = small_config("pre", "layernorm", "relu");
  c.vocab_size = 200;
  c.d_model = 64;
  c.n_heads = 4;
  c.embedding_scale = EmbeddingScale::SqrtD;
  TransformerLM scaled(c);
  // 12800 draws: the sample std is within 3% of 1/8 with overwhelming probability.
  EXPECT_NEAR(sample_std(parameter(scaled, "tok_emb.weight").value()), 1.0 / 8.0, 0.03 / 8.0);
  c.embedding_scale = EmbeddingScale::None;
  TransformerLM plain(c);
  EXPECT_NEAR(sample_std(parameter(plain, "tok_emb.weight").value()), std::sqrt(2.0 / 264.0),
              0.03 * std::sqrt(2.0 / 264.0));
  c.init = InitScheme::Gpt2;
  c.embedding_scale = EmbeddingScale::SqrtD;
  TransformerLM gemma_like(c);
  EXPECT_NEAR(sample_std(parameter(gemma_like, "tok_emb.weight").value()), 0.02, 0.03 * 0.02);
}

}  // namespace
}  // namespace normlab
