// A language model may not see the future: the logits at positions 0..t depend on tokens 0..t only.
// For every norm placement, norm type and FFN type, tied and untied, and the presets:
//   forward:  replacing every token after t leaves the logits at 0..t bit-identical (masked
//             attention weights are exactly 0, 0 * v adds exactly nothing, and the row-wise ops
//             never mix positions, so not even the rounding may change), and changes the logits
//             at t + 1 (a model that ignored its input would pass the first check alone);
//   backward: with only positions 0..t counted in the loss, the gradient of every position
//             embedding row after t is exactly zero, and the rows up to t get one.
// One exception to bit-identity: a mixture of experts gathers each expert's tokens into one
// GEMM, and replacing later tokens changes how many rows that GEMM has; OpenBLAS picks its kernel
// (and so its summation order) by shape (its small-matrix kernels on AVX-512 CPUs), so an earlier
// row may round differently. There the logits at 0..t must agree to 1e-5 relative in float32 and
// 1e-12 in float64 (a look into the future moves them by far more).
// BatchNorm is causal only in eval mode (running statistics); in training mode its statistics run
// over every row of the batch, future positions included, as the last test records.
#include <gtest/gtest.h>

#include <cmath>

#include "autograd/ops.h"
#include "nn/block.h"
#include "nn/presets.h"
#include "nn/transformer.h"
#include "nn_test_util.h"

namespace normlab {
namespace {

using testing::random_ids;
using testing::small_config;

// ids with every token after position t (in every sequence) replaced by a different one.
Tensor change_after(const Tensor& ids, int64_t t, int64_t vocab, uint64_t seed) {
  Generator gen(seed);
  const std::vector<double> v = ids.to_vector();
  std::vector<int32_t> out(v.begin(), v.end());
  const int64_t T = ids.size(1);
  for (size_t i = 0; i < out.size(); ++i)
    if (static_cast<int64_t>(i) % T > t)
      out[i] = static_cast<int32_t>((out[i] + 1 + static_cast<int64_t>(gen.below(vocab - 1))) % vocab);
  return Tensor::from_ints(out, ids.shape());
}

// How many logits at positions <= t differ, and whether every sequence's logits at t + 1 changed.
struct Comparison {
  int64_t changed_up_to_t = 0;
  bool every_next_changed = true;
};

Comparison compare_logits(const std::vector<double>& a, const std::vector<double>& b, int64_t B, int64_t T,
                          int64_t V, int64_t t, double tolerance) {
  Comparison c;
  for (int64_t s = 0; s < B; ++s) {
    for (int64_t i = 0; i < (t + 1) * V; ++i) {
      const double x = a[s * T * V + i], y = b[s * T * V + i];
      c.changed_up_to_t += tolerance == 0 ? x != y : std::abs(x - y) > tolerance * (1 + std::abs(x));
    }
    bool next_changed = false;
    for (int64_t i = (t + 1) * V; i < (t + 2) * V; ++i) next_changed |= a[s * T * V + i] != b[s * T * V + i];
    c.every_next_changed &= next_changed;
  }
  return c;
}

void expect_forward_causal(TransformerLM& model) {
  const ModelConfig& c = model.config();
  const int64_t B = 2, T = c.context_length, V = c.vocab_size;
  const Tensor ids = random_ids(B, T, V, 1);
  const std::vector<double> base = model.forward(ids).value().to_vector();
  const double tolerance = c.ffn_type != FfnType::Moe ? 0.0 : c.dtype == ParamDType::Float32 ? 1e-5 : 1e-12;
  for (int64_t t = 0; t + 1 < T; ++t) {
    const std::vector<double> other = model.forward(change_after(ids, t, V, 10 + t)).value().to_vector();
    const Comparison cmp = compare_logits(base, other, B, T, V, t, tolerance);
    EXPECT_EQ(cmp.changed_up_to_t, 0) << "logits at positions <= " << t << " changed with later tokens";
    EXPECT_TRUE(cmp.every_next_changed) << "logits at position " << t + 1 << " ignore its token";
  }
}

// The gradient of pos_emb.weight (T, C) with the loss counting positions 0..t only.
std::vector<double> position_gradient(TransformerLM& model, int64_t t) {
  const ModelConfig& c = model.config();
  const int64_t B = 2, T = c.context_length;
  const Tensor ids = random_ids(B, T, c.vocab_size, 2);
  const std::vector<double> drawn = random_ids(B, T, c.vocab_size, 3).to_vector();
  std::vector<int32_t> targets(drawn.begin(), drawn.end());
  for (size_t i = 0; i < targets.size(); ++i)
    if (static_cast<int64_t>(i) % T > t) targets[i] = -1;  // ignored
  model.zero_grad();
  backward(model.loss(ids, Tensor::from_ints(targets, {B, T})));
  for (const auto& [name, p] : model.named_parameters())
    if (name == "pos_emb.weight") return p.grad().to_vector();
  ADD_FAILURE() << "no pos_emb.weight";
  return {};
}

void expect_backward_causal(TransformerLM& model) {
  const int64_t T = model.config().context_length, C = model.config().d_model;
  for (int64_t t = 0; t + 1 < T; ++t) {
    const std::vector<double> g = position_gradient(model, t);
    ASSERT_EQ(g.size(), static_cast<size_t>(T * C));
    int64_t nonzero_after = 0, nonzero_up_to = 0;
    for (int64_t i = 0; i < T * C; ++i) (i / C > t ? nonzero_after : nonzero_up_to) += g[i] != 0.0;
    EXPECT_EQ(nonzero_after, 0) << "positions after " << t << " get a gradient from the loss up to " << t;
    EXPECT_GT(nonzero_up_to, 0) << "positions up to " << t << " get no gradient";
  }
}

// The backward check reads pos_emb's gradient: only for learned positions.
void expect_causal(const ModelConfig& c) {
  TransformerLM model(c);
  if (c.norm_type == NormType::BatchNorm) model.eval();
  expect_forward_causal(model);
  if (c.position_embedding == PositionEmbedding::Learned) expect_backward_causal(model);
}

TEST(Causality, EveryPlacementNormAndFfn) {
  for (const ModelConfig& c : testing::model_variants(
           {"layernorm", "rmsnorm", "rmsnorm_unit_offset", "groupnorm", "batchnorm", "none"})) {
    SCOPED_TRACE(testing::describe(c));
    expect_causal(c);
  }
}

TEST(Causality, PresetsInFloat32AndFloat64) {
  for (const std::string& name : preset_names())
    for (const ParamDType dtype : {ParamDType::Float32, ParamDType::Float64}) {
      SCOPED_TRACE(name + " " + enum_name(dtype));
      ModelConfig c = apply_preset(name, small_config("pre"));
      c.dtype = dtype;
      c.context_length = 8;
      c.n_heads = 4;
      c.n_kv_heads = 2;
      c.sliding_window = name == "mistral" ? 3 : 0;
      expect_causal(c);
      c.position_embedding = PositionEmbedding::Learned;  // the same attention, with a pos_emb for the backward check
      expect_causal(c);
    }
}

TEST(Causality, DropoutInTrainingModeKeepsItCausal) {
  ModelConfig c = small_config("pre");
  c.dropout = 0.2;
  TransformerLM model(c);
  model.set_dropout_seed(9);  // masks depend on (seed, position), not on the tokens
  expect_forward_causal(model);
}

// Documents how BatchNorm is defined, not a wish: in training mode a position's output depends on
// later positions through the batch statistics (see also norm_batch_test.cpp).
TEST(Causality, BatchNormInTrainingModeSeesLaterPositions) {
  TransformerLM model(small_config("pre", "batchnorm"));
  const Tensor ids = random_ids(2, 6, 13, 1);
  const std::vector<double> base = model.forward(ids).value().to_vector();
  const std::vector<double> other = model.forward(change_after(ids, 2, 13, 5)).value().to_vector();
  EXPECT_GT(compare_logits(base, other, 2, 6, 13, 2, 0.0).changed_up_to_t, 0);
}


// An encoder (model.arch = "encoder") is not causal on purpose: tests/nn/encoder_test.cpp.

}  // namespace
}  // namespace normlab
