// The fixed sinusoidal position table and its place in the model's input (fairseq's order: the
// token embedding times sqrt(d), then the table added).
#include <gtest/gtest.h>

#include <cmath>

#include "nn/transformer.h"
#include "nn_test_util.h"

namespace normlab {
namespace {
using testing::random_ids;
using testing::small_config;

TEST(SinusoidalPositions, EntriesFollowTheOriginalTransformerFormula) {
  const int64_t T = 12, C = 16;
  const std::vector<double> table = sinusoidal_positions(T, C, DType::F64).to_vector();
  ASSERT_EQ(table.size(), static_cast<size_t>(T * C));
  for (int64_t j = 0; j < C; ++j) EXPECT_DOUBLE_EQ(table[static_cast<size_t>(j)], j % 2 == 0 ? 0.0 : 1.0) << j;
  EXPECT_DOUBLE_EQ(table[static_cast<size_t>(5 * C + 0)], std::sin(5.0));  // frequency 1
  EXPECT_DOUBLE_EQ(table[static_cast<size_t>(5 * C + 1)], std::cos(5.0));
  const double w2 = 1.0 / std::pow(10000.0, 2.0 / 16.0);  // dimensions 2 and 3 share it
  EXPECT_NEAR(table[static_cast<size_t>(7 * C + 2)], std::sin(7.0 * w2), 1e-15);
  EXPECT_NEAR(table[static_cast<size_t>(7 * C + 3)], std::cos(7.0 * w2), 1e-15);
  const double w14 = std::pow(10000.0, -14.0 / 16.0);
  EXPECT_NEAR(table[static_cast<size_t>(11 * C + 15)], std::cos(11.0 * w14), 1e-15);
  for (int64_t p = 0; p < T; ++p) {  // sin^2 + cos^2 = 1 per pair: mean square 1/2 per row
    double sq = 0;
    for (int64_t j = 0; j < C; ++j) sq += table[static_cast<size_t>(p * C + j)] * table[static_cast<size_t>(p * C + j)];
    EXPECT_NEAR(sq / C, 0.5, 1e-12) << p;
  }
  EXPECT_THROW(sinusoidal_positions(0, C, DType::F64), Error);
}

// The input of block 0 is tok_emb[id] * sqrt(d) + PE[t]: its RMS, recomputed from the embedding
// weights and the formula, matches the one the model records. No parameter is added for it.
TEST(SinusoidalPositions, ModelAddsTheTableAfterTheTokenScaling) {
  ModelConfig c = small_config("pre");
  c.dtype = ParamDType::Float64;
  c.position_embedding = PositionEmbedding::Sinusoidal;
  c.embedding_scale = EmbeddingScale::SqrtD;
  TransformerLM model(c);
  for (const auto& [name, param] : model.named_parameters()) EXPECT_EQ(name.find("pos_emb"), std::string::npos);
  const int64_t B = 2, T = c.context_length, C = c.d_model;
  const Tensor ids = random_ids(B, T, c.vocab_size, 4);
  model.set_record_residual_rms(true);
  model.forward(ids);
  std::vector<double> emb;
  for (const auto& [name, param] : model.named_parameters())
    if (name == "tok_emb.weight") emb = param.value().to_vector();
  ASSERT_FALSE(emb.empty());
  const std::vector<double> id = ids.to_vector();
  double sq = 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t j = 0; j < C; ++j) {
        const double freq = std::pow(10000.0, -static_cast<double>(j - j % 2) / static_cast<double>(C));
        const double pe = j % 2 == 0 ? std::sin(static_cast<double>(t) * freq) : std::cos(static_cast<double>(t) * freq);
        const double v = emb[static_cast<size_t>(id[static_cast<size_t>(b * T + t)]) * C + j] * std::sqrt(double(C)) + pe;
        sq += v * v;
      }
  EXPECT_NEAR(model.residual_rms().front(), std::sqrt(sq / static_cast<double>(B * T * C)), 1e-12);
}

}  // namespace
}  // namespace normlab
