// model.arch = "encoder_decoder" (fairseq's Transformer): whole-model gradchecks in float64 with a
// padded source (post, pre, and the other supported placements), the padding and causality
// invariants of its logits, encode/decode against forward, its parameter names and the errors of
// the interface. The independent reference (torch.nn.Transformer layers) is
// encoder_decoder_parity_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "core/random.h"
#include "nn/block.h"
#include "nn/init.h"
#include "nn/model_cases.h"
#include "nn/placement.h"
#include "nn/seq2seq_layer.h"
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
}

// DeepNorm and Admin in the encoder-decoder take each stack's constants: DeepNet's Table 1 for
// N = 2 encoder and M = 3 decoder layers (encoder alpha 0.81 (N^4 M)^(1/16), beta 0.87 (N^4 M)^(-1/16);
// decoder alpha (3M)^(1/4), beta (12M)^(-1/4)) and Admin's omega over each stack's residual
// sub-layers (4 and 9). DeepNorm's init is Post-LN's draw times the stack's beta for v, o and the
// FFN (the same generator, so elementwise), 1 for q and k; both placements gradcheck.
TEST(EncoderDecoder, DeepNormAndAdminTakeEachStacksConstants) {
  ModelConfig c = seq2seq_config(NormPlacement::DeepNorm);
  c.n_layers = 3;
  c.encoder_layers = 2;
  const double enc_beta = 0.87 * std::pow(16.0 * 3.0, -1.0 / 16), dec_beta = std::pow(36.0, -0.25);
  EXPECT_NEAR(Seq2SeqLayer(c, 0, false).shortcut_scale(), 0.81 * std::pow(48.0, 1.0 / 16), 1e-14);
  EXPECT_NEAR(Seq2SeqLayer(c, 1, true).shortcut_scale(), std::pow(9.0, 0.25), 1e-14);
  ModelConfig post = c;
  post.norm_placement = NormPlacement::Post;
  const auto deep = TransformerLM(c).named_parameters(), plain = TransformerLM(post).named_parameters();
  ASSERT_EQ(deep.size(), plain.size());
  for (size_t i = 0; i < deep.size(); ++i) {
    const std::string& name = deep[i].first;
    const bool scaled = name.find(".ffn.w") != std::string::npos || name.find("attn.v.weight") != std::string::npos ||
                        name.find("attn.o.weight") != std::string::npos;
    const double beta = !scaled ? 1.0 : name.rfind("encoder.", 0) == 0 ? enc_beta : dec_beta;
    const std::vector<double> a = deep[i].second.value().to_vector(), b = plain[i].second.value().to_vector();
    for (size_t j = 0; j < a.size(); ++j) ASSERT_NEAR(a[j], beta * b[j], 1e-14 * std::abs(b[j]) + 1e-300) << name;
  }
  c.norm_placement = NormPlacement::Admin;
  EXPECT_NEAR(Seq2SeqLayer(c, 0, false).shortcut_scale(), std::sqrt(5 / std::log(5.0) - 1), 1e-14);
  EXPECT_NEAR(Seq2SeqLayer(c, 0, true).shortcut_scale(), std::sqrt(10 / std::log(10.0) - 1), 1e-14);
  for (const NormPlacement p : {NormPlacement::DeepNorm, NormPlacement::Admin})
    expect_gradcheck_passes(make_model_case(fmt::format("seq2seq_{}", p), "", seq2seq_config(p)));
}

// Every row of the placement table wires an encoder layer as it wires a block of arch "encoder"
// (both bidirectional, the same children): with the block's parameters copied into the layer, the
// outputs agree bit for bit (DeepNorm's constants differ by stack, so its scale is compared).
TEST(EncoderDecoder, EveryPlacementRowWiresTheEncoderAsTheBlocks) {
  for (const PlacementKind* row : placement_kinds()) {
    SCOPED_TRACE(row->name);
    ModelConfig c = seq2seq_config(row->placement);
    c.n_layers = 8;  // Mix-LN: layers 0 and 1 Post-LN, the rest Pre-LN
    c.dropout = 0.0;
    ModelConfig single = c;
    single.arch = ModelArch::Encoder;
    for (const int64_t l : {0, 5}) {
      Block block(single, l);
      Seq2SeqLayer layer(c, l, false);
      initialize_parameters(block, single);
      const auto from = block.named_parameters();
      std::vector<Var> params;
      for (const auto& [name, p] : from) params.push_back(p);
      ASSERT_EQ(layer.named_parameters().size(), from.size());
      layer.replace_parameters(params);
      Generator gen(7 + l);
      const Var x = constant(Tensor::randn({2, 5, c.d_model}, gen, 0.0, 1.0, DType::F64));
      const double scale = block.shortcut_scale();
      if (scale != layer.shortcut_scale()) {
        EXPECT_EQ(row->placement, NormPlacement::DeepNorm);
        continue;
      }
      EXPECT_EQ(layer.forward(x, Tensor(), 0).value().to_vector(), block.forward(x, 0).value().to_vector()) << l;
    }
  }
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
