// Dynamic loss scaling (optim/loss_scaler.h): unscaling, skipping, halving and growth.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "optim/loss_scaler.h"

namespace normlab {
namespace {

struct Grads {
  Var a = parameter(Tensor::zeros({2}), "a");
  Var b = parameter(Tensor::zeros({1}), "b");
  void set(double a0, double a1, double b0) {
    a.grad() = Tensor::from_vector({a0, a1}, {2});
    b.grad() = Tensor::from_vector({b0}, {1});
  }
  std::vector<Var> params() const { return {a, b}; }
};

TEST(LossScaler, UnscalesFiniteGradientsAndGrowsAfterTheInterval) {
  LossScaler scaler({true, 1024.0, 3});
  Grads g;
  for (int step = 0; step < 3; ++step) {
    EXPECT_EQ(scaler.scale(), 1024.0) << step;
    g.set(2048.0, -512.0, 3.0);
    EXPECT_TRUE(scaler.unscale(g.params()));
    EXPECT_EQ(g.a.grad().to_vector(), (std::vector<double>{2.0, -0.5}));
    EXPECT_EQ(g.b.grad().to_vector()[0], 3.0 / 1024.0);
    scaler.update(true);
  }
  EXPECT_EQ(scaler.scale(), 2048.0);  // 3 clean steps: doubled
  EXPECT_EQ(scaler.state().clean_steps, 0);
  EXPECT_EQ(scaler.state().skipped_steps, 0);
}

TEST(LossScaler, AnOverflowHalvesTheScaleAndRestartsTheCount) {
  LossScaler scaler({true, 1024.0, 3});
  Grads g;
  g.set(1.0, 1.0, 1.0);
  scaler.unscale(g.params());
  scaler.update(true);
  g.set(1.0, std::numeric_limits<double>::infinity(), 1.0);
  EXPECT_FALSE(scaler.unscale(g.params()));
  scaler.update(false);
  EXPECT_EQ(scaler.scale(), 512.0);
  EXPECT_EQ(scaler.state().clean_steps, 0);
  EXPECT_EQ(scaler.state().skipped_steps, 1);
  g.set(NAN, 0.0, 0.0);
  EXPECT_FALSE(scaler.unscale(g.params()));
  scaler.update(false);
  EXPECT_EQ(scaler.scale(), 256.0);
  EXPECT_EQ(scaler.state().skipped_steps, 2);
}

TEST(LossScaler, DisabledChangesNothing) {
  LossScaler scaler;  // bf16 / fp32: the gradient norm sees non-finite gradients, not the scaler
  Grads g;
  g.set(3.0, 4.0, 5.0);
  EXPECT_TRUE(scaler.unscale(g.params()));
  EXPECT_EQ(g.a.grad().to_vector(), (std::vector<double>{3.0, 4.0}));
  g.set(3.0, INFINITY, 5.0);
  EXPECT_TRUE(scaler.unscale(g.params()));
  EXPECT_TRUE(std::isinf(g.a.grad().to_vector()[1]));
  scaler.update(false);
  EXPECT_EQ(scaler.scale(), 1.0);
  EXPECT_EQ(scaler.state().skipped_steps, 0);
}

TEST(LossScaler, RejectsBadStateAndConfig) {
  EXPECT_THROW(LossScaler({true, 0.0, 3}), Error);
  EXPECT_THROW(LossScaler({true, 1.0, 0}), Error);
  LossScaler scaler({true, 8.0, 3});
  EXPECT_THROW(scaler.set_state({-1.0, 0, 0}), Error);
  EXPECT_THROW(scaler.set_state({INFINITY, 0, 0}), Error);
  EXPECT_THROW(scaler.set_state({2.0, -1, 0}), Error);
  scaler.set_state({4.0, 2, 7});
  EXPECT_EQ(scaler.scale(), 4.0);
  EXPECT_EQ(scaler.state().skipped_steps, 7);
}

}  // namespace
}  // namespace normlab
