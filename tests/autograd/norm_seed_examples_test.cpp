// The worked examples of the seed article (/work/shared/seeds/003_*.txt, "LayerNorm", "RMSNorm",
// "eps и его роль", "Вариант Gemma" and the exercises), reproduced to the printed 4 decimals.
// The article's code uses nn.LayerNorm's default eps = 1e-5 and RMSNorm's default eps = 1e-6;
// the exercises say "without eps" (LayerNorm takes eps = 0; RMSNorm requires eps > 0, so 1e-12).
#include <gtest/gtest.h>

#include <cmath>

#include "norm_test_util.h"

namespace normlab {
namespace {

constexpr double kPrinted = 5e-5;  // half a unit in the 4th decimal

std::vector<double> ln(const std::vector<double>& x, double eps = 1e-5) {
  const Var v = constant(Tensor::from_vector(x, {1, static_cast<int64_t>(x.size())}, DType::F64));
  return layer_norm(v, Var(), Var(), eps).value().to_vector();
}

std::vector<double> rms(const std::vector<double>& x, double eps = 1e-6, const std::vector<double>& w = {},
                        bool unit_offset = false) {
  const int64_t C = static_cast<int64_t>(x.size());
  const Var v = constant(Tensor::from_vector(x, {1, C}, DType::F64));
  const Var weight = w.empty() ? Var() : constant(Tensor::from_vector(w, {C}, DType::F64));
  return rms_norm(v, weight, eps, unit_offset).value().to_vector();
}

void expect_values(const std::vector<double>& got, const std::vector<double>& expected, double tol) {
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], tol) << "element " << i;
}

TEST(SeedExamples, LayerNormOf1236) {
  // mean 3, deviations (-2, -1, 0, 3), var 14/4 = 3.5, sqrt 1.8708.
  expect_values(ln({1, 2, 3, 6}), {-1.0690, -0.5345, 0.0, 1.6036}, kPrinted);
}

TEST(SeedExamples, LayerNormIgnoresScaleAndShift) {
  // LN(3x + 10) = LN(x) (exact when eps = 0; eps = 1e-5 moves it by ~1e-6 here).
  expect_values(ln({13, 16, 19, 28}), ln({1, 2, 3, 6}), 1e-5);
  expect_values(ln({13, 16, 19, 28}, 0.0), ln({1, 2, 3, 6}, 0.0), 1e-12);
  // The exercise's converse: alpha < 0 flips the sign, LN(-2x + 1) = -LN(x).
  const std::vector<double> flipped = ln({-1, -3, -5, -11}, 0.0), base = ln({1, 2, 3, 6}, 0.0);
  for (size_t i = 0; i < base.size(); ++i) EXPECT_NEAR(flipped[i], -base[i], 1e-12);
}

TEST(SeedExamples, RmsNormOf1236) {
  // mean square 50/4 = 12.5, RMS 3.5355.
  expect_values(rms({1, 2, 3, 6}), {0.2828, 0.5657, 0.8485, 1.6971}, kPrinted);
  expect_values(rms({3, 6, 9, 18}), rms({1, 2, 3, 6}), 1e-7);  // RMSNorm(3x) = RMSNorm(x)
  // x + 10 = (11, 12, 13, 16): mean square 172.5, a different direction, a different output.
  expect_values(rms({11, 12, 13, 16}), {0.8375, 0.9137, 0.9898, 1.2182}, kPrinted);
}

TEST(SeedExamples, EpsTableOfGainLimits) {
  // The output is x / sqrt(m + eps); a constant vector of value sqrt(m) has mean square m, and
  // output / input is the article's multiplier. Rows: m, multiplier at eps = 1e-6, at eps = 1e-5.
  struct Row { double m, at_1e6, at_1e5, tol; };
  const Row table[] = {{1.0, 0.9999995, 0.999995, 5e-8},
                       {1e-2, 9.9995, 9.9950, 5e-5},
                       {1e-4, 99.50, 95.35, 5e-3},
                       {1e-6, 707.1, 301.5, 5e-2}};
  for (const Row& r : table) {
    const double v = std::sqrt(r.m);
    EXPECT_NEAR(rms({v, v, v, v}, 1e-6)[0] / v, r.at_1e6, r.tol) << "m = " << r.m;
    EXPECT_NEAR(rms({v, v, v, v}, 1e-5)[0] / v, r.at_1e5, r.tol) << "m = " << r.m;
  }
  // m -> 0: the multiplier approaches 1/sqrt(eps) = 1000 and 316.2.
  EXPECT_NEAR(rms({1e-9, 1e-9}, 1e-6)[0] / 1e-9, 1000.0, 1e-3);
  EXPECT_NEAR(rms({1e-9, 1e-9}, 1e-5)[0] / 1e-9, 316.2, 5e-2);
  EXPECT_EQ(rms({0, 0, 0})[1], 0.0);  // the zero vector: RMS = sqrt(eps) > 0, no division by zero
}

TEST(SeedExamples, ExerciseX2446ByHand) {
  // LayerNorm without eps: mean (2+4+4+6)/4 = 4, deviations (-2, 0, 0, 2), var (4+0+0+4)/4 = 2,
  // output (-2, 0, 0, 2)/sqrt(2) = (-sqrt 2, 0, 0, sqrt 2).
  expect_values(ln({2, 4, 4, 6}, 0.0), {-1.41421356, 0.0, 0.0, 1.41421356}, 1e-8);
  // RMSNorm without eps: mean square (4+16+16+36)/4 = 18, RMS sqrt(18) = 3 sqrt 2 = 4.24264069,
  // output (2, 4, 4, 6)/(3 sqrt 2) = (sqrt 2/3, 2 sqrt 2/3, 2 sqrt 2/3, sqrt 2).
  expect_values(rms({2, 4, 4, 6}, 1e-12), {0.47140452, 0.94280904, 0.94280904, 1.41421356}, 1e-8);
  // The article's rounded answers.
  expect_values(ln({2, 4, 4, 6}, 0.0), {-1.4142, 0.0, 0.0, 1.4142}, kPrinted);
  expect_values(rms({2, 4, 4, 6}, 1e-12), {0.4714, 0.9428, 0.9428, 1.4142}, kPrinted);
}

TEST(SeedExamples, GemmaStoredWeightActsAsOnePlusW) {
  // Checkpoint w = (-0.25, 0, 0.5) acts as the scale (0.75, 1, 1.5).
  const std::vector<double> x = {1.0, -2.0, 4.0};
  const auto gemma = rms(x, 1e-6, {-0.25, 0.0, 0.5}, /*unit_offset=*/true);
  expect_values(gemma, rms(x, 1e-6, {0.75, 1.0, 1.5}), 1e-15);
  const auto unscaled = rms(x);
  expect_values(gemma, {0.75 * unscaled[0], 1.0 * unscaled[1], 1.5 * unscaled[2]}, 1e-15);
  // At initialisation (w = 0) the Gemma form is the identity scale.
  expect_values(rms(x, 1e-6, {0, 0, 0}, true), unscaled, 0.0);
}

}  // namespace
}  // namespace normlab
