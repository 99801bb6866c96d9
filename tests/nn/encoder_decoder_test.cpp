// model.arch = "encoder_decoder" (fairseq's Transformer): whole-model gradchecks in float64 with a
// padded source (post, pre, and the other supported placements), the padding and causality
// invariants of its logits, encode/decode against forward, its parameter names and the errors of
// the interface. The independent reference (torch.nn.Transformer layers) is
// encoder_decoder_parity_test.cpp.
#include <gtest/gtest.h>

#include <string>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "nn/model_cases.h"
#include "nn/transformer.h"
#include "nn_test_util.h"

namespace normlab {
namespace {

ModelConfig seq2seq_config(NormPlacement placement) {
  ModelConfig c = tiny_model_config(placement);
  c.arch = ModelArch::EncoderDecoder;
  c.context_length = 6;
  c.position_embedding = PositionEmbedding::Sinusoidal;
  c.embedding_scale = EmbeddingScale::SqrtD;
  c.ffn_type = FfnType::Relu;
  return c;
}

void expect_gradcheck_passes(const OpCase& c) {
  const auto results = gradcheck(c.fn, c.make_inputs(0, {}), c.input_names, c.differentiable, c.options);
  ASSERT_EQ(results.size(), c.input_names.size());
  for (const InputCheck& r : results)
    EXPECT_TRUE(r.passed) << c.name << " " << r.input << ": max rel " << r.max_rel_error << " max abs "
                          << r.max_abs_error;
}

TEST(EncoderDecoder, GradcheckPostAndPreWithPaddedSources) {
  for (const NormPlacement placement : {NormPlacement::Post, NormPlacement::Pre})
    expect_gradcheck_passes(make_model_case(fmt::format("seq2seq_{}", placement), "", seq2seq_config(placement)));
}

TEST(EncoderDecoder, GradcheckOtherPlacementsUntiedLearnedPositions) {
  ModelConfig none = seq2seq_config(NormPlacement::None);
  none.tie_embeddings = false;
  none.position_embedding = PositionEmbedding::Learned;
  expect_gradcheck_passes(make_model_case("seq2seq_none", "", none));
  ModelConfig sandwich = seq2seq_config(NormPlacement::Sandwich);
  sandwich.norm_type = NormType::RmsNorm;
  sandwich.ffn_type = FfnType::SwiGlu;
  sandwich.position_embedding = PositionEmbedding::Rope;  // self-attention only; cross-attention has none
  expect_gradcheck_passes(make_model_case("seq2seq_sandwich", "", sandwich));
}

std::vector<double> logits_of(TransformerLM& model, const TinyBatch& batch) {
  return model.forward(batch.ids, batch.sources, batch.source_padding).value().to_vector();
}

Tensor with_id(const Tensor& ids, int64_t index, int32_t id) {
  const std::vector<double> v = ids.to_vector();
  std::vector<int32_t> out(v.begin(), v.end());
  out[static_cast<size_t>(index)] = id;
  return Tensor::from_ints(out, ids.shape());
}

// Any padded source token (sequence 1's last two) changes no logit; a real one (its first) changes
// sequence 1's logits and not sequence 0's.
TEST(EncoderDecoder, PaddedSourcesAreInvisible) {
  for (const NormPlacement placement : {NormPlacement::Post, NormPlacement::Pre}) {
    SCOPED_TRACE(enum_name(placement));
    TransformerLM model(seq2seq_config(placement));
    const TinyBatch batch = tiny_batch(model.config());
    const int64_t S = batch.sources.size(1);
    const std::vector<double> base = logits_of(model, batch), padding = batch.source_padding.to_vector();
    int padded = 0;
    for (int64_t i = 0; i < 2 * S; ++i) {
      if (padding[i] == 0.0) continue;
      ++padded;
      TinyBatch changed = batch;
      changed.sources = with_id(batch.sources, i, 7);
      EXPECT_EQ(logits_of(model, changed), base) << "padded source token " << i << " moved the logits";
    }
    EXPECT_EQ(padded, 2);
    TinyBatch real_changed = batch;
    real_changed.sources = with_id(batch.sources, S, (static_cast<int32_t>(batch.sources.to_vector()[S]) + 1) % 11);
    const std::vector<double> moved = logits_of(model, real_changed);
    const int64_t half = static_cast<int64_t>(base.size()) / 2;  // sequence 1's logits move, sequence 0's do not
    double change0 = 0, change1 = 0;
    for (int64_t i = 0; i < 2 * half; ++i) (i < half ? change0 : change1) += std::abs(moved[i] - base[i]);
    EXPECT_EQ(change0, 0.0);
    EXPECT_GT(change1, 1e-6) << "a real source token did not move the logits";
  }
}

// Changing decoder input t leaves the logits at positions < t bit-identical and moves position t.
TEST(EncoderDecoder, DecoderIsCausal) {
  for (const NormPlacement placement : {NormPlacement::Post, NormPlacement::Pre}) {
    SCOPED_TRACE(enum_name(placement));
    TransformerLM model(seq2seq_config(placement));
    const TinyBatch batch = tiny_batch(model.config());
    const int64_t T = batch.ids.size(1), V = model.config().vocab_size;
    const std::vector<double> base = logits_of(model, batch);
    for (int64_t t = 1; t < T; ++t) {
      TinyBatch changed = batch;
      changed.ids = with_id(batch.ids, t, (static_cast<int32_t>(batch.ids.to_vector()[t]) + 1) % 11);
      const std::vector<double> moved = logits_of(model, changed);
      double before = 0, at = 0;
      for (int64_t i = 0; i < t * V; ++i) before += std::abs(moved[i] - base[i]);
      for (int64_t i = t * V; i < (t + 1) * V; ++i) at += std::abs(moved[i] - base[i]);
      EXPECT_EQ(before, 0.0) << "position < " << t << " sees position " << t;
      EXPECT_GT(at, 1e-9) << "position " << t;
    }
  }
}

TEST(EncoderDecoder, EncodeThenDecodeIsForward) {
  TransformerLM model(seq2seq_config(NormPlacement::Pre));
  const TinyBatch batch = tiny_batch(model.config());
  const Var memory = model.encode(batch.sources, batch.source_padding);
  EXPECT_EQ(memory.shape(), (Shape{2, batch.sources.size(1), 8}));
  EXPECT_EQ(model.decode(batch.ids, memory, batch.source_padding).value().to_vector(), logits_of(model, batch));
  // No padding at all: an undefined padding tensor is the all-zero one.
  const Tensor zeros = Tensor::zeros(batch.sources.shape(), DType::I32);
  EXPECT_EQ(model.forward(batch.ids, batch.sources, Tensor()).value().to_vector(),
            model.forward(batch.ids, batch.sources, zeros).value().to_vector());
}

bool has_name(const TransformerLM& model, const std::string& name) {
  for (const auto& [n, p] : model.named_parameters())
    if (n == name) return true;
  return false;
}

TEST(EncoderDecoder, ParameterNamesAndEveryGradientNonZero) {
  for (const bool tied : {true, false}) {
    ModelConfig c = seq2seq_config(tied ? NormPlacement::Pre : NormPlacement::Post);
    c.tie_embeddings = tied;
    c.position_embedding = PositionEmbedding::Learned;
    TransformerLM model(c);
    for (const char* name : {"tok_emb.weight", "src_pos_emb.weight", "pos_emb.weight", "encoder.1.attn.q.weight",
                             "encoder.0.norm2.bias", "decoder.1.cross_attn.k.weight", "decoder.0.norm3.weight",
                             "decoder.1.ffn.w2.bias"})
      EXPECT_TRUE(has_name(model, name)) << name;
    EXPECT_FALSE(has_name(model, "encoder.0.norm3.weight"));
    EXPECT_FALSE(has_name(model, "encoder.0.cross_attn.q.weight"));
    EXPECT_EQ(has_name(model, "encoder_norm.weight"), tied);  // pre has final norms, post none
    EXPECT_EQ(has_name(model, "decoder_norm.weight"), tied);
    EXPECT_EQ(has_name(model, "src_emb.weight"), !tied);
    EXPECT_EQ(has_name(model, "lm_head.weight"), !tied);
    const TinyBatch batch = tiny_batch(c);
    backward(model.loss(batch.ids, batch.targets, batch.sources, batch.source_padding));
    for (const auto& [name, p] : model.named_parameters()) {
      const std::vector<double> g = p.grad().to_vector();
      double norm = 0;
      for (double v : g) norm += std::abs(v);
      EXPECT_GT(norm, 0.0) << name << " got no gradient";
    }
  }
}

void expect_error(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error, expected " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(EncoderDecoder, InterfaceErrors) {
  TransformerLM model(seq2seq_config(NormPlacement::Post));
  const TinyBatch batch = tiny_batch(model.config());
  const std::string needs = "[model] arch 'encoder_decoder' needs sources";
  expect_error([&] { model.forward(batch.ids); }, needs);
  expect_error([&] { model.loss(batch.ids, batch.targets); }, needs);
  expect_error([&] { model.training_loss(batch.ids, batch.targets); }, needs);
  expect_error([&] { model.forward(batch.ids, Tensor(), Tensor()); }, needs);
  expect_error([&] { model.forward(batch.ids, testing::random_ids(2, 7, 11, 1), Tensor()); },
               "[model] source length S = 7 must be in [1, context_length = 6]");
  expect_error([&] { model.forward(batch.ids, batch.sources, Tensor::zeros({2, 3}, DType::I32)); },
               "[model] source_padding");
  ModelConfig decoder = tiny_model_config(NormPlacement::Pre);
  TransformerLM lm(decoder);
  expect_error([&] { lm.forward(batch.ids, batch.sources, Tensor()); }, "[model] arch 'decoder' takes no sources");
  expect_error([&] { lm.encode(batch.sources, Tensor()); }, "[model] encode needs arch 'encoder_decoder'");
  for (const NormPlacement unsupported : {NormPlacement::DeepNorm, NormPlacement::Admin})
    expect_error([&] { TransformerLM m(seq2seq_config(unsupported)); },
                 fmt::format("arch 'encoder_decoder' does not support norm_placement '{}'", unsupported));
}

// model.encoder_layers: an encoder of 3 layers under a decoder of 1, gradchecked, with the layers
// each stack should have; encoder_layers = n_layers is the model of encoder_layers = 0, dropout masks
// included (the same training loss in training mode).
TEST(EncoderDecoder, SeparateEncoderAndDecoderDepths) {
  ModelConfig c = seq2seq_config(NormPlacement::Pre);
  c.n_layers = 1;
  c.encoder_layers = 3;
  expect_gradcheck_passes(make_model_case("seq2seq_deep_encoder", "", c));
  TransformerLM model(c);
  EXPECT_TRUE(has_name(model, "encoder.2.attn.q.weight"));
  EXPECT_FALSE(has_name(model, "encoder.3.attn.q.weight"));
  EXPECT_TRUE(has_name(model, "decoder.0.cross_attn.q.weight"));
  EXPECT_FALSE(has_name(model, "decoder.1.cross_attn.q.weight"));

  ModelConfig equal = seq2seq_config(NormPlacement::Post);
  equal.dropout = 0.3;
  ModelConfig explicit_equal = equal;
  explicit_equal.encoder_layers = equal.n_layers;
  TransformerLM a(equal), b(explicit_equal);
  const TinyBatch batch = tiny_batch(equal);
  EXPECT_EQ(a.loss(batch.ids, batch.targets, batch.sources, batch.source_padding).item(),
            b.loss(batch.ids, batch.targets, batch.sources, batch.source_padding).item());

  ModelConfig decoder_only = tiny_model_config(NormPlacement::Pre);
  decoder_only.encoder_layers = 2;
  EXPECT_THROW(TransformerLM{decoder_only}, Error);
}

}  // namespace
}  // namespace normlab
