// model.arch = "encoder": bidirectional self-attention in every norm placement. Every position
// sees every token, so changing the last token moves the logits at position 0, while a decoder
// of the same weights keeps them bit-identical; in the backward, a loss at position 0 alone reaches
// every position's embedding. Otherwise it is the decoder's attention (same 1 / sqrt(D) scale):
// in a one-block model the last position, which sees every key either way, gets the same logits.
// The whole-model gradchecks of encoders are the registered cases model_encoder_post/_pre
// (gradcheck_test.cpp).
#include <gtest/gtest.h>

#include <cmath>

#include "autograd/ops.h"
#include "nn/transformer.h"
#include "nn_test_util.h"

namespace normlab {
namespace {

using testing::random_ids;
using testing::small_config;

// ids with the last token of every sequence replaced by another.
Tensor change_last(const Tensor& ids, int64_t vocab) {
  const std::vector<double> v = ids.to_vector();
  std::vector<int32_t> out(v.begin(), v.end());
  const int64_t T = ids.size(1);
  for (size_t i = T - 1; i < out.size(); i += static_cast<size_t>(T))
    out[i] = static_cast<int32_t>((out[i] + 1) % vocab);
  return Tensor::from_ints(out, ids.shape());
}

// Per sequence: the summed absolute change of the logits at position 0 when the last token changes.
std::vector<double> first_position_moves(TransformerLM& model) {
  const ModelConfig& c = model.config();
  const int64_t B = 2, T = c.context_length, V = c.vocab_size;
  const Tensor ids = random_ids(B, T, V, 1);
  const std::vector<double> base = model.forward(ids).value().to_vector();
  const std::vector<double> other = model.forward(change_last(ids, V)).value().to_vector();
  std::vector<double> moved(static_cast<size_t>(B), 0.0);
  for (int64_t s = 0; s < B; ++s)
    for (int64_t i = 0; i < V; ++i) moved[s] += std::abs(base[s * T * V + i] - other[s * T * V + i]);
  return moved;
}

ModelConfig with_arch(ModelConfig c, ModelArch arch) {
  c.arch = arch;
  return c;
}

TEST(Encoder, SeesTheFutureInEveryPlacementWhereTheDecoderDoesNot) {
  for (const std::string& placement : enum_names<NormPlacement>()) {
    SCOPED_TRACE(placement);
    ModelConfig c = small_config(placement);
    c.dtype = ParamDType::Float64;
    TransformerLM encoder(with_arch(c, ModelArch::Encoder)), decoder(with_arch(c, ModelArch::Decoder));
    for (const double moved : first_position_moves(encoder)) EXPECT_GT(moved, 1e-6) << "position 0 ignores the last token";
    for (const double moved : first_position_moves(decoder)) EXPECT_EQ(moved, 0.0) << "the decoder sees the future";
  }
}

TEST(Encoder, OneBlockLastPositionMatchesTheDecoder) {
  for (const std::string placement : {"post", "pre"}) {
    ModelConfig c = small_config(placement);
    c.dtype = ParamDType::Float64;
    c.n_layers = 1;
    TransformerLM encoder(with_arch(c, ModelArch::Encoder)), decoder(with_arch(c, ModelArch::Decoder));  // same seed
    const int64_t B = 2, T = c.context_length, V = c.vocab_size;
    const Tensor ids = random_ids(B, T, V, 1);
    const std::vector<double> a = decoder.forward(ids).value().to_vector();
    const std::vector<double> b = encoder.forward(ids).value().to_vector();
    for (int64_t s = 0; s < B; ++s)
      for (int64_t i = (s * T + T - 1) * V; i < (s * T + T) * V; ++i)
        EXPECT_NEAR(a[i], b[i], 1e-12 * (1 + std::abs(a[i]))) << placement;
  }
}

// A loss at position 0 only (targets -1 elsewhere, as masked-LM targets) gives every row of the
// position table a gradient in the encoder, and only row 0 one in the decoder.
TEST(Encoder, LossAtOnePositionReachesEveryPosition) {
  for (const ModelArch arch : {ModelArch::Encoder, ModelArch::Decoder}) {
    SCOPED_TRACE(enum_name(arch));
    TransformerLM model(with_arch(small_config("pre"), arch));
    const int64_t B = 2, T = model.config().context_length, C = model.config().d_model;
    std::vector<int32_t> targets(static_cast<size_t>(B * T), -1);
    targets[0] = 3;
    targets[T] = 5;
    backward(model.loss(random_ids(B, T, model.config().vocab_size, 2), Tensor::from_ints(targets, {B, T})));
    for (const auto& [name, p] : model.named_parameters()) {
      if (name != "pos_emb.weight") continue;
      const std::vector<double> g = p.grad().to_vector();
      for (int64_t t = 0; t < T; ++t) {
        double norm = 0;
        for (int64_t i = 0; i < C; ++i) norm += std::abs(g[t * C + i]);
        if (arch == ModelArch::Encoder || t == 0) EXPECT_GT(norm, 0.0) << "row " << t;
        else EXPECT_EQ(norm, 0.0) << "row " << t;
      }
    }
  }
}

}  // namespace
}  // namespace normlab
