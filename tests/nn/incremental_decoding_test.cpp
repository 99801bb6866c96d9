// Incremental decoding of model.arch "encoder_decoder" (TransformerLM::start_decoding and
// decode_step, each decoder layer's keys and values cached): each step's logits against decode()
// of the whole prefix, the reference made of the training path's plain calls, in float64 for every
// placement and attention variant the encoder-decoder builds; a beam's row selection; the errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/tape.h"
#include "core/random.h"
#include "nn/transformer.h"
#include "nn_test_util.h"

namespace normlab {
namespace {

using testing::small_config;

ModelConfig seq2seq_config(const std::string& placement) {
  ModelConfig c = small_config(placement);
  c.arch = ModelArch::EncoderDecoder;
  c.dtype = ParamDType::Float64;
  c.context_length = 8;
  c.n_heads = 4;
  c.position_embedding = PositionEmbedding::Sinusoidal;
  c.embedding_scale = EmbeddingScale::SqrtD;
  c.ffn_type = FfnType::Relu;
  return c;
}

// Every parameter moved off its init by 0.1 N(0,1), so that no norm gain is an exact 1.
void perturb(TransformerLM& model, uint64_t seed) {
  Generator gen(seed);
  for (Var& p : model.parameters()) {
    const std::vector<double> noise = Tensor::randn(p.value().shape(), gen, 0.0, 0.1, DType::F64).to_vector();
    std::vector<double> v = p.value().to_vector();
    for (size_t i = 0; i < v.size(); ++i) v[i] += noise[i];
    p.value().copy_(Tensor::from_vector(v, p.value().shape(), p.value().dtype()));
  }
}

struct Batch3 {
  Tensor sources, padding, ids;  // (3,6), (3,6), (3,7)
};

// Three sources of 6 positions, the second padded after 4 tokens, the third after 2; decoder ids
// of 7 positions (BOS 0 first).
Batch3 batch3(int64_t vocab) {
  Generator gen(11);
  std::vector<int32_t> sources, padding, ids;
  for (int row = 0; row < 3; ++row) {
    const int tokens = 6 - 2 * row;
    for (int s = 0; s < 6; ++s) {
      sources.push_back(s < tokens ? static_cast<int32_t>(2 + gen.next_u64() % (vocab - 2)) : 1);
      padding.push_back(s < tokens ? 0 : 1);
    }
    for (int t = 0; t < 7; ++t) ids.push_back(t == 0 ? 0 : static_cast<int32_t>(2 + gen.next_u64() % (vocab - 2)));
  }
  return {Tensor::from_ints(sources, {3, 6}), Tensor::from_ints(padding, {3, 6}), Tensor::from_ints(ids, {3, 7})};
}

// Columns [0, t) of ids (B,T).
Tensor prefix(const Tensor& ids, int64_t t) {
  const std::vector<int32_t> all = ids.to_ints();
  const int64_t b = ids.size(0), width = ids.size(1);
  std::vector<int32_t> out;
  for (int64_t r = 0; r < b; ++r) out.insert(out.end(), all.begin() + r * width, all.begin() + r * width + t);
  return Tensor::from_ints(out, {b, t});
}

// Column t of ids (B,T) as (B,1).
Tensor column(const Tensor& ids, int64_t t) {
  const std::vector<int32_t> all = ids.to_ints();
  std::vector<int32_t> out;
  for (int64_t r = 0; r < ids.size(0); ++r) out.push_back(all[static_cast<size_t>(r * ids.size(1) + t)]);
  return Tensor::from_ints(out, {ids.size(0), 1});
}

// A model of `config` perturbed by `seed`, in eval mode without the tape, with batch3 encoded and
// its decoding started.
struct DecodingCase {
  NoGradGuard no_grad;
  TransformerLM model;
  Batch3 batch;
  Var memory;
  DecoderState state;
  DecodingCase(const ModelConfig& config, uint64_t seed) : model(config), batch(batch3(config.vocab_size)) {
    perturb(model, seed);
    model.eval();
    memory = model.encode(batch.sources, batch.padding);
    state = model.start_decoding(memory, batch.padding);
  }
};

// The largest |step logits - decode()'s logits at the last position of the prefix| over every
// step of batch3.
double max_step_error(const ModelConfig& config) {
  DecodingCase d(config, 5);
  TransformerLM& model = d.model;
  const Batch3& b = d.batch;
  const Var& memory = d.memory;
  DecoderState& state = d.state;
  double worst = 0.0;
  for (int64_t t = 0; t < b.ids.size(1); ++t) {
    const std::vector<double> step = model.decode_step(column(b.ids, t), state).value().to_vector();  // (3,1,V)
    const Tensor full = model.decode(prefix(b.ids, t + 1), memory, b.padding).value();                 // (3,t+1,V)
    const std::vector<double> all = full.to_vector();
    const auto v = static_cast<size_t>(config.vocab_size);
    for (size_t r = 0; r < 3; ++r)
      for (size_t j = 0; j < v; ++j)
        worst = std::max(worst, std::abs(step[r * v + j] - all[(r * static_cast<size_t>(t + 1) + t) * v + j]));
  }
  EXPECT_EQ(state.length, b.ids.size(1));
  return worst;
}

TEST(IncrementalDecoding, EachStepEqualsDecodeOfTheWholePrefixInEveryPlacement) {
  for (const char* placement : {"post", "pre", "none", "sandwich"})
    EXPECT_LT(max_step_error(seq2seq_config(placement)), 1e-12) << placement;
}

TEST(IncrementalDecoding, LearnedPositionsRopeGroupedKeysAndQkNormUntiedHead) {
  ModelConfig learned = seq2seq_config("pre");
  learned.position_embedding = PositionEmbedding::Learned;
  learned.tie_embeddings = false;
  EXPECT_LT(max_step_error(learned), 1e-12);
  ModelConfig rope = seq2seq_config("sandwich");
  rope.position_embedding = PositionEmbedding::Rope;  // the decoder's self-attention only
  rope.norm_type = NormType::RmsNorm;
  rope.n_kv_heads = 2;  // two query heads per key/value head
  rope.qk_norm = true;
  EXPECT_LT(max_step_error(rope), 1e-12);
}

TEST(IncrementalDecoding, SelectedRowsContinueTheirOwnPrefixes) {
  const ModelConfig config = seq2seq_config("post");
  DecodingCase d(config, 6);
  TransformerLM& model = d.model;
  const Batch3& b = d.batch;
  DecoderState& state = d.state;
  for (int64_t t = 0; t < 3; ++t) model.decode_step(column(b.ids, t), state);
  // Rows 2, 0, 0 continue: the reference decodes their 4-token prefixes against their own sources.
  state.select_rows({2, 0, 0});
  const std::vector<int32_t> ids = b.ids.to_ints(), sources = b.sources.to_ints(), padding = b.padding.to_ints();
  std::vector<int32_t> ref_ids, ref_sources, ref_padding, newest;
  for (const int r : {2, 0, 0}) {
    ref_ids.insert(ref_ids.end(), ids.begin() + r * 7, ids.begin() + r * 7 + 4);
    ref_sources.insert(ref_sources.end(), sources.begin() + r * 6, sources.begin() + r * 6 + 6);
    ref_padding.insert(ref_padding.end(), padding.begin() + r * 6, padding.begin() + r * 6 + 6);
    newest.push_back(ids[static_cast<size_t>(r * 7 + 3)]);
  }
  const std::vector<double> step = model.decode_step(Tensor::from_ints(newest, {3, 1}), state).value().to_vector();
  const Tensor ref_pad = Tensor::from_ints(ref_padding, {3, 6});
  const Var ref_memory = model.encode(Tensor::from_ints(ref_sources, {3, 6}), ref_pad);
  const std::vector<double> full = model.decode(Tensor::from_ints(ref_ids, {3, 4}), ref_memory, ref_pad).value().to_vector();
  const auto v = static_cast<size_t>(config.vocab_size);
  for (size_t r = 0; r < 3; ++r)
    for (size_t j = 0; j < v; ++j) EXPECT_NEAR(step[r * v + j], full[(r * 4 + 3) * v + j], 1e-12) << r << " " << j;
  EXPECT_THROW(state.select_rows({3}), Error);
}

TEST(IncrementalDecoding, RefusesTheTapeTrainingModeAndAFullContext) {
  ModelConfig config = seq2seq_config("pre");
  config.context_length = 7;
  TransformerLM model(config);
  const Batch3 b = batch3(config.vocab_size);
  {
    NoGradGuard no_grad;
    const Var memory = model.encode(b.sources, b.padding);
    EXPECT_THROW(model.start_decoding(memory, b.padding), Error);  // training mode: dropout would differ
  }
  model.eval();
  const Var memory = [&] {
    NoGradGuard no_grad;
    return model.encode(b.sources, b.padding);
  }();
  EXPECT_THROW(model.start_decoding(memory, b.padding), Error);  // the tape is on
  NoGradGuard no_grad;
  DecoderState state = model.start_decoding(memory, b.padding);
  EXPECT_THROW(model.decode_step(prefix(b.ids, 2), state), Error);  // (B,2): one position per step
  for (int64_t t = 0; t < 7; ++t) model.decode_step(column(b.ids, t), state);
  EXPECT_THROW(model.decode_step(column(b.ids, 0), state), Error);  // context_length 7 is full
}

}  // namespace
}  // namespace normlab
