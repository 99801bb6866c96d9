// masked_softmax (key padding, cross-attention's Tq != Tk, optional causal) against references of its
// own: the formula evaluated in float64 on the host (mask -> exp -> normalize), the same function
// composed of plain differentiable ops, and causal_softmax where there is no padding. The finite-
// difference checks are the registry's cases masked_softmax, masked_softmax_causal, masked_cross_attention.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "autograd/ops.h"
#include "core/random.h"
#include "expect_error.h"

namespace normlab {
namespace {

struct Scores {
  int64_t batch, heads, queries, keys;
  Shape shape() const { return {batch, heads, queries, keys}; }
  int64_t numel() const { return batch * heads * queries * keys; }
};

// y[b, h, q, k] = exp(s x) / sum over the visible keys, visible = not padded and (k <= q if causal);
// 0 on the others, and on every key of a row with no visible key. Straight from the definition.
std::vector<double> formula(const Scores& d, const std::vector<double>& x, const std::vector<int32_t>& pad,
                            bool causal, double s) {
  std::vector<double> y(x.size(), 0.0);
  for (int64_t row = 0; row < d.batch * d.heads * d.queries; ++row) {
    const int64_t b = row / (d.heads * d.queries), q = row % d.queries;
    auto visible = [&](int64_t k) { return pad[static_cast<size_t>(b * d.keys + k)] == 0 && (!causal || k <= q); };
    double m = -INFINITY, sum = 0.0;
    for (int64_t k = 0; k < d.keys; ++k)
      if (visible(k)) m = std::max(m, s * x[static_cast<size_t>(row * d.keys + k)]);
    for (int64_t k = 0; k < d.keys; ++k)
      if (visible(k)) sum += std::exp(s * x[static_cast<size_t>(row * d.keys + k)] - m);
    for (int64_t k = 0; k < d.keys; ++k)
      if (visible(k)) y[static_cast<size_t>(row * d.keys + k)] = std::exp(s * x[static_cast<size_t>(row * d.keys + k)] - m) / sum;
  }
  return y;
}

Tensor random_scores(const Scores& d, uint64_t seed, DType dtype = DType::F64) {
  Generator gen(seed);
  return Tensor::randn(d.shape(), gen, 0.0, 2.0, dtype);
}

// Checks masked_softmax(x, pad, causal, s) against the formula: every entry within tol, and the
// entries the formula zeroes exactly 0.
void expect_matches_formula(const Scores& d, const std::vector<int32_t>& pad, bool causal, double s,
                            DType dtype, double tol) {
  const Tensor x = random_scores(d, 11, dtype);
  const std::vector<double> want = formula(d, x.to_vector(), pad, causal, s);
  const std::vector<double> got =
      masked_softmax(Var(x), Tensor::from_ints(pad, {d.batch, d.keys}), causal, s).value().to_vector();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == 0.0) {
      EXPECT_EQ(got[i], 0.0) << "entry " << i << " must be exactly 0";
    }
    EXPECT_NEAR(got[i], want[i], tol) << "entry " << i;
  }
}

// f's output and the gradient of sum(f(x) * g) with respect to x (one forward and backward; the
// tape is empty again afterwards).
std::pair<std::vector<double>, std::vector<double>> value_and_grad(const std::function<Var(const Var&)>& f,
                                                                   const Tensor& x, const Tensor& g) {
  Var v = parameter(x.clone());
  const Var y = f(v);
  std::vector<double> value = y.value().to_vector();
  backward(y, g.to(x.dtype()));
  return {value, v.grad().to_vector()};
}

TEST(MaskedSoftmax, CrossAttentionScoresMatchTheFormula) {
  // Tq 3 != Tk 6; padding first, inside and last; batch 2 pads one key only.
  const Scores d{3, 2, 3, 6};
  const std::vector<int32_t> pad = {1, 0, 0, 0, 0, 0, /**/ 0, 0, 1, 0, 0, 1, /**/ 0, 0, 0, 0, 0, 1};
  expect_matches_formula(d, pad, false, 0.7, DType::F64, 1e-15);
  expect_matches_formula(d, pad, false, 0.7, DType::F32, 2e-7);
}

TEST(MaskedSoftmax, CausalWithPaddingMatchesTheFormula) {
  // Right padding, left padding (rows 0 and 1 of batch 1 see no key), padding inside.
  const Scores d{3, 2, 5, 5};
  const std::vector<int32_t> pad = {0, 0, 0, 1, 1, /**/ 1, 1, 0, 0, 0, /**/ 0, 0, 1, 0, 0};
  expect_matches_formula(d, pad, true, 0.5, DType::F64, 1e-15);
  expect_matches_formula(d, pad, true, 0.5, DType::F32, 2e-7);
}

TEST(MaskedSoftmax, RowsSumToOneOrToZeroWhenNoKeyIsVisible) {
  const Scores d{2, 1, 4, 4};
  const std::vector<int32_t> pad = {1, 0, 1, 0, /**/ 1, 1, 1, 1};
  for (bool causal : {false, true}) {
    const std::vector<double> y =
        masked_softmax(Var(random_scores(d, 5)), Tensor::from_ints(pad, {2, 4}), causal, 1.0).value().to_vector();
    for (int64_t row = 0; row < 8; ++row) {
      double sum = 0.0;
      for (int64_t k = 0; k < 4; ++k) sum += y[static_cast<size_t>(row * 4 + k)];
      // batch 0: causal row 0 sees only the padded key 0; batch 1 pads everything.
      const bool empty = row >= 4 || (causal && row == 0);
      EXPECT_NEAR(sum, empty ? 0.0 : 1.0, 1e-15) << "row " << row << (causal ? " causal" : "");
    }
  }
}

TEST(MaskedSoftmax, AllPaddingRowIsZeroWithZeroGradientAndNoNan) {
  const Scores d{2, 2, 3, 4};
  const Tensor pad = Tensor::from_ints({0, 0, 1, 0, /**/ 1, 1, 1, 1}, {2, 4});
  Generator gen(9);
  const Tensor g = Tensor::randn(d.shape(), gen, 0.0, 1.0, DType::F64);
  for (DType dtype : {DType::F64, DType::F32}) {
    Var x = parameter(random_scores(d, 3, dtype));
    const Var y = masked_softmax(x, pad, false, 0.9);
    const std::vector<double> yv = y.value().to_vector();
    backward(y, g.to(dtype));
    const std::vector<double> dx = x.grad().to_vector();
    const size_t half = yv.size() / 2;  // batch 1 is the second half
    for (size_t i = 0; i < yv.size(); ++i) {
      ASSERT_TRUE(std::isfinite(yv[i]) && std::isfinite(dx[i])) << i;
      if (i >= half) {
        EXPECT_EQ(yv[i], 0.0) << i;
        EXPECT_EQ(dx[i], 0.0) << i;
      }
    }
    EXPECT_NE(dx[0], 0.0);  // batch 0 does learn
  }
}

TEST(MaskedSoftmax, WithoutPaddingEqualsCausalSoftmaxAndSoftmaxBitwise) {
  const Scores d{2, 3, 5, 5};
  Generator gen(4);
  const Tensor g = Tensor::randn(d.shape(), gen, 0.0, 1.0, DType::F64);
  const Tensor no_pad = Tensor::zeros({2, 5}, DType::I32);
  for (DType dtype : {DType::F64, DType::F32}) {
    const Tensor x = random_scores(d, 8, dtype);
    auto check = [&](const std::function<Var(const Var&)>& masked, const std::function<Var(const Var&)>& reference) {
      const auto [va, ga] = value_and_grad(masked, x, g);
      const auto [vb, gb] = value_and_grad(reference, x, g);
      for (size_t i = 0; i < va.size(); ++i) {
        EXPECT_EQ(va[i], vb[i]) << i;
        EXPECT_EQ(ga[i], gb[i]) << i;
      }
    };
    check([&](const Var& v) { return masked_softmax(v, no_pad, true, 0.35); },
          [](const Var& v) { return causal_softmax(v, 0, 0.35); });
    check([](const Var& v) { return masked_softmax(v, Tensor(), true, 0.35); },
          [](const Var& v) { return causal_softmax(v, 0, 0.35); });
    check([&](const Var& v) { return masked_softmax(v, no_pad, false, 1.0); },
          [](const Var& v) { return softmax(v); });
  }
}

// The same function from plain ops: y = e m / sum_k (e m), e = exp(s x), m the 0/1 visibility mask
// (a constant). Defined where every row sees a key; its gradient comes from the tape's own rules.
Var composed_masked_softmax(const Var& x, const Tensor& visible, double s) {
  const Var masked = mul(exp(scale(x, s)), constant(visible));
  return div(masked, sum(masked, -1, true));
}

TEST(MaskedSoftmax, EqualsItsComposedFormForwardAndBackward) {
  const Scores d{2, 2, 4, 4};
  const std::vector<int32_t> pad = {0, 1, 0, 1, /**/ 0, 0, 0, 1};
  for (bool causal : {false, true}) {
    std::vector<double> visible(static_cast<size_t>(d.numel()));
    for (int64_t i = 0; i < d.numel(); ++i) {
      const int64_t b = i / (d.heads * d.queries * d.keys), q = (i / d.keys) % d.queries, k = i % d.keys;
      visible[static_cast<size_t>(i)] = pad[static_cast<size_t>(b * d.keys + k)] == 0 && (!causal || k <= q);
    }
    const Tensor x = random_scores(d, 21);
    Generator gen(22);
    const Tensor g = Tensor::randn(d.shape(), gen, 0.0, 1.0, DType::F64);
    const Tensor mask = Tensor::from_vector(visible, d.shape(), DType::F64);
    const Tensor key_padding = Tensor::from_ints(pad, {2, 4});
    const auto [va, ga] = value_and_grad([&](const Var& v) { return masked_softmax(v, key_padding, causal, 0.8); }, x, g);
    const auto [vb, gb] = value_and_grad([&](const Var& v) { return composed_masked_softmax(v, mask, 0.8); }, x, g);
    for (size_t i = 0; i < va.size(); ++i) {
      EXPECT_NEAR(va[i], vb[i], 1e-15) << i << (causal ? " causal" : "");
      EXPECT_NEAR(ga[i], gb[i], 1e-14) << i << (causal ? " causal" : "");
    }
  }
}

TEST(MaskedSoftmax, HalfScoresKeepExactZerosAndFollowFloat32) {
  const Scores d{2, 1, 3, 5};
  const Tensor pad = Tensor::from_ints({0, 1, 0, 0, 1, /**/ 1, 1, 1, 1, 1}, {2, 5});
  const Tensor x = random_scores(d, 2, DType::F32);
  const std::vector<double> want = masked_softmax(Var(x), pad, false, 0.5).value().to_vector();
  for (DType half : {DType::BF16, DType::F16}) {
    const std::vector<double> got = masked_softmax(Var(x.to(half)), pad, false, 0.5).value().to_vector();
    for (size_t i = 0; i < want.size(); ++i) {
      if (want[i] == 0.0) {
        EXPECT_EQ(got[i], 0.0) << i;
      }
      EXPECT_NEAR(got[i], want[i], 1e-2) << i;
    }
  }
}

using test::expect_error;

TEST(MaskedSoftmax, ErrorsNameTheOpAndTheShapes) {
  const Var cross = Var(Tensor::zeros({2, 2, 3, 5}, DType::F64));
  const Tensor pad = Tensor::zeros({2, 5}, DType::I32);
  expect_error([&] { masked_softmax(cross, pad, true, 1.0); }, {"[masked_softmax]", "causal", "(2, 2, 3, 5)", "Tq 3", "Tk 5"});
  expect_error([&] { masked_softmax(cross, Tensor::zeros({2, 3}, DType::I32)); }, {"[masked_softmax]", "(2, 3)", "(2, 2, 3, 5)"});
  expect_error([&] { masked_softmax(cross, Tensor::zeros({2, 5})); }, {"[masked_softmax]", "int32"});
  expect_error([&] { masked_softmax(cross, Tensor::from_ints({0, 0, 0, 0, 0, 0, 0, 7, 0, 0}, {2, 5})); },
               {"[masked_softmax]", "0 or 1", "7", "(1, 2)"});
  expect_error([&] { masked_softmax(cross, pad, false, 0.0); }, {"[masked_softmax]", "scale"});
  expect_error([&] { masked_softmax(Var(Tensor::zeros({3, 5}, DType::F64)), Tensor::zeros({3, 5}, DType::I32)); },
               {"[masked_softmax]", "(B, ..., Tq, Tk)", "(3, 5)"});
}

}  // namespace
}  // namespace normlab
