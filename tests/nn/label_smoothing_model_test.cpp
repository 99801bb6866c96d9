// model.label_smoothing: training_loss is fairseq's label-smoothed cross-entropy of the model's
// logits, recomputed here by hand in long double, in a decoder and in an encoder-decoder; loss()
// (validation) stays plain cross-entropy.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "nn/model_cases.h"
#include "nn/transformer.h"

namespace normlab {
namespace {

constexpr double kEpsilon = 0.1;

struct HandLosses {
  double ce = 0, smoothed = 0;  // means over the counted tokens
};

// Per counted row: -log p_target, and (1 - eps - eps_i)(-log p_target) + eps_i sum_j (-log p_j)
// with eps_i = eps / (V - 1).
HandLosses by_hand(const std::vector<double>& logits, const std::vector<int32_t>& targets, int64_t vocab) {
  HandLosses out;
  const long double eps_i = kEpsilon / static_cast<long double>(vocab - 1);
  int counted = 0;
  for (size_t r = 0; r < targets.size(); ++r) {
    if (targets[r] == -1) continue;
    const double* row = logits.data() + r * static_cast<size_t>(vocab);
    long double sum = 0, all_nll = 0;
    for (int64_t j = 0; j < vocab; ++j) sum += std::exp(static_cast<long double>(row[j]));
    const long double lse = std::log(sum);
    for (int64_t j = 0; j < vocab; ++j) all_nll += lse - row[j];
    const long double nll = lse - row[targets[r]];
    out.ce += static_cast<double>(nll);
    out.smoothed += static_cast<double>((1 - kEpsilon - eps_i) * nll + eps_i * all_nll);
    ++counted;
  }
  out.ce /= counted;
  out.smoothed /= counted;
  return out;
}

TEST(LabelSmoothing, TrainingLossIsSmoothedValidationLossIsPlain) {
  for (const ModelArch arch : {ModelArch::Decoder, ModelArch::EncoderDecoder}) {
    ModelConfig c = tiny_model_config(NormPlacement::Post);
    c.arch = arch;
    c.label_smoothing = kEpsilon;
    const TinyBatch b = tiny_batch(c);
    std::vector<int32_t> targets = b.targets.to_ints();
    targets[1] = -1;  // one ignored position
    const Tensor t = Tensor::from_ints(targets, b.targets.shape());
    TransformerLM model(c);
    const std::vector<double> logits = model.forward(b.ids, b.sources, b.source_padding).value().to_vector();
    const HandLosses hand = by_hand(logits, targets, c.vocab_size);
    EXPECT_GT(std::abs(hand.smoothed - hand.ce), 1e-3) << "the smoothing term must show";
    EXPECT_NEAR(model.training_loss(b.ids, t, b.sources, b.source_padding).item(), hand.smoothed, 1e-12);
    EXPECT_NEAR(model.loss(b.ids, t, b.sources, b.source_padding).item(), hand.ce, 1e-12);
  }
}

}  // namespace
}  // namespace normlab
