// TransformerLM: structure and names per placement, every parameter learns, validation errors,
// determinism, dropout, and the residual-stream behaviour of post vs pre at init.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "autograd/ops.h"
#include "core/ops.h"
#include "nn/block.h"
#include "nn/init.h"
#include "nn/presets.h"
#include "nn/transformer.h"
#include "nn_test_util.h"

namespace normlab {
namespace {

using testing::random_ids;
using testing::small_config;

std::map<std::string, Var> by_name(const Module& m) {
  std::map<std::string, Var> out;
  for (auto& [name, p] : m.named_parameters()) out[name] = p;
  return out;
}

// The key projection's bias shifts every score of a query row by the same q.b, which softmax
// ignores: its gradient is zero by construction (up to rounding), so it is exempt below.
bool structurally_zero(const std::string& name) {
  return name.size() >= 11 && name.compare(name.size() - 11, 11, "attn.k.bias") == 0;
}

double dot(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.to_vector(), y = b.to_vector();
  return std::inner_product(x.begin(), x.end(), y.begin(), 0.0);
}

// d loss / d p along a unit direction, by central differences of the float64 loss (h = 1e-5:
// truncation ~h^2 |third derivative| ~1e-10, rounding ~1e-16 |loss| / h ~3e-11).
double directional_difference(TransformerLM& model, const Tensor& ids, const Tensor& targets, size_t which,
                              const Tensor& direction) {
  const double h = 1e-5;
  std::vector<Var> params = model.parameters();
  const Tensor saved = params[which].value();
  double loss[2];
  for (int side = 0; side < 2; ++side) {
    std::vector<Var> moved = params;
    moved[which] = parameter(ops::add(saved, ops::scale(direction, side == 0 ? h : -h)));
    model.replace_parameters(moved);
    loss[side] = model.loss(ids, targets).item();
  }
  model.replace_parameters(params);
  return (loss[0] - loss[1]) / (2 * h);
}

// Every parameter gets a gradient (the graph is not cut anywhere), and that gradient is the
// derivative: along a random unit direction it equals central differences of the loss.
void expect_every_parameter_learns(ModelConfig config) {
  config.dtype = ParamDType::Float64;
  TransformerLM model(config);
  const int64_t T = config.context_length;  // every position row of pos_emb is used
  const Tensor ids = random_ids(3, T, config.vocab_size, 11);
  const Tensor targets = random_ids(3, T, config.vocab_size, 12);
  Var loss = model.loss(ids, targets);
  ASSERT_TRUE(std::isfinite(loss.item()));
  backward(loss);
  Generator gen(config.seed + 5);
  const auto named = model.named_parameters();
  for (size_t i = 0; i < named.size(); ++i) {
    const auto& [name, p] = named[i];
    ASSERT_TRUE(p.grad().defined()) << name << " got no gradient";
    Tensor direction = Tensor::randn(p.shape(), gen, 0.0, 1.0, DType::F64);
    direction = ops::scale(direction, 1.0 / std::sqrt(ops::sum_squares(direction)));
    const double analytic = dot(p.grad(), direction);
    const double numeric = directional_difference(model, ids, targets, i, direction);
    EXPECT_NEAR(analytic, numeric, 1e-8 + 1e-6 * std::abs(numeric)) << name;
    if (structurally_zero(name)) {  // rounding-level only, far below the query bias's gradient
      const Var q_bias = by_name(model).at(name.substr(0, name.size() - 6) + "q.bias");
      EXPECT_LT(std::sqrt(ops::sum_squares(p.grad())), 1e-4 * std::sqrt(ops::sum_squares(q_bias.grad())))
          << name;
      continue;
    }
    EXPECT_GT(ops::sum_squares(p.grad()), 0.0) << name << " got an all-zero gradient";
  }
}

TEST(TransformerLM, EveryParameterGetsANonZeroGradientEqualToFiniteDifferences) {
  for (const ModelConfig& c : testing::model_variants({"layernorm", "rmsnorm", "rmsnorm_unit_offset"})) {
    SCOPED_TRACE(testing::describe(c));
    expect_every_parameter_learns(c);
  }
}

TEST(TransformerLM, GroupNormBatchNormAndNoBiasAlsoLearn) {
  for (const char* norm : {"groupnorm", "batchnorm"})
    for (const char* placement : {"post", "pre"}) {
      SCOPED_TRACE(std::string(placement) + " " + norm);
      expect_every_parameter_learns(small_config(placement, norm));
    }
  ModelConfig c = small_config("pre");
  c.bias = false;
  expect_every_parameter_learns(c);
}

TEST(TransformerLM, ParameterNamesFollowTheDocumentedScheme) {
  for (const std::string& placement : enum_names<NormPlacement>()) {
    SCOPED_TRACE(placement);
    const auto names = by_name(TransformerLM(small_config(placement)));
    for (const char* name : {"tok_emb.weight", "pos_emb.weight", "blocks.1.ffn.w2.weight",
                             "blocks.0.ffn.w1.bias", "blocks.1.attn.q.weight", "blocks.1.attn.k.weight",
                             "blocks.1.attn.v.weight", "blocks.1.attn.o.bias"})
      EXPECT_TRUE(names.count(name)) << name;
    const bool has_final = placement == "pre" || placement == "sandwich" || placement == "mix_ln";
    EXPECT_EQ(names.count("final_norm.weight"), has_final ? 1u : 0u);
    EXPECT_EQ(names.count("final_norm.bias"), has_final ? 1u : 0u);
    EXPECT_EQ(names.count("blocks.0.norm1.weight"), placement == "none" ? 0u : 1u);
    EXPECT_EQ(names.count("blocks.0.post_norm2.weight"), placement == "sandwich" ? 1u : 0u);
    EXPECT_EQ(names.count("lm_head.weight"), 0u);
    EXPECT_EQ(names.count("blocks.0.ffn.w3.weight"), 0u);
  }
  const auto untied = by_name(TransformerLM(small_config("pre", "rmsnorm", "swiglu", false)));
  ASSERT_TRUE(untied.count("lm_head.weight"));
  EXPECT_EQ(untied.at("lm_head.weight").shape(), (Shape{13, 16}));
  EXPECT_TRUE(untied.count("blocks.1.ffn.w3.weight"));
  EXPECT_EQ(untied.count("final_norm.bias"), 0u);  // rmsnorm has no bias
  // Parameters carry their dotted names (for gradient logs).
  EXPECT_EQ(untied.at("blocks.1.ffn.w2.weight").name(), "blocks.1.ffn.w2.weight");
}

TEST(TransformerLM, LogitsShapeAndDtype) {
  ModelConfig c = small_config("post");
  c.dtype = ParamDType::Float64;
  TransformerLM model(c);
  model.set_record_residual_rms(true);
  Var logits = model.forward(random_ids(2, 4, c.vocab_size, 1));
  EXPECT_EQ(logits.shape(), (Shape{2, 4, 13}));
  EXPECT_EQ(logits.dtype(), DType::F64);
  EXPECT_EQ(model.residual_rms().size(), static_cast<size_t>(c.n_layers + 1));
}

TEST(TransformerLM, ResidualRmsIsRecordedOnlyWhenTurnedOn) {
  ModelConfig c = small_config("post");
  c.dtype = ParamDType::Float64;
  TransformerLM model(c);
  const Tensor ids = random_ids(2, 5, c.vocab_size, 3);
  const std::vector<double> logits_off = model.forward(ids).value().to_vector();
  EXPECT_TRUE(model.residual_rms().empty()) << "off by default";
  model.set_record_residual_rms(true);
  EXPECT_EQ(model.forward(ids).value().to_vector(), logits_off) << "recording changes nothing else";
  const std::vector<double> recorded = model.residual_rms();
  model.set_record_residual_rms(false);
  model.forward(ids);
  EXPECT_TRUE(model.residual_rms().empty()) << "a forward that does not record leaves nothing stale";

  // The stream entering block 0, rebuilt on the host from the embedding tables: tok_emb[id] + pos_emb[t].
  ASSERT_EQ(recorded.size(), static_cast<size_t>(c.n_layers + 1));
  std::map<std::string, Var> params;
  for (const auto& [name, p] : model.named_parameters()) params.emplace(name, p);
  const std::vector<double> tok = params.at("tok_emb.weight").value().to_vector();
  const std::vector<double> pos = params.at("pos_emb.weight").value().to_vector();
  const std::vector<double> id_values = ids.to_vector();
  double sum = 0.0;
  for (size_t i = 0; i < id_values.size(); ++i)
    for (int64_t k = 0; k < c.d_model; ++k) {
      const double v = tok[static_cast<size_t>(id_values[i]) * c.d_model + k] + pos[(i % 5) * c.d_model + k];
      sum += v * v;
    }
  EXPECT_NEAR(recorded[0], std::sqrt(sum / static_cast<double>(id_values.size() * c.d_model)), 1e-12);
  // Post-LN: every later entry leaves a LayerNorm (weight 1, bias 0 at init), so its RMS is 1.
  for (size_t l = 1; l < recorded.size(); ++l) EXPECT_NEAR(recorded[l], 1.0, 1e-3) << "after block " << l - 1;
}

// The parameter count written out from the architecture (nn/transformer.h, block.h, norms.h, ffn.h).
int64_t expected_parameter_count(const ModelConfig& c) {
  const int64_t C = c.d_model, F = c.d_ff, V = c.vocab_size, b = c.bias ? 1 : 0;
  const bool gated = c.ffn_type == FfnType::SwiGlu || c.ffn_type == FfnType::GeGlu;
  const bool rms = c.norm_type == NormType::RmsNorm || c.norm_type == NormType::RmsNormUnitOffset;
  const int64_t norm = c.norm_type == NormType::None ? 0 : C + (rms ? 0 : b * C);
  const std::map<std::string, int64_t> norms_per_block = {
      {"post", 2}, {"pre", 2}, {"none", 0}, {"sandwich", 4}, {"deepnorm", 2}, {"admin", 2}, {"mix_ln", 2}, {"b2t", 2}};
  const int64_t attention = 4 * (C * C + b * C);
  const int64_t ffn = (gated ? 2 : 1) * (C * F + b * F) + F * C + b * C;
  const int64_t block = attention + ffn + norms_per_block.at(enum_name(c.norm_placement)) * norm;
  const bool final_norm = c.norm_placement == NormPlacement::Pre || c.norm_placement == NormPlacement::Sandwich ||
                          c.norm_placement == NormPlacement::MixLn;
  return V * C + c.context_length * C + c.n_layers * block + (final_norm ? norm : 0) +
         (c.tie_embeddings ? 0 : V * C);
}

TEST(TransformerLM, ParameterCountFollowsTheArchitecture) {
  for (const ModelConfig& c : testing::model_variants(
           {"layernorm", "rmsnorm", "rmsnorm_unit_offset", "groupnorm", "batchnorm", "none"})) {
    SCOPED_TRACE(testing::describe(c));
    const TransformerLM model(c);
    int64_t summed = 0;
    for (const auto& [name, p] : model.named_parameters()) summed += p.value().numel();
    EXPECT_EQ(summed, expected_parameter_count(c));
    EXPECT_EQ(model.parameter_count(), summed);
  }
  // GPT-2 small's shape, as a check of the formula itself: 124,439,808 parameters (tied head).
  ModelConfig gpt2 = apply_preset("gpt2", ModelConfig{});
  gpt2.vocab_size = 50257;
  gpt2.d_model = 768;
  gpt2.n_layers = 12;
  gpt2.d_ff = 3072;
  gpt2.context_length = 1024;
  EXPECT_EQ(expected_parameter_count(gpt2), 124439808);
}

// The loss is the mean over counted positions of logsumexp(logits) - logit[target], computed here
// from the model's own logits in long double; ignored targets (-1) are left out of the mean.
TEST(TransformerLM, LossIsTheMeanCrossEntropyOfItsLogits) {
  ModelConfig c = small_config("pre");
  c.dtype = ParamDType::Float64;
  TransformerLM model(c);
  const int64_t B = 2, T = 6, V = c.vocab_size;
  const Tensor ids = random_ids(B, T, V, 1);
  std::vector<double> drawn = random_ids(B, T, V, 2).to_vector();
  drawn[3] = drawn[8] = -1;
  const std::vector<int32_t> targets(drawn.begin(), drawn.end());
  const std::vector<double> logits = model.forward(ids).value().to_vector();
  long double total = 0;
  for (int64_t r = 0; r < B * T; ++r) {
    if (targets[r] < 0) continue;
    long double sum = 0;
    for (int64_t v = 0; v < V; ++v) sum += std::exp(static_cast<long double>(logits[r * V + v]));
    total += std::log(sum) - logits[r * V + targets[r]];
  }
  const double expected = static_cast<double>(total / (B * T - 2));
  EXPECT_NEAR(model.loss(ids, Tensor::from_ints(targets, {B, T})).item(), expected, 1e-12);
}

// At GPT-2's initialisation (every matrix N(0, 0.02^2)) the logits are x E^T with unit-RMS rows x,
// so each logit is about N(0, 0.02^2 C): for C = 32, std 0.11, and the loss is ln V + var / 2 to
// second order, ln 50 + 0.006. 0.03 allows for the sample (288 positions) and the higher orders;
// a loss summed instead of averaged, or logits off by a scale, misses it by far.
TEST(TransformerLM, LossAtInitialisationIsLogVocab) {
  ModelConfig c = apply_preset("gpt2", small_config("pre"));
  c.vocab_size = 50;
  c.d_model = 32;
  c.context_length = 16;
  TransformerLM model(c);
  const double loss = model.loss(random_ids(18, 16, 50, 1), random_ids(18, 16, 50, 2)).item();
  EXPECT_NEAR(loss, std::log(50.0) + 0.006, 0.03);
}

void expect_error(const ModelConfig& c, const std::string& fragment) {
  try {
    TransformerLM model(c);
    FAIL() << "expected an error containing: " << fragment;
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("[model]", 0), 0u) << what;
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
  }
}

TEST(TransformerLM, ValidationNamesKeyAndValue) {
  ModelConfig c = small_config("pre");
  c.n_heads = 3;
  expect_error(c, "d_model (16) must be divisible by n_heads (3)");
  c = small_config("pre");
  c.norm_eps = 0;
  expect_error(c, "norm_eps must be > 0");
  c = small_config("pre");
  c.vocab_size = 0;
  expect_error(c, "vocab_size must be > 0, got 0");
  c = small_config("pre");
  c.n_heads = 4;
  c.n_kv_heads = 3;
  expect_error(c, "n_heads (4) must be a multiple of n_kv_heads (3)");
  c = small_config("pre");
  c.position_embedding = PositionEmbedding::Rope;
  c.head_dim = 5;
  expect_error(c, "rope needs an even head_dim, got 5");
  c = small_config("pre");
  c.padding_idx = 13;
  expect_error(c, "padding_idx must be -1 (none) or a token id < vocab_size (13), got 13");
  c = small_config("pre");
  c.sliding_window = -1;
  expect_error(c, "sliding_window must be >= 0");
  c = small_config("pre");
  c.norm_type = NormType::GroupNorm;
  c.norm_groups = 3;
  expect_error(c, "norm_groups");
  c = small_config("pre");
  c.dropout = 1.0;
  expect_error(c, "dropout");
  // norm_eps is not used without norms.
  c = small_config("none");
  c.norm_type = NormType::None;
  c.norm_eps = 0;
  EXPECT_NO_THROW(TransformerLM{c});
}

TEST(TransformerLM, SequenceLongerThanContextIsAnError) {
  TransformerLM model(small_config("pre"));
  try {
    model.forward(random_ids(1, 7, 13, 0));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("T = 7 must be in [1, context_length = 6]"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(model.loss(random_ids(1, 6, 13, 0), random_ids(1, 5, 13, 0)), Error);
}

TEST(TransformerLM, ForwardIsDeterministicForTheSameSeed) {
  const ModelConfig c = small_config("pre");
  const Tensor ids = random_ids(2, 6, c.vocab_size, 5);
  const auto a = TransformerLM(c).forward(ids).value().to_vector();
  const auto b = TransformerLM(c).forward(ids).value().to_vector();
  EXPECT_EQ(a, b);
  ModelConfig other = c;
  other.seed = c.seed + 1;
  EXPECT_NE(a, TransformerLM(other).forward(ids).value().to_vector());
}

TEST(TransformerLM, DropoutDependsOnSeedAndIsOffInEval) {
  ModelConfig c = small_config("pre");
  c.dropout = 0.3;
  TransformerLM model(c);
  const Tensor ids = random_ids(2, 6, c.vocab_size, 5);
  model.set_dropout_seed(1);
  const auto a = model.forward(ids).value().to_vector();
  EXPECT_EQ(a, model.forward(ids).value().to_vector());
  model.set_dropout_seed(2);
  EXPECT_NE(a, model.forward(ids).value().to_vector());
  model.eval();
  c.dropout = 0.0;
  EXPECT_EQ(model.forward(ids).value().to_vector(), TransformerLM(c).forward(ids).value().to_vector());
}

TEST(TransformerLM, DropoutSitesGetDifferentSeeds) {
  EXPECT_NE(dropout_site_seed(5, 0), dropout_site_seed(5, 1));
  EXPECT_NE(dropout_site_seed(5, 1), dropout_site_seed(6, 1));
  EXPECT_EQ(dropout_site_seed(5, 3), dropout_site_seed(5, 3));
}

TEST(TransformerLM, PostNormBlockOutputRowsAreNormalized) {
  ModelConfig c = small_config("post");
  c.d_model = 64;
  c.n_heads = 4;
  c.d_ff = 128;
  Block block(c, 0);
  initialize_parameters(block, c);
  Generator gen(4);
  Var x = constant(Tensor::randn({2, 6, 64}, gen, 0.5, 2.0));
  const std::vector<double> y = block.forward(x, 0).value().to_vector();
  for (size_t row = 0; row < 12; ++row) {
    double mean = 0, sq = 0;
    for (size_t j = 0; j < 64; ++j) mean += y[row * 64 + j] / 64.0;
    for (size_t j = 0; j < 64; ++j) sq += (y[row * 64 + j] - mean) * (y[row * 64 + j] - mean) / 64.0;
    EXPECT_NEAR(mean, 0.0, 1e-5);
    EXPECT_NEAR(sq, 1.0, 1e-3);
  }
}

ModelConfig deep_config(const std::string& placement) {
  ModelConfig c = small_config(placement, "layernorm", "relu");
  c.vocab_size = 64;
  c.d_model = 64;
  c.n_heads = 4;
  c.d_ff = 256;
  c.n_layers = 8;
  c.context_length = 16;
  return c;
}

TEST(TransformerLM, PreLNResidualGrowsWithDepthPostLNStaysAtOne) {
  const Tensor ids = random_ids(4, 16, 64, 9);
  TransformerLM pre(deep_config("pre"));
  pre.set_record_residual_rms(true);
  pre.forward(ids);
  const auto& rms_pre = pre.residual_rms();
  ASSERT_EQ(rms_pre.size(), 9u);
  EXPECT_GT(rms_pre.back(), rms_pre.front());
  EXPECT_GT(rms_pre.back(), rms_pre[4]);
  TransformerLM post(deep_config("post"));
  post.set_record_residual_rms(true);
  post.forward(ids);
  for (size_t l = 1; l < post.residual_rms().size(); ++l)
    EXPECT_NEAR(post.residual_rms()[l], 1.0, 1e-3) << "after block " << l - 1;
}

TEST(TransformerLM, DeepNormAlphaAndBeta) {
  ModelConfig c = small_config("deepnorm");
  c.n_layers = 8;
  Block block(c, 0);
  EXPECT_DOUBLE_EQ(block.shortcut_scale(), std::pow(16.0, 0.25));
  EXPECT_DOUBLE_EQ(deepnorm_beta(single_stack(c)), std::pow(64.0, -0.25));
}

// Admin's omega for 8 layers (16 residual sub-layers): sqrt(17 / ln 17 - 1) = 1.8258..., by hand
// 17 / 2.833213 = 6.000255, minus 1, square root 2.236125; and it is Post-LN's init (no beta).
TEST(TransformerLM, AdminOmegaRescalesPostLnShortcut) {
  ModelConfig c = small_config("admin");
  c.n_layers = 8;
  Block block(c, 0);
  EXPECT_NEAR(block.shortcut_scale(), 2.236125, 1e-6);
  ModelConfig post = small_config("post");
  post.n_layers = 8;
  c.seed = post.seed = 3;
  const auto a = TransformerLM(c).named_parameters(), b = TransformerLM(post).named_parameters();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].second.value().to_vector(), b[i].second.value().to_vector()) << a[i].first;
}

}  // namespace
}  // namespace normlab
