// The one training step (train/train_step.h): the bench's timed steps are the trainer's, so
// N bench steps on the trainer's batches leave the trainer's weights, bit for bit.
#include <gtest/gtest.h>

#include "train/checkpoint.h"
#include "train/step_timing.h"
#include "train/train_step.h"
#include "core/ops.h"
#include "trainer_test_util.h"

namespace normlab {
namespace {

using test::TinyRun;
using test::quiet_options;

// The weights after `time_training_steps` (2 warm-up + 3 timed + 1 memory step = the trainer's 6).
std::vector<std::vector<double>> bench_trained(const RunConfig& given) {
  RunConfig c = given;
  const std::unique_ptr<Dataset> data = make_dataset(c.data);
  c.model.vocab_size = data->vocab_size();
  TransformerLM model(c.model);
  model.train();
  const std::unique_ptr<Optimizer> optimizer = make_optimizer(c.optim, model.named_parameters());
  LossScaler scaler = make_loss_scaler(c.train);
  Learner learner{model, *optimizer, scaler};
  time_training_steps({.warmup = 2, .steps = 3, .profile = false, .measure_memory = true}, c, data.get(), learner);
  std::vector<std::vector<double>> weights;
  for (const auto& [name, p] : model.named_parameters()) weights.push_back(p.value().to_vector());
  return weights;
}

void expect_bench_equals_trainer(const std::vector<std::string>& overrides) {
  TinyRun t;
  std::vector<std::string> o = overrides;
  o.push_back("train.name=trained");
  const RunConfig c = t.config(o);
  ASSERT_EQ(c.train.steps, 6);
  train(c, quiet_options());
  const std::vector<std::vector<double>> got = bench_trained(c);
  RunConfig resolved = c;
  resolved.model.vocab_size = make_dataset(c.data)->vocab_size();
  TransformerLM trained(resolved.model);
  load_model_weights(t.run("trained").string(), trained);
  const TransformerLM initial(resolved.model);
  const auto want = trained.named_parameters(), init = initial.named_parameters();
  ASSERT_EQ(want.size(), got.size());
  bool moved = false;
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].first);
    EXPECT_EQ(got[i], want[i].second.value().to_vector());
    moved |= init[i].second.value().to_vector() != want[i].second.value().to_vector();
  }
  EXPECT_TRUE(moved);  // the comparison is of trained weights, not of two initialisations
}

// Dropout (the step's seed), clipping (a threshold the gradients exceed) and a schedule: each
// would tell a step that differs from the trainer's.
TEST(TrainStep, BenchStepsLeaveTheTrainersWeightsBitForBit) {
  expect_bench_equals_trainer({"model.dropout=0.1", "optim.grad_clip=0.05", "schedule.kind=cosine",
                               "schedule.warmup_steps=2"});
}

// fp16: the loss scale lives across steps (a fresh scaler each step would double it differently).
TEST(TrainStep, BenchStepsLeaveTheTrainersWeightsUnderFp16LossScaling) {
  expect_bench_equals_trainer({"train.precision=fp16", "train.loss_scale_growth_interval=2"});
}

// A diverged step changes nothing and leaves no gradient behind.
TEST(TrainStep, ADivergedStepDoesNotUpdate) {
  TinyRun t;
  RunConfig c = t.config({"train.divergence_loss=0.5"});
  const std::unique_ptr<Dataset> data = make_dataset(c.data);
  c.model.vocab_size = data->vocab_size();
  TransformerLM model(c.model);
  const std::unique_ptr<Optimizer> optimizer = make_optimizer(c.optim, model.named_parameters());
  LossScaler scaler = make_loss_scaler(c.train);
  Learner learner{model, *optimizer, scaler};
  const std::vector<double> before = model.named_parameters().front().second.value().to_vector();
  const StepResult r = train_step(learner, c, draw_batches(c, data.get(), 1).front(), 0);
  EXPECT_NE(r.divergence.find("train.divergence_loss"), std::string::npos) << r.divergence;
  EXPECT_EQ(model.named_parameters().front().second.value().to_vector(), before);
  for (const auto& [name, p] : model.named_parameters())
    EXPECT_TRUE(!p.grad().defined() || ops::sum_squares(p.grad()) == 0.0) << name;
}

}  // namespace
}  // namespace normlab
