// Global-norm gradient clipping and the learning-rate schedules at known steps.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "optim/optimizer.h"
#include "optim/schedule.h"

namespace normlab {
namespace {

struct ClipFixture {
  Var a = parameter(Tensor::zeros({2}, DType::F64), "a");
  Var b = parameter(Tensor::zeros({1}, DType::F64), "b");
  Var no_grad = parameter(Tensor::zeros({1}, DType::F64), "c");
  ClipFixture() {
    a.grad() = Tensor::from_vector({3.0, 4.0}, {2}, DType::F64);
    b.grad() = Tensor::from_vector({12.0}, {1}, DType::F64);  // global norm sqrt(9+16+144) = 13
  }
  std::vector<Var> params() const { return {a, b, no_grad}; }
};

TEST(ClipGradNorm, ScalesToMaxNormAndReturnsPreClipNorm) {
  ClipFixture f;
  EXPECT_DOUBLE_EQ(clip_grad_norm(f.params(), 6.5), 13.0);
  EXPECT_EQ(f.a.grad().to_vector(), (std::vector<double>{1.5, 2.0}));
  EXPECT_EQ(f.b.grad().to_vector(), (std::vector<double>{6.0}));
  EXPECT_FALSE(f.no_grad.grad().defined());
  EXPECT_NEAR(clip_grad_norm(f.params(), 100.0), 6.5, 1e-12);  // now the clipped norm
}

TEST(ClipGradNorm, LeavesSmallNormsAndZeroThresholdAlone) {
  ClipFixture f;
  EXPECT_DOUBLE_EQ(clip_grad_norm(f.params(), 20.0), 13.0);
  EXPECT_EQ(f.b.grad().to_vector(), (std::vector<double>{12.0}));
  EXPECT_DOUBLE_EQ(clip_grad_norm(f.params(), 0.0), 13.0);
  EXPECT_EQ(f.a.grad().to_vector(), (std::vector<double>{3.0, 4.0}));
}

ScheduleConfig sched(const std::string& kind, int64_t warmup, double min_lr = 0.0) {
  ScheduleConfig s;
  s.kind = enum_value<ScheduleKind>(kind, "sched");
  s.warmup_steps = warmup;
  s.min_lr = min_lr;
  return s;
}

TEST(Schedule, WarmupStartsAboveZeroAndEndsAtLrMax) {
  for (const char* kind : {"constant", "inverse_sqrt", "linear", "cosine"}) {
    const auto s = sched(kind, 100);
    EXPECT_DOUBLE_EQ(learning_rate(s, 1e-3, 0, 1000), 1e-3 / 100) << kind;
    EXPECT_DOUBLE_EQ(learning_rate(s, 1e-3, 49, 1000), 1e-3 * 50 / 100) << kind;
    EXPECT_DOUBLE_EQ(learning_rate(s, 1e-3, 99, 1000), 1e-3) << kind;  // end of warmup
  }
}

TEST(Schedule, NoWarmupStartsAtLrMax) {
  for (const char* kind : {"constant", "inverse_sqrt", "linear", "cosine"})
    EXPECT_DOUBLE_EQ(learning_rate(sched(kind, 0), 2e-3, 0, 1000), 2e-3) << kind;
}

TEST(Schedule, ConstantStaysAtLrMax) {
  EXPECT_DOUBLE_EQ(learning_rate(sched("constant", 10), 1e-3, 5000, 100), 1e-3);
}

TEST(Schedule, InverseSqrtHalvesAtFourTimesWarmup) {
  const auto s = sched("inverse_sqrt", 100);
  // Counting the step being taken (step + 1), as warmup does: step + 1 = 400 is 4 * warmup.
  EXPECT_DOUBLE_EQ(learning_rate(s, 1e-3, 399, 0), 0.5e-3);
  EXPECT_DOUBLE_EQ(learning_rate(s, 1e-3, 1599, 0), 0.25e-3);
  EXPECT_LT(learning_rate(s, 1e-3, 100, 0), 1e-3);
}

// decay_every E: the inverse-sqrt law per epoch of E steps (Xiong et al.'s no-warmup runs keep
// lr_max for the whole first epoch); E = 1 is the per-step law above.
TEST(Schedule, InverseSqrtPerEpoch) {
  auto s = sched("inverse_sqrt", 1);
  s.decay_every = 100;
  EXPECT_DOUBLE_EQ(learning_rate(s, 1e-3, 0, 0), 1e-3);
  EXPECT_DOUBLE_EQ(learning_rate(s, 1e-3, 99, 0), 1e-3);               // still epoch 1
  EXPECT_DOUBLE_EQ(learning_rate(s, 1e-3, 100, 0), 1e-3 / std::sqrt(2.0));  // epoch 2
  EXPECT_DOUBLE_EQ(learning_rate(s, 1e-3, 399, 0), 0.5e-3);            // epoch 4
  s.warmup_steps = 400;  // four warmup epochs: lr_max through epoch 4, then sqrt(4 / e)
  EXPECT_DOUBLE_EQ(learning_rate(s, 1e-3, 399, 0), 1e-3);
  EXPECT_DOUBLE_EQ(learning_rate(s, 1e-3, 400, 0), 1e-3 * std::sqrt(4.0 / 5.0));
  EXPECT_DOUBLE_EQ(learning_rate(s, 1e-3, 1599, 0), 0.5e-3);  // epoch 16
  s.warmup_steps = 50;  // warmup shorter than an epoch: lr_max to the end of epoch 1
  EXPECT_DOUBLE_EQ(learning_rate(s, 1e-3, 99, 0), 1e-3);
  EXPECT_DOUBLE_EQ(learning_rate(s, 1e-3, 399, 0), 0.5e-3);
  s.decay_every = 1;  // the per-step law
  EXPECT_DOUBLE_EQ(learning_rate(s, 1e-3, 199, 0), 1e-3 * 0.5);
  s.decay_every = 0;
  EXPECT_THROW(learning_rate(s, 1e-3, 100, 0), Error);
}

// decay_start D: every warmup arm holds lr_max up to step + 1 = D and then follows the same curve
// lr_max sqrt(D / (step + 1)); decay_factor f multiplies the rate after D (a drop).
TEST(Schedule, InverseSqrtDecayStartMakesWarmupArmsMeetAfterIt) {
  auto none = sched("inverse_sqrt", 1), longer = sched("inverse_sqrt", 400);
  none.decay_start = longer.decay_start = 400;
  EXPECT_DOUBLE_EQ(learning_rate(none, 1e-3, 0, 0), 1e-3);
  EXPECT_DOUBLE_EQ(learning_rate(none, 1e-3, 399, 0), 1e-3);  // lr_max through step + 1 = D
  EXPECT_DOUBLE_EQ(learning_rate(longer, 1e-3, 199, 0), 0.5e-3);  // still warming up
  for (const int64_t step : {400, 401, 799, 1599, 1999}) {
    EXPECT_DOUBLE_EQ(learning_rate(none, 1e-3, step, 0), learning_rate(longer, 1e-3, step, 0)) << step;
    EXPECT_LT(learning_rate(none, 1e-3, step, 0), 1e-3) << step;
  }
  EXPECT_DOUBLE_EQ(learning_rate(none, 1e-3, 1599, 0), 0.5e-3);  // sqrt(400 / 1600)
  none.decay_start = 0;  // fairseq's literal inverse_sqrt with T_warmup = 1: decays from the first step
  EXPECT_DOUBLE_EQ(learning_rate(none, 1e-3, 99, 0), 1e-4);
  auto drop = sched("inverse_sqrt", 1);
  drop.decay_start = 800;
  drop.decay_factor = 0.1;
  EXPECT_DOUBLE_EQ(learning_rate(drop, 1e-3, 799, 0), 1e-3);
  EXPECT_DOUBLE_EQ(learning_rate(drop, 1e-3, 800, 0), 1e-4 * std::sqrt(800.0 / 801.0));
  EXPECT_DOUBLE_EQ(learning_rate(drop, 1e-3, 3199, 0), 0.5e-4);
  drop.decay_factor = 0;
  EXPECT_THROW(learning_rate(drop, 1e-3, 900, 0), Error);
}

TEST(Schedule, LinearDecay) {
  const auto s = sched("linear", 100, 1e-4);
  EXPECT_DOUBLE_EQ(learning_rate(s, 1e-3, 100, 1100), 1e-3);
  EXPECT_DOUBLE_EQ(learning_rate(s, 1e-3, 600, 1100), 0.5 * (1e-3 + 1e-4));  // halfway
  EXPECT_DOUBLE_EQ(learning_rate(s, 1e-3, 1100, 1100), 1e-4);
  EXPECT_DOUBLE_EQ(learning_rate(s, 1e-3, 5000, 1100), 1e-4);  // clamped
}

TEST(Schedule, CosineDecay) {
  const auto s = sched("cosine", 0, 1e-5);
  EXPECT_DOUBLE_EQ(learning_rate(s, 1e-3, 0, 1000), 1e-3);
  EXPECT_NEAR(learning_rate(s, 1e-3, 500, 1000), 0.5 * (1e-3 + 1e-5), 1e-15);
  EXPECT_NEAR(learning_rate(s, 1e-3, 250, 1000), 1e-5 + 0.5 * (1e-3 - 1e-5) * (1 + std::cos(M_PI / 4)), 1e-15);
  EXPECT_DOUBLE_EQ(learning_rate(s, 1e-3, 1000, 1000), 1e-5);  // min_lr at total
}

TEST(Schedule, ErrorsNameTheProblem) {
  try {
    learning_rate(sched("exponential", 0), 1e-3, 0, 10);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'exponential'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(learning_rate(sched("cosine", 100), 1e-3, 0, 50), Error);  // total <= warmup
  EXPECT_THROW(learning_rate(sched("constant", -1), 1e-3, 0, 50), Error);
}

// Each element beyond the bound is clamped to it with its sign; the others and non-finite ones
// (the divergence check must see them) are left alone; the count says how many changed.
TEST(ClipGradValue, ClampsEachElementAndCountsThem) {
  Var a = parameter(Tensor::from_vector({3.0, -0.5, -7.0}, {3}, DType::F64), "a");
  Var b = parameter(Tensor::from_vector({0.25, NAN}, {2}, DType::F64), "b");
  a.grad() = a.value().clone();
  b.grad() = b.value().clone();
  EXPECT_EQ(clip_grad_value({a, b}, 1.0), 2);
  const std::vector<double> ga = a.grad().to_vector(), gb = b.grad().to_vector();
  EXPECT_EQ(ga[0], 1.0);
  EXPECT_EQ(ga[1], -0.5);
  EXPECT_EQ(ga[2], -1.0);
  EXPECT_EQ(gb[0], 0.25);
  EXPECT_TRUE(std::isnan(gb[1]));
  EXPECT_THROW(clip_grad_value({a}, 0.0), Error);
}

}  // namespace
}  // namespace normlab
