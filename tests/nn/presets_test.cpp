// Presets set the documented family fields and keep everything else from the base config.
#include <gtest/gtest.h>

#include "nn/presets.h"
#include "nn/transformer.h"
#include "nn_test_util.h"

namespace normlab {
namespace {

TEST(Presets, SetTheDocumentedFields) {
  ModelConfig base = testing::small_config("none", "none", "relu");
  const ModelConfig gpt1 = apply_preset("gpt1", base);
  EXPECT_EQ(gpt1.norm_placement, NormPlacement::Post);
  EXPECT_EQ(gpt1.norm_type, NormType::LayerNorm);
  EXPECT_EQ(gpt1.norm_eps, 1e-5);
  EXPECT_EQ(gpt1.ffn_type, FfnType::Gelu);
  const ModelConfig gpt2 = apply_preset("gpt2", base);
  EXPECT_EQ(gpt2.norm_placement, NormPlacement::Pre);
  EXPECT_EQ(gpt2.norm_type, NormType::LayerNorm);
  EXPECT_EQ(gpt2.init, InitScheme::Gpt2);
  EXPECT_TRUE(gpt2.tie_embeddings);
  const ModelConfig llama = apply_preset("llama", base);
  EXPECT_EQ(llama.norm_placement, NormPlacement::Pre);
  EXPECT_EQ(llama.norm_type, NormType::RmsNorm);
  EXPECT_EQ(llama.norm_eps, 1e-6);
  EXPECT_EQ(llama.ffn_type, FfnType::SwiGlu);
  EXPECT_FALSE(llama.bias);
  EXPECT_FALSE(llama.tie_embeddings);
  const ModelConfig mistral = apply_preset("mistral", base);
  EXPECT_EQ(mistral.norm_type, NormType::RmsNorm);
  EXPECT_EQ(mistral.norm_eps, 1e-5);
  EXPECT_EQ(mistral.ffn_type, FfnType::SwiGlu);
  const ModelConfig gemma = apply_preset("gemma", base);
  EXPECT_EQ(gemma.norm_type, NormType::RmsNormUnitOffset);
  EXPECT_EQ(gemma.norm_eps, 1e-6);
  EXPECT_EQ(gemma.ffn_type, FfnType::GeGlu);
  EXPECT_EQ(gemma.norm_placement, NormPlacement::Pre);
  EXPECT_EQ(gemma.embedding_scale, EmbeddingScale::SqrtD);
  EXPECT_EQ(llama.embedding_scale, EmbeddingScale::None);
  const ModelConfig mixtral = apply_preset("mixtral", base);
  EXPECT_EQ(mixtral.norm_placement, NormPlacement::Pre);
  EXPECT_EQ(mixtral.norm_type, NormType::RmsNorm);
  EXPECT_EQ(mixtral.norm_eps, 1e-5);
  EXPECT_EQ(mixtral.ffn_type, FfnType::Moe);
  EXPECT_FALSE(mixtral.bias);
  EXPECT_FALSE(mixtral.tie_embeddings);
  EXPECT_EQ(mixtral.position_embedding, PositionEmbedding::Rope);
  EXPECT_EQ(mixtral.rope_theta, 1e6);
  EXPECT_EQ(mixtral.sliding_window, 0);
  EXPECT_EQ(mixtral.init, InitScheme::Normal);
  // Positions, attention and init (Hugging Face's families).
  EXPECT_EQ(gpt1.init, InitScheme::Normal);
  EXPECT_EQ(gpt1.position_embedding, PositionEmbedding::Learned);
  EXPECT_EQ(gpt2.position_embedding, PositionEmbedding::Learned);
  EXPECT_EQ(llama.position_embedding, PositionEmbedding::Rope);
  EXPECT_EQ(llama.rope_theta, 10000.0);
  EXPECT_EQ(llama.sliding_window, 0);
  EXPECT_EQ(mistral.sliding_window, 4096);
  EXPECT_EQ(gemma.position_embedding, PositionEmbedding::Rope);
  EXPECT_TRUE(gemma.tie_embeddings);
  EXPECT_EQ(gemma.padding_idx, -1);  // not set by the preset (docs/presets.md)
  // Sizes and seed come from the base.
  EXPECT_EQ(gemma.d_model, base.d_model);
  EXPECT_EQ(gemma.seed, base.seed);
}

TEST(Presets, MixtralKeepsTheExpertCountsOfTheBase) {
  ModelConfig base = testing::small_config("pre");
  EXPECT_EQ(apply_preset("mixtral", base).n_experts, 8);  // the defaults are Mixtral 8x7B's
  EXPECT_EQ(apply_preset("mixtral", base).experts_top_k, 2);
  base.n_experts = 4;
  base.experts_top_k = 1;
  EXPECT_EQ(apply_preset("mixtral", base).n_experts, 4);
  EXPECT_EQ(apply_preset("mixtral", base).experts_top_k, 1);
}

TEST(Presets, EveryPresetBuildsAndRuns) {
  const auto names = preset_names();
  EXPECT_EQ(names, (std::vector<std::string>{"gpt1", "gpt2", "llama", "mistral", "gemma", "mixtral"}));
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    TransformerLM model(apply_preset(name, testing::small_config("pre")));
    EXPECT_EQ(model.forward(testing::random_ids(1, 4, 13, 0)).shape(), (Shape{1, 4, 13}));
  }
}

TEST(Presets, UnknownNameListsTheValidOnes) {
  try {
    apply_preset("gpt5", ModelConfig{});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "[model] unknown preset 'gpt5'; valid presets: gpt1, gpt2, llama, mistral, gemma, "
                 "mixtral");
  }
}

}  // namespace
}  // namespace normlab
