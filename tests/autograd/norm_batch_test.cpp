// BatchNorm's extra state and its defining property: running statistics are updated in training
// and used in eval; the output for one sequence depends on the other sequences of the batch,
// which LayerNorm's never does.
#include <gtest/gtest.h>

#include <cmath>

#include "norm_test_util.h"

namespace normlab {
namespace {

using norm_testing::make_inputs;
using norm_testing::max_abs_diff;

// Per-channel mean and unbiased variance over the rows of x (rows, C), computed on the host.
void host_channel_stats(const Tensor& x, std::vector<double>& mean, std::vector<double>& var_unbiased) {
  const int64_t C = x.size(-1), rows = x.numel() / C;
  const std::vector<double> v = x.to_vector();
  mean.assign(C, 0.0);
  var_unbiased.assign(C, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < C; ++j) mean[j] += v[r * C + j] / static_cast<double>(rows);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < C; ++j) var_unbiased[j] += std::pow(v[r * C + j] - mean[j], 2) / static_cast<double>(rows - 1);
}

TEST(BatchNorm, TrainingUpdatesRunningStatisticsInPlace) {
  const auto in = make_inputs({4, 3, 5}, 2);
  Tensor running_mean = Tensor::zeros({5}, DType::F64), running_var = Tensor::ones({5}, DType::F64);
  const double momentum = 0.25;
  batch_norm(constant(in[0]), constant(in[1]), constant(in[2]), running_mean, running_var, true, momentum);
  std::vector<double> mean, var;
  host_channel_stats(in[0], mean, var);
  const std::vector<double> rm = running_mean.to_vector(), rv = running_var.to_vector();
  for (int j = 0; j < 5; ++j) {
    EXPECT_NEAR(rm[j], momentum * mean[j], 1e-12);                           // (1 - m) 0 + m mean
    EXPECT_NEAR(rv[j], (1 - momentum) * 1.0 + momentum * var[j], 1e-12);    // unbiased variance
  }
  // A second step blends again from the updated values.
  batch_norm(constant(in[0]), Var(), Var(), running_mean, running_var, true, momentum);
  EXPECT_NEAR(running_mean.to_vector()[2], (1 - momentum) * rm[2] + momentum * mean[2], 1e-12);
}

TEST(BatchNorm, EvalUsesRunningStatisticsAndLeavesThemAlone) {
  const auto in = make_inputs({6, 4}, 2);
  const Tensor running_mean = Tensor::from_vector({0.5, -1.0, 0.0, 2.0}, {4}, DType::F64);
  const Tensor running_var = Tensor::from_vector({1.0, 4.0, 0.25, 9.0}, {4}, DType::F64);
  const double eps = 1e-5;
  const Var y = batch_norm(constant(in[0]), constant(in[1]), constant(in[2]), running_mean, running_var,
                           /*training=*/false, 0.1, eps);
  const std::vector<double> x = in[0].to_vector(), g = in[1].to_vector(), b = in[2].to_vector();
  const std::vector<double> rm = running_mean.to_vector(), rv = running_var.to_vector();
  std::vector<double> expected(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t j = i % 4;
    expected[i] = (x[i] - rm[j]) / std::sqrt(rv[j] + eps) * g[j] + b[j];
  }
  EXPECT_LE(max_abs_diff(y.value().to_vector(), expected), 1e-12);
  EXPECT_EQ(running_mean.to_vector(), rm);
  EXPECT_EQ(running_var.to_vector(), rv);
}

TEST(BatchNorm, EvalBackwardIsTheFixedAffineMap) {
  const auto in = make_inputs({5, 3}, 2);
  const Tensor running_mean = Tensor::zeros({3}, DType::F64), running_var = Tensor::full({3}, 4.0, DType::F64);
  const auto r = norm_testing::forward_backward(
      [&](const std::vector<Var>& v) {
        return batch_norm(v[0], v[1], v[2], running_mean, running_var, false, 0.1, 0.0);
      },
      in);
  Generator gen(7);  // forward_backward's w, so dL/dy = w
  const std::vector<double> w = Tensor::randn({5, 3}, gen, 0.0, 1.0, DType::F64).to_vector();
  const std::vector<double> g = in[1].to_vector();
  for (size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(r.grads[0][i], w[i] * g[i % 3] / 2.0, 1e-14);
}

TEST(BatchNorm, OutputDependsOnTheOtherSequencesButLayerNormsDoesNot) {
  // Two sequences (B = 2, T = 3, C = 4); change only sequence 1 and look at sequence 0's output.
  auto in = make_inputs({2, 3, 4}, 2);
  std::vector<double> changed = in[0].to_vector();
  for (size_t i = 12; i < changed.size(); ++i) changed[i] = 3.0 * changed[i] + 5.0;
  const Tensor x_other = Tensor::from_vector(changed, {2, 3, 4}, DType::F64);
  auto sequence0 = [](const Var& y) {
    std::vector<double> v = y.value().to_vector();
    return std::vector<double>(v.begin(), v.begin() + 12);
  };
  const Var g = constant(in[1]), b = constant(in[2]);
  const auto bn_a = sequence0(batch_norm(constant(in[0]), g, b, Tensor(), Tensor(), true));
  const auto bn_b = sequence0(batch_norm(constant(x_other), g, b, Tensor(), Tensor(), true));
  const auto ln_a = sequence0(layer_norm(constant(in[0]), g, b));
  const auto ln_b = sequence0(layer_norm(constant(x_other), g, b));
  EXPECT_GT(max_abs_diff(bn_a, bn_b), 0.1);  // BatchNorm: sequence 0 sees sequence 1's statistics
  EXPECT_EQ(ln_a, ln_b);                     // LayerNorm: bit-identical, per-token statistics
}

TEST(BatchNorm, ArgumentErrors) {
  const Var x = constant(Tensor::ones({1, 4}, DType::F64));
  Tensor rm = Tensor::zeros({4}, DType::F64), rv = Tensor::ones({4}, DType::F64);
  EXPECT_THROW(batch_norm(x, Var(), Var(), rm, rv, true), Error);              // one row: no unbiased var
  EXPECT_THROW(batch_norm(x, Var(), Var(), Tensor(), Tensor(), false), Error);  // eval needs stats
  EXPECT_THROW(batch_norm(x, Var(), Var(), rm, Tensor(), true), Error);         // both or neither
  EXPECT_THROW(batch_norm(x, Var(), Var(), Tensor::zeros({3}, DType::F64), Tensor::ones({3}, DType::F64), false),
               Error);
}

}  // namespace
}  // namespace normlab
