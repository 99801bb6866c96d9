// Semantics of the shape, product, softmax, embedding, loss and dropout ops beyond their
// gradients (which the gradcheck suite covers): values, views, masks, float32 paths.
#include <gtest/gtest.h>

#include <cmath>

#include "autograd/ops.h"
#include "core/ops.h"
#include "core/random.h"

namespace normlab {
namespace {

class AutogradOps : public ::testing::Test {
 protected:
  void TearDown() override { Tape::current().clear(); }
  Generator gen{21};
  Tensor randn(const Shape& s, DType dtype = DType::F64) { return Tensor::randn(s, gen, 0.0, 1.0, dtype); }
};

void expect_close(const Tensor& a, const Tensor& b, double tol) {
  ASSERT_EQ(a.shape(), b.shape());
  const auto x = a.to_vector(), y = b.to_vector();
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], y[i], tol) << "element " << i;
}

TEST_F(AutogradOps, ReshapeIsAViewAndTransposeIsMaterialised) {
  Var x = parameter(randn({2, 6}));
  Var r = reshape(x, {3, 4});
  EXPECT_EQ(r.value().storage(), x.value().storage());
  Var t = transpose(x, 0, 1);
  EXPECT_TRUE(t.value().is_contiguous());
  EXPECT_EQ(t.value().to_vector(), x.value().transpose(0, 1).to_vector());
}

TEST_F(AutogradOps, SplitAndMergeHeadsAreInverse) {
  Var x = parameter(randn({2, 3, 8}));
  Var h = split_heads(x, 4);
  EXPECT_EQ(h.shape(), (Shape{2, 4, 3, 2}));
  // y[b, h, t, d] = x[b, t, h D + d]
  const auto xv = x.value().to_vector(), hv = h.value().to_vector();
  EXPECT_EQ(hv[((1 * 4 + 3) * 3 + 2) * 2 + 1], xv[(1 * 3 + 2) * 8 + 3 * 2 + 1]);
  EXPECT_EQ(merge_heads(h).value().to_vector(), xv);
}

TEST_F(AutogradOps, NarrowLastGradientIsZeroOutsideTheSlice) {
  Var x = parameter(randn({2, 5}));
  Var y = narrow_last(x, 1, 3);
  EXPECT_EQ(y.value().to_vector(), ops::narrow_last(x.value(), 1, 3).to_vector());
  backward(sum_all(y));
  EXPECT_EQ(x.grad().to_vector(), (std::vector<double>{0, 1, 1, 1, 0, 0, 1, 1, 1, 0}));
}

TEST_F(AutogradOps, LinearEqualsMatmulPlusBias) {
  Tensor x = randn({2, 3, 4}), w = randn({5, 4}), b = randn({5});
  Var y = linear(constant(x), constant(w), constant(b));
  EXPECT_EQ(y.shape(), (Shape{2, 3, 5}));
  expect_close(y.value(), ops::add(ops::matmul(x, w, false, true), b), 1e-12);
  Var v = linear(constant(randn({4})), constant(w), Var());  // a single 1-d input
  EXPECT_EQ(v.shape(), (Shape{5}));
}

TEST_F(AutogradOps, Float32MatchesFloat64Gradients) {
  // The shared-weight tn path calls the backend GEMM directly: check it in float32 as well.
  Tensor a = randn({2, 4, 3}), w = randn({4, 5});
  Tensor ga[2], gw[2];
  for (int k = 0; k < 2; ++k) {
    const DType dt = k == 0 ? DType::F64 : DType::F32;
    Var av = parameter(a.to(dt)), wv = parameter(w.to(dt));
    backward(sum_all(square(matmul(av, wv, true, false))));
    ga[k] = av.grad();
    gw[k] = wv.grad();
    EXPECT_EQ(ga[k].dtype(), dt);
  }
  expect_close(ga[1], ga[0], 1e-4);
  expect_close(gw[1], gw[0], 1e-4);
}

TEST_F(AutogradOps, CausalSoftmaxGivesMaskedEntriesZeroGradient) {
  Var x = parameter(randn({3, 3}));
  Var y = causal_softmax(x);
  EXPECT_EQ(y.value().to_vector()[1], 0.0);
  backward(sum_all(mul(y, constant(randn({3, 3})))));
  const auto g = x.grad().to_vector();
  EXPECT_EQ(g[1], 0.0);
  EXPECT_EQ(g[2], 0.0);
  EXPECT_EQ(g[5], 0.0);
  EXPECT_NE(g[4], 0.0);
}

// The fused form attention uses, causal_softmax(x, window, s), against the plain ops it replaces,
// causal_softmax(scale(x, s), window): the same values and the same gradient, float64 and float32.
TEST_F(AutogradOps, ScaledCausalSoftmaxIsScaleThenSoftmax) {
  for (DType dt : {DType::F64, DType::F32}) {
    const double tol = dt == DType::F64 ? 1e-14 : 2e-6;
    const Tensor scores = randn({2, 3, 6, 6}, dt), cotangent = randn({2, 3, 6, 6}, dt);
    for (int64_t window : {0, 2}) {
      Var fused_in = parameter(scores), plain_in = parameter(scores);
      const Var fused = causal_softmax(fused_in, window, 0.4);
      backward(sum_all(mul(fused, constant(cotangent))));  // one graph per backward: it clears the tape
      const Var plain = causal_softmax(scale(plain_in, 0.4), window);
      backward(sum_all(mul(plain, constant(cotangent))));
      expect_close(fused.value(), plain.value(), tol);
      expect_close(fused_in.grad(), plain_in.grad(), tol);
    }
  }
}

TEST_F(AutogradOps, CrossEntropyMatchesLogSoftmaxAndIgnoresRows) {
  Tensor logits = randn({2, 2, 4});
  Tensor targets = Tensor::from_ints({3, -1, 0, 2}, {2, 2});
  Var l = parameter(logits);
  Var loss = cross_entropy(l, targets, -1);
  EXPECT_EQ(loss.dim(), 0);
  // The same loss from plain ops: -mean over counted rows of log softmax at the target.
  const auto p = ops::softmax(logits, {}).to_vector();
  const double want = -(std::log(p[0 * 4 + 3]) + std::log(p[2 * 4 + 0]) + std::log(p[3 * 4 + 2])) / 3.0;
  EXPECT_NEAR(loss.item(), want, 1e-12);
  backward(loss);
  const auto g = l.grad().to_vector();
  for (int j = 0; j < 4; ++j) EXPECT_EQ(g[1 * 4 + j], 0.0);  // the ignored row
  EXPECT_NEAR(g[0 * 4 + 3], (p[3] - 1.0) / 3.0, 1e-14);
}

TEST_F(AutogradOps, CrossEntropyWithEveryTargetIgnoredIsZero) {
  Var l = parameter(randn({2, 3}));
  Var loss = cross_entropy(l, Tensor::from_ints({-1, -1}, {2}), -1);
  EXPECT_EQ(loss.item(), 0.0);
  backward(loss);
  for (double v : l.grad().to_vector()) EXPECT_EQ(v, 0.0);
}

TEST_F(AutogradOps, DropoutIsIdentityInEvalAndAtPZero) {
  Var x = parameter(randn({3, 4}));
  const size_t before = Tape::current().size();
  EXPECT_EQ(dropout(x, 0.5, 1, false).value().to_vector(), x.value().to_vector());
  EXPECT_EQ(dropout(x, 0.0, 1, true).value().to_vector(), x.value().to_vector());
  EXPECT_EQ(Tape::current().size(), before);
}

TEST_F(AutogradOps, DropoutMaskIsSeededAndItsGradient) {
  const double p = 0.4;
  Var x = parameter(Tensor::ones({400}, DType::F64));
  Var y = dropout(x, p, 77, true);
  EXPECT_EQ(y.value().to_vector(), dropout(constant(x.value()), p, 77, true).value().to_vector());
  EXPECT_NE(y.value().to_vector(), dropout(constant(x.value()), p, 78, true).value().to_vector());
  backward(sum_all(y));
  const auto yv = y.value().to_vector(), g = x.grad().to_vector();
  int zeros = 0;
  for (size_t i = 0; i < yv.size(); ++i) {
    ASSERT_TRUE(yv[i] == 0.0 || std::abs(yv[i] - 1.0 / (1.0 - p)) < 1e-15);
    EXPECT_EQ(g[i], yv[i]);  // x = 1, so y is the mask and dy/dx is the mask
    zeros += yv[i] == 0.0;
  }
  EXPECT_GT(zeros, 100);
  EXPECT_LT(zeros, 220);
}

TEST_F(AutogradOps, EmbeddingScatterAddsRepeatedIds) {
  Var w = parameter(randn({4, 2}));
  Tensor ids = Tensor::from_ints({3, 0, 3, 3}, {2, 2});
  Var y = embedding(w, ids);
  EXPECT_EQ(y.shape(), (Shape{2, 2, 2}));
  backward(sum_all(y));
  EXPECT_EQ(w.grad().to_vector(), (std::vector<double>{1, 1, 0, 0, 0, 0, 3, 3}));
}

}  // namespace
}  // namespace normlab
