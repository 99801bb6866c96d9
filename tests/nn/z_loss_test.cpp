// The z-loss (model.z_loss_coef): training_loss = cross-entropy + c * mean over the counted tokens of
// logsumexp(logits)^2, each term recomputed here by hand in long double from the model's logits;
// its gradient on the logits against the derived formula (2 c lse_t / N) softmax(x_t); and a
// whole-model gradcheck with it on, with and without ignored targets.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "core/ops.h"
#include "core/random.h"
#include "nn/model_cases.h"
#include "nn/transformer.h"

namespace normlab {
namespace {

constexpr double kCoef = 0.3;

struct HandLosses {
  double ce = 0, z = 0;  // means over the counted tokens
};

// Cross-entropy and mean lse^2 over the rows of logits (N, V) whose target is not -1.
HandLosses by_hand(const std::vector<double>& logits, const std::vector<int32_t>& targets, int64_t vocab) {
  HandLosses out;
  int counted = 0;
  for (size_t r = 0; r < targets.size(); ++r) {
    if (targets[r] == -1) continue;
    const double* row = logits.data() + r * static_cast<size_t>(vocab);
    long double sum = 0;
    for (int64_t j = 0; j < vocab; ++j) sum += std::exp(static_cast<long double>(row[j]));
    const double lse = static_cast<double>(std::log(sum));  // tiny logits: no shift needed here
    out.ce += lse - row[targets[r]];
    out.z += lse * lse;
    ++counted;
  }
  out.ce /= counted;
  out.z /= counted;
  return out;
}

ModelConfig z_config(double coef) {
  ModelConfig c = tiny_model_config(NormPlacement::Pre);
  c.z_loss_coef = coef;
  return c;
}

// Targets of tiny_batch with three positions ignored (-1), as the copy task's prompt positions.
Tensor with_ignored(const Tensor& targets) {
  std::vector<int32_t> t = targets.to_ints();
  t[0] = t[3] = t[7] = -1;
  return Tensor::from_ints(t, targets.shape());
}

TEST(ZLoss, TrainingLossIsCrossEntropyPlusCoefTimesMeanSquaredLse) {
  const ModelConfig c = z_config(kCoef);
  const TinyBatch batch = tiny_batch(c);
  for (const Tensor& targets : {batch.targets, with_ignored(batch.targets)}) {
    TransformerLM model(c);
    const std::vector<double> logits = model.forward(batch.ids).value().to_vector();  // (B,T,V)
    const HandLosses hand = by_hand(logits, targets.to_ints(), c.vocab_size);
    EXPECT_GT(hand.z, 1.0);  // lse ~ log 11: the term is not negligible
    EXPECT_NEAR(model.training_loss(batch.ids, targets).item(), hand.ce + kCoef * hand.z, 1e-12);
    EXPECT_NEAR(model.loss(batch.ids, targets).item(), hand.ce, 1e-12);  // validation: plain cross-entropy
  }
  TransformerLM off(z_config(0.0));
  EXPECT_EQ(off.training_loss(batch.ids, batch.targets).item(), off.loss(batch.ids, batch.targets).item());
}

// d/dx [c mean_t lse_t^2] = c (2 lse_t / N) softmax(x_t) on counted rows, 0 on ignored ones.
TEST(ZLoss, GradientOnTheLogitsIsTwoLseOverNTimesSoftmax) {
  Generator gen(5);
  const Tensor x = Tensor::randn({2, 3, 4}, gen, 0.0, 2.0, DType::F64);
  const Tensor targets = Tensor::from_ints({1, -1, 0, 3, 2, -1}, {2, 3});
  const Var xv = parameter(x);
  const Var loss = scale(z_loss(xv, targets, -1), kCoef);
  backward(loss);
  const std::vector<double> xs = x.to_vector(), dx = xv.grad().to_vector();
  const std::vector<double> p = ops::softmax(x, {}).to_vector();
  const std::vector<int32_t> t = targets.to_ints();
  const double n = 4;  // counted rows
  double z = 0;
  for (size_t r = 0; r < 6; ++r) {
    long double sum = 0;
    for (size_t j = 0; j < 4; ++j) sum += std::exp(static_cast<long double>(xs[4 * r + j]));
    const double lse = static_cast<double>(std::log(sum));
    if (t[r] != -1) z += lse * lse / n;
    for (size_t j = 0; j < 4; ++j) {
      const double expected = t[r] == -1 ? 0.0 : kCoef * 2.0 * lse / n * p[4 * r + j];
      EXPECT_NEAR(dx[4 * r + j], expected, 1e-14) << r << "," << j;
    }
  }
  EXPECT_NEAR(loss.item(), kCoef * z, 1e-14);
}

TEST(ZLoss, NoCountedTokenGivesZeroAndBadShapesOrCoefsThrow) {
  const Var x = parameter(Tensor::from_vector({1.0, 2.0, 3.0, 4.0}, {2, 2}, DType::F64));
  const Var z = z_loss(x, Tensor::from_ints({-1, -1}, {2}), -1);
  EXPECT_EQ(z.item(), 0.0);
  backward(z);
  for (const double g : x.grad().to_vector()) EXPECT_EQ(g, 0.0);
  try {
    z_loss(x, Tensor::from_ints({0, 1, 0}, {3}), -1);
    ADD_FAILURE() << "mismatched targets accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[z_loss]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(2, 2)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(TransformerLM{z_config(-0.1)}, Error);
  EXPECT_THROW(TransformerLM{z_config(INFINITY)}, Error);
  EXPECT_THROW(TransformerLM{z_config(NAN)}, Error);
}

void expect_passes(const OpCase& c) {
  const auto results = gradcheck(c.fn, c.make_inputs(0, {}), c.input_names, c.differentiable, c.options);
  ASSERT_EQ(results.size(), c.input_names.size());
  for (const InputCheck& r : results)
    EXPECT_TRUE(r.passed) << c.name << " " << r.input << ": max rel " << r.max_rel_error << " max abs "
                          << r.max_abs_error;
}

// Every parameter of a tiny float64 model against finite differences of its training loss with the
// z-loss on: the tiny batch as it is, then with ignored targets (the mask's path).
TEST(ZLoss, WholeModelGradcheck) {
  ModelConfig c = z_config(kCoef);
  c.norm_type = NormType::RmsNorm;
  expect_passes(make_model_case("z_loss", "", c));
  OpCase masked = make_model_case("z_loss_ignored", "", c);
  const TinyBatch batch = tiny_batch(c);
  const Tensor ids = batch.ids, targets = with_ignored(batch.targets);
  auto model = std::make_shared<TransformerLM>(c);  // its parameters are in make_model_case's order
  masked.fn = [model, ids, targets](const std::vector<Var>& params) {
    model->replace_parameters(params);
    return model->training_loss(ids, targets);
  };
  expect_passes(masked);
}

}  // namespace
}  // namespace normlab
