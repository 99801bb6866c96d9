// The float64 TransformerLM and CausalSelfAttention against their formulas in long double
// (reference_model.h), for every norm placement, norm type and FFN type, tied and untied, with and
// without biases, and the presets. Every 1-d parameter (norm gains and biases, linear biases) is
// moved away from its initial value first, so that a gain of 1, a zero bias or Gemma's stored zero
// cannot hide a wrong formula.
#include <gtest/gtest.h>

#include "core/ops.h"
#include "nn/attention.h"
#include "nn/block.h"
#include "nn/presets.h"
#include "nn/transformer.h"
#include "nn_test_util.h"
#include "reference_model.h"

namespace normlab {
namespace {

namespace rm = reference_model;
using testing::random_ids;
using testing::small_config;

// Adds N(0, 0.1^2) noise to every 1-d parameter of m.
void perturb_vectors(Module& m, uint64_t seed) {
  Generator gen(seed);
  std::vector<Var> params;
  for (const Var& p : m.parameters()) {
    Tensor v = p.value().clone();
    if (v.dim() == 1) v = ops::add(v, Tensor::randn(v.shape(), gen, 0.0, 0.1, v.dtype()));
    params.push_back(parameter(v));
  }
  m.replace_parameters(params);
}

// Largest |a - b| over every element.
double max_diff(const std::vector<double>& a, const rm::Vec& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    m = std::max(m, static_cast<double>(std::abs(static_cast<long double>(a[i]) - b[i])));
  return m;
}

// The logits are O(1-10) and the float64 model rounds ~1e-16 relative per operation over a few
// hundred operations per logit: measured worst 2e-14; 1e-11 leaves room, and any wrong formula
// (mask, scale, residual, norm) moves them by 1e-3 or more.
constexpr double kLogitTolerance = 1e-11;

void expect_model_matches_reference(ModelConfig c, bool training = true) {
  c.dtype = ParamDType::Float64;
  TransformerLM model(c);
  perturb_vectors(model, c.seed + 100);
  const int64_t B = 2, T = c.context_length;
  if (!training) model.forward(random_ids(B, T, c.vocab_size, 4));  // moves BatchNorm's running stats
  model.train(training);
  const Tensor ids = random_ids(B, T, c.vocab_size, 3);
  const rm::Model reference{c, rm::Params(model), training};  // buffers as before the forward
  const std::vector<double> logits = model.forward(ids).value().to_vector();
  const std::vector<double> id_values = ids.to_vector();
  const std::vector<int32_t> id_list(id_values.begin(), id_values.end());
  EXPECT_LE(max_diff(logits, reference.logits(id_list, T).v), kLogitTolerance);
}

TEST(ReferenceModel, EveryPlacementNormAndFfnMatchesTheFormulas) {
  for (const ModelConfig& c :
       testing::model_variants({"layernorm", "rmsnorm", "rmsnorm_unit_offset", "groupnorm", "none"})) {
    SCOPED_TRACE(testing::describe(c));
    expect_model_matches_reference(c);
  }
}

// At depth 8 Mix-LN has two Post-LN layers below six Pre-LN ones (at the variants' depth it is all
// Pre-LN); B2T's extra sum shows at any depth.
TEST(ReferenceModel, MixLnAndB2TMatchTheFormulasAtDepth) {
  for (const std::string placement : {"mix_ln", "b2t"}) {
    for (const int64_t layers : {4, 8}) {
      SCOPED_TRACE(placement + " at " + std::to_string(layers) + " layers");
      ModelConfig c = small_config(placement, "layernorm", "gelu");
      c.n_layers = layers;
      expect_model_matches_reference(c);
    }
  }
}

TEST(ReferenceModel, PresetsMatchTheFormulas) {
  for (const std::string& name : preset_names()) {
    SCOPED_TRACE(name);
    ModelConfig c = apply_preset(name, small_config("pre"));
    // reference_model.h has no MoE FFN: mixtral's is checked by Moe.MatchesThePlainLoopsReference
    // and, as a whole model, by HfParity.Mixtral.
    if (c.ffn_type == FfnType::Moe) continue;
    c.n_layers = 3;
    expect_model_matches_reference(c);
  }
}

// RoPE (theta 50 so the angles turn visibly over a few positions), 4 query heads on 2 and on 1
// kv heads, a head_dim that is not d_model / n_heads, and a sliding window shorter than T.
TEST(ReferenceModel, RopeGroupedQueriesHeadDimAndSlidingWindowMatchTheFormulas) {
  for (const std::string name : {"llama", "mistral", "gemma"}) {
    for (int64_t kv_heads : {2, 1}) {
      for (int64_t window : {0, 1, 2}) {
        ModelConfig c = apply_preset(name, small_config("pre"));
        c.n_heads = 4;
        c.n_kv_heads = kv_heads;
        c.rope_theta = 50.0;
        c.sliding_window = window;
        c.init = InitScheme::Xavier;  // larger weights than the presets' 0.02: attention far from uniform
        if (name == "gemma") c.head_dim = 6;
        SCOPED_TRACE(fmt::format("{} kv_heads {} window {}", name, kv_heads, window));
        expect_model_matches_reference(c);
      }
    }
  }
}

// Training mode normalizes with the batch's statistics, eval with the running ones.
TEST(ReferenceModel, BatchNormInTrainingAndEvalModeMatchesTheFormulas) {
  for (const char* placement : {"post", "pre", "sandwich"}) {
    SCOPED_TRACE(placement);
    ModelConfig c = small_config(placement, "batchnorm");
    expect_model_matches_reference(c, /*training=*/true);
    expect_model_matches_reference(c, /*training=*/false);
  }
}

// The attention module alone: position i sees positions 0..i (itself included), nothing after.
TEST(ReferenceModel, CausalSelfAttentionMatchesTheFormula) {
  for (bool bias : {true, false}) {
    ModelConfig c = small_config("pre");
    c.dtype = ParamDType::Float64;
    c.bias = bias;
    c.n_heads = 4;
    CausalSelfAttention attn(c);
    Generator gen(5);
    std::vector<Var> params;
    for (const Var& p : attn.parameters())
      params.push_back(parameter(Tensor::randn(p.shape(), gen, 0.0, 0.5, DType::F64)));
    attn.replace_parameters(params);
    const int64_t B = 2, T = 5;
    const Tensor x = Tensor::randn({B, T, c.d_model}, gen, 0.0, 1.0, DType::F64);
    const std::vector<double> y = attn.forward(constant(x), 0).value().to_vector();
    const std::vector<double> xv = x.to_vector();
    const rm::Model reference{c, rm::Params(attn, "attn."), true};
    const rm::Matrix expected = reference.attention({B * T, c.d_model, rm::Vec(xv.begin(), xv.end())}, T, "attn");
    EXPECT_LE(max_diff(y, expected.v), kLogitTolerance) << (bias ? "bias" : "no bias");
  }
}

}  // namespace
}  // namespace normlab
