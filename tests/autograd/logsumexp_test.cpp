// logsumexp over the last axis: its forward against a float64 formula written here (the max-shifted
// sum, each row by hand), logits where the naive exp overflows, its backward against softmax, 16-bit
// inputs, and its errors. The finite-difference checks are the registry's cases "logsumexp" and
// "logsumexp_large" (tests/autograd/gradcheck_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/ops.h"
#include "core/ops.h"
#include "core/random.h"

namespace normlab {
namespace {

// log sum_j exp(row_j) in long double, shifted by the row max: the reference.
double reference_lse(const std::vector<double>& row) {
  const double m = *std::max_element(row.begin(), row.end());
  long double sum = 0;
  for (const double v : row) sum += std::exp(static_cast<long double>(v - m));
  return static_cast<double>(m + std::log(sum));
}

TEST(Logsumexp, MatchesTheFormulaRowByRowInFloat64) {
  Generator gen(17);
  const Tensor x = Tensor::randn({2, 3, 7}, gen, 0.0, 3.0, DType::F64);
  const Var y = logsumexp(constant(x));
  ASSERT_EQ(y.shape(), (Shape{2, 3}));
  const std::vector<double> xs = x.to_vector(), ys = y.value().to_vector();
  for (size_t r = 0; r < 6; ++r) {
    const std::vector<double> row(xs.begin() + static_cast<long>(7 * r), xs.begin() + static_cast<long>(7 * r + 7));
    EXPECT_NEAR(ys[r], reference_lse(row), 1e-13) << r;
  }
}

// exp(1000) is inf even in float64; the shifted form gives 1001 + log(1 + e^-1).
TEST(Logsumexp, LargeLogitsDoNotOverflow) {
  const double expected = 1001.0 + std::log1p(std::exp(-1.0));  // 1001.3132616875...
  EXPECT_TRUE(std::isinf(std::log(std::exp(1000.0) + std::exp(1001.0))));  // the naive form
  for (const DType dtype : {DType::F64, DType::F32}) {
    const Tensor x = Tensor::from_vector({1000.0, 1001.0, -1000.0, -1001.0}, {2, 2}, dtype);
    const std::vector<double> y = logsumexp(constant(x)).value().to_vector();
    const double tol = dtype == DType::F64 ? 1e-12 : 1e-4;  // float32 near 1000: ulp 6e-5
    EXPECT_NEAR(y[0], expected, tol) << dtype_name(dtype);
    EXPECT_NEAR(y[1], -1000.0 + std::log1p(std::exp(-1.0)), tol) << dtype_name(dtype);  // no underflow to -inf
  }
  // A single element: lse(x) = x exactly; a constant row of V: x + log V.
  const std::vector<double> one = logsumexp(constant(Tensor::from_vector({-3.5}, {1}, DType::F64))).value().to_vector();
  EXPECT_DOUBLE_EQ(one[0], -3.5);
  const std::vector<double> flat =
      logsumexp(constant(Tensor::from_vector({7.0, 7.0, 7.0, 7.0}, {4}, DType::F64))).value().to_vector();
  EXPECT_NEAR(flat[0], 7.0 + std::log(4.0), 1e-14);
}

// dL/dx = g softmax(x): with L = sum_r w_r lse_r, dx[r, j] = w_r softmax(x_r)_j, also at 1000.
TEST(Logsumexp, BackwardIsTheIncomingGradientTimesSoftmax) {
  const Tensor x = Tensor::from_vector({1000.0, 1001.0, 999.0, 0.5, -2.0, 3.0}, {2, 3}, DType::F64);
  const Tensor w = Tensor::from_vector({0.7, -1.3}, {2}, DType::F64);
  const Var xv = parameter(x);
  backward(sum_all(mul(logsumexp(xv), constant(w))));
  const std::vector<double> dx = xv.grad().to_vector(), p = ops::softmax(x, {}).to_vector();
  const double ws[2] = {0.7, -1.3};
  // exp(x - lse) near 1000: x - lse carries the rounding of 1000's ulp (1.1e-13), relative.
  for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(dx[i], ws[i / 3] * p[i], i < 3 ? 1e-12 : 1e-15) << i;
}

// bfloat16 logits are computed in float32 and rounded once; a gradient comes back in bfloat16.
TEST(Logsumexp, HalfInputsComputeInFloat32) {
  const Tensor x = Tensor::from_vector({100.0, 101.0, 99.0, 0.0}, {1, 4}, DType::BF16);
  const Var xv = parameter(x);
  const Var y = logsumexp(xv);
  EXPECT_EQ(y.value().dtype(), DType::BF16);
  EXPECT_NEAR(y.value().to_vector()[0], reference_lse({100.0, 101.0, 99.0, 0.0}), 0.5);  // bf16 ulp at 101: 0.5
  backward(sum_all(y));
  EXPECT_EQ(xv.grad().dtype(), DType::BF16);
  double total = 0;
  for (const double v : xv.grad().to_vector()) total += v;
  EXPECT_NEAR(total, 1.0, 1e-2);  // a softmax sums to 1
}

TEST(Logsumexp, ErrorsNameTheOpAndTheShape) {
  auto message = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string scalar = message([] { logsumexp(constant(Tensor::full({}, 1.0, DType::F64))); });
  EXPECT_NE(scalar.find("[logsumexp]"), std::string::npos) << scalar;
  EXPECT_NE(scalar.find("()"), std::string::npos) << scalar;
  const std::string empty = message([] { logsumexp(constant(Tensor::zeros({3, 0}, DType::F64))); });
  EXPECT_NE(empty.find("[logsumexp]"), std::string::npos) << empty;
  EXPECT_NE(empty.find("(3, 0)"), std::string::npos) << empty;
  const std::string ints = message([] { logsumexp(constant(Tensor::from_ints({1, 2}, {2}))); });
  EXPECT_NE(ints.find("[logsumexp]"), std::string::npos) << ints;
}

}  // namespace
}  // namespace normlab
