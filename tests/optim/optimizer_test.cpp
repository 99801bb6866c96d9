// Each optimizer against its published update equations, re-derived here independently in double
// on a tiny float64 parameter, step by step.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "optim/optimizer.h"

namespace normlab {
namespace {

using Vec = std::vector<double>;
using NamedParams = std::vector<std::pair<std::string, Var>>;

Var make_param(const Vec& values, const std::string& name) {
  return parameter(Tensor::from_vector(values, {static_cast<int64_t>(values.size())}, DType::F64), name);
}

void set_grad(Var& p, const Vec& g) {
  p.grad() = Tensor::from_vector(g, {static_cast<int64_t>(g.size())}, DType::F64);
}

void expect_near(const Vec& actual, const Vec& expected, double tol = 1e-13) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], tol * std::max(1.0, std::abs(expected[i]))) << "element " << i;
  }
}

const Vec kStart = {0.5, -1.25, 2.0};
const std::vector<Vec> kGrads = {{0.1, -0.4, 0.25}, {-0.3, 0.05, 0.6}, {0.2, 0.2, -0.1}};

// Adam / AdamW written out from Kingma & Ba (Algorithm 1) and Loshchilov & Hutter (Algorithm 2).
Vec reference_adam(double lr, double b1, double b2, double eps, double wd, bool decoupled, int steps) {
  Vec p = kStart, m(3, 0.0), v(3, 0.0);
  for (int t = 1; t <= steps; ++t) {
    for (int i = 0; i < 3; ++i) {
      double g = kGrads[t - 1][i];
      if (!decoupled) g += wd * p[i];
      m[i] = b1 * m[i] + (1 - b1) * g;
      v[i] = b2 * v[i] + (1 - b2) * g * g;
      const double m_hat = m[i] / (1 - std::pow(b1, t));
      const double v_hat = v[i] / (1 - std::pow(b2, t));
      if (decoupled) p[i] = p[i] - lr * wd * p[i];
      p[i] = p[i] - lr * m_hat / (std::sqrt(v_hat) + eps);
    }
  }
  return p;
}

Vec run(OptimConfig config, double lr, int steps, const std::string& name = "w") {
  Var p = make_param(kStart, name);
  auto opt = make_optimizer(config, {{name, p}});
  for (int t = 0; t < steps; ++t) {
    set_grad(p, kGrads[t]);
    opt->step(lr);
  }
  EXPECT_EQ(opt->step_count(), steps);
  return p.value().to_vector();
}

TEST(Adam, ThreeStepsMatchKingmaBa) {
  OptimConfig c;
  c.name = OptimizerKind::Adam;
  c.beta1 = 0.9;
  c.beta2 = 0.98;
  c.eps = 1e-6;
  for (int steps = 1; steps <= 3; ++steps)
    expect_near(run(c, 0.01, steps), reference_adam(0.01, 0.9, 0.98, 1e-6, 0.0, false, steps));
}

TEST(Adam, CoupledWeightDecayGoesThroughTheGradient) {
  OptimConfig c;
  c.name = OptimizerKind::Adam;
  c.weight_decay = 0.1;
  expect_near(run(c, 0.05, 3), reference_adam(0.05, 0.9, 0.999, 1e-8, 0.1, false, 3));
}

TEST(AdamW, DecoupledWeightDecay) {
  OptimConfig c;
  c.name = OptimizerKind::AdamW;
  c.weight_decay = 0.1;
  const Vec got = run(c, 0.05, 3);
  expect_near(got, reference_adam(0.05, 0.9, 0.999, 1e-8, 0.1, true, 3));
  // and it differs from coupled decay and from no decay
  EXPECT_GT(std::abs(got[0] - reference_adam(0.05, 0.9, 0.999, 1e-8, 0.1, false, 3)[0]), 1e-6);
  EXPECT_GT(std::abs(got[0] - reference_adam(0.05, 0.9, 0.999, 1e-8, 0.0, true, 3)[0]), 1e-6);
}

TEST(Sgd, MomentumAndWeightDecay) {
  OptimConfig c;
  c.name = OptimizerKind::Sgd;
  c.momentum = 0.9;
  c.weight_decay = 0.01;
  const double lr = 0.1;
  Vec p = kStart, buf(3, 0.0);
  for (int t = 0; t < 3; ++t) {
    for (int i = 0; i < 3; ++i) {
      const double g = kGrads[t][i] + 0.01 * p[i];
      buf[i] = t == 0 ? g : 0.9 * buf[i] + g;
      p[i] -= lr * buf[i];
    }
  }
  expect_near(run(c, lr, 3), p);
}

TEST(Sgd, PlainStepWithoutMomentum) {
  OptimConfig c;
  c.name = OptimizerKind::Sgd;
  Vec p = kStart;
  for (int i = 0; i < 3; ++i) p[i] -= 0.5 * kGrads[0][i];
  expect_near(run(c, 0.5, 1), p);
}

// RAdam (Liu et al. 2020, Algorithm 2), eps placed as PyTorch does: l_t = sqrt(1-b2^t)/(sqrt(v)+eps).
// Returns the parameter after each step, and records which steps were adaptive.
Vec reference_radam(double lr, double b1, double b2, double eps, double wd, int steps,
                    std::vector<bool>& adaptive, const std::vector<Vec>& grads) {
  Vec p = kStart, m(3, 0.0), v(3, 0.0);
  const double rho_inf = 2 / (1 - b2) - 1;
  for (int t = 1; t <= steps; ++t) {
    const double rho_t = rho_inf - 2 * t * std::pow(b2, t) / (1 - std::pow(b2, t));
    adaptive.push_back(rho_t > 5);
    for (int i = 0; i < 3; ++i) {
      const double g = grads[t - 1][i] + wd * p[i];
      m[i] = b1 * m[i] + (1 - b1) * g;
      v[i] = b2 * v[i] + (1 - b2) * g * g;
      const double m_hat = m[i] / (1 - std::pow(b1, t));
      if (rho_t > 5) {
        const double r = std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
        const double l = std::sqrt(1 - std::pow(b2, t)) / (std::sqrt(v[i]) + eps);
        p[i] -= lr * r * m_hat * l;
      } else {
        p[i] -= lr * m_hat;
      }
    }
  }
  return p;
}

std::vector<Vec> cycled_grads(int steps) {
  std::vector<Vec> g;
  for (int t = 0; t < steps; ++t) g.push_back(kGrads[t % 3]);
  return g;
}

TEST(RAdam, UnadaptedPhaseIsMomentumSgd) {
  // beta2 = 0.999: rho_1 = 1, rho_2 ~ 2, rho_3 ~ 3: the first three steps are un-adapted.
  OptimConfig c;
  c.name = OptimizerKind::RAdam;
  c.weight_decay = 0.05;
  std::vector<bool> adaptive;
  const Vec expected = reference_radam(0.01, 0.9, 0.999, 1e-8, 0.05, 3, adaptive, kGrads);
  EXPECT_EQ(adaptive, std::vector<bool>(3, false));
  expect_near(run(c, 0.01, 3), expected);
}

TEST(RAdam, AdaptivePhaseAfterRhoExceedsFive) {
  // beta2 = 0.9: rho_inf = 19 and rho_t passes 5 after a few steps, so both phases occur.
  OptimConfig c;
  c.name = OptimizerKind::RAdam;
  c.beta2 = 0.9;
  c.eps = 1e-6;
  const int steps = 10;
  const auto grads = cycled_grads(steps);
  std::vector<bool> adaptive;
  const Vec expected = reference_radam(0.01, 0.9, 0.9, 1e-6, 0.0, steps, adaptive, grads);
  ASSERT_FALSE(adaptive.front());
  ASSERT_TRUE(adaptive.back());
  Var p = make_param(kStart, "w");
  auto opt = make_optimizer(c, {{"w", p}});
  for (int t = 0; t < steps; ++t) {
    set_grad(p, grads[t]);
    opt->step(0.01);
  }
  expect_near(p.value().to_vector(), expected);
}

TEST(Optimizer, ParametersWithoutGradAreSkippedAndCountTheirOwnSteps) {
  OptimConfig c;
  c.name = OptimizerKind::Adam;
  Var a = make_param(kStart, "a"), b = make_param(kStart, "b");
  auto opt = make_optimizer(c, {{"a", a}, {"b", b}});
  set_grad(a, kGrads[0]);
  opt->step(0.1);
  EXPECT_EQ(b.value().to_vector(), kStart);  // no grad: untouched
  EXPECT_FALSE(b.grad().defined());
  set_grad(a, kGrads[1]);
  set_grad(b, kGrads[0]);
  opt->step(0.1);
  // b's first real step is bias-corrected as t = 1: exactly a's first step.
  Var fresh = make_param(kStart, "a");
  auto opt2 = make_optimizer(c, {{"a", fresh}});
  set_grad(fresh, kGrads[0]);
  opt2->step(0.1);
  expect_near(b.value().to_vector(), fresh.value().to_vector());
}

TEST(Optimizer, ZeroGradClearsGradients) {
  Var p = make_param(kStart, "w");
  auto opt = make_optimizer(OptimConfig{}, {{"w", p}});
  set_grad(p, kGrads[0]);
  opt->zero_grad();
  EXPECT_FALSE(p.grad().defined());
}

TEST(Optimizer, BadHyperparameters) {
  OptimConfig c;
  c.name = OptimizerKind::Adam;
  c.beta2 = 1.0;
  EXPECT_THROW(make_optimizer(c, {}), Error);
  c = OptimConfig{};
  Var p = make_param(kStart, "w"), q = make_param(kStart, "w");
  EXPECT_THROW(make_optimizer(c, {{"w", p}, {"w", q}}), Error);  // duplicate names
}

}  // namespace
}  // namespace normlab
