// Softmax, cross-entropy, embedding and dropout kernels against naive computations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/ops.h"
#include "core/random.h"

namespace normlab {
namespace {

std::vector<double> naive_softmax_row(const std::vector<double>& x, size_t begin, size_t len) {
  double m = -INFINITY;
  for (size_t j = 0; j < len; ++j) m = std::max(m, x[begin + j]);
  std::vector<double> y(len);
  double s = 0;
  for (size_t j = 0; j < len; ++j) s += (y[j] = std::exp(x[begin + j] - m));
  for (double& v : y) v /= s;
  return y;
}

class SoftmaxTest : public ::testing::TestWithParam<DType> {};

TEST_P(SoftmaxTest, RowsSumToOneAndMatchNaive) {
  Generator gen(1);
  Tensor x = Tensor::randn({4, 7}, gen, 0.0, 3.0, GetParam());
  const std::vector<double> xv = x.to_vector(), y = ops::softmax(x, {}).to_vector();
  const double tol = GetParam() == DType::F32 ? 1e-6 : 1e-14;
  for (size_t r = 0; r < 4; ++r) {
    const auto want = naive_softmax_row(xv, r * 7, 7);
    double s = 0;
    for (size_t j = 0; j < 7; ++j) {
      EXPECT_NEAR(y[r * 7 + j], want[j], tol);
      EXPECT_GT(y[r * 7 + j], 0.0);
      s += y[r * 7 + j];
    }
    EXPECT_NEAR(s, 1.0, 10 * tol);
  }
}

TEST_P(SoftmaxTest, CausalMasksAboveTheDiagonalWithExactZeros) {
  Generator gen(2);
  const int64_t T = 5;
  Tensor x = Tensor::randn({2, T, T}, gen, 0.0, 1.0, GetParam());
  const std::vector<double> xv = x.to_vector(), y = ops::softmax(x, {.causal = true}).to_vector();
  const double tol = GetParam() == DType::F32 ? 1e-6 : 1e-14;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < T; ++i) {
      const size_t row = static_cast<size_t>((b * T + i) * T);
      const auto want = naive_softmax_row(xv, row, static_cast<size_t>(i + 1));  // columns 0..i
      double s = 0;
      for (int64_t j = 0; j < T; ++j) {
        if (j > i) {
          EXPECT_EQ(y[row + j], 0.0) << "masked (" << i << ", " << j << ")";
        } else {
          EXPECT_NEAR(y[row + j], want[j], tol);
        }
        s += y[row + j];
      }
      EXPECT_NEAR(s, 1.0, 10 * tol);
    }
  EXPECT_THROW(ops::softmax(Tensor::zeros({2, 3, 4}, GetParam()), {.causal = true}), Error);
}

// Scores far from zero (attention scores and logits reach hundreds in a diverging run): exp(1000)
// overflows in float64 and the float32 exp saturates at 3e38, so only a max-subtracted softmax and
// log-sum-exp give finite, correct values. The naive row subtracts the max too.
TEST_P(SoftmaxTest, LargeScoresNeedTheMaxSubtracted) {
  Generator gen(5);
  const int64_t T = 6;
  const Tensor x = ops::unary(UnaryOp::AddScalar, Tensor::randn({2, T, T}, gen, 0.0, 3.0, GetParam()), 1000.0);
  const std::vector<double> xv = x.to_vector();
  const double tol = GetParam() == DType::F32 ? 1e-6 : 1e-14;
  for (bool causal : {false, true}) {
    const std::vector<double> y = ops::softmax(x, {.causal = causal}).to_vector();
    for (int64_t r = 0; r < 2 * T; ++r) {
      const int64_t valid = causal ? r % T + 1 : T;
      const auto want = naive_softmax_row(xv, static_cast<size_t>(r * T), static_cast<size_t>(valid));
      for (int64_t j = 0; j < valid; ++j)
        ASSERT_NEAR(y[r * T + j], want[j], tol) << (causal ? "causal " : "") << r << " " << j;
    }
  }
  // Cross-entropy of the same rows as logits: lse = max + log sum exp(x - max).
  const Tensor targets = Tensor::from_ints(std::vector<int32_t>(2 * T, 1), {2 * T});
  Tensor lse = Tensor::empty({2 * T}, GetParam());
  const double loss = cpu_backend().cross_entropy_forward(x.reshape({2 * T, T}), targets, -1, lse);
  double expected = 0;
  for (int64_t r = 0; r < 2 * T; ++r)
    expected -= std::log(naive_softmax_row(xv, static_cast<size_t>(r * T), static_cast<size_t>(T))[1]);
  EXPECT_NEAR(loss, expected / (2 * T), GetParam() == DType::F32 ? 1e-4 : 1e-12);
}

// Attention's form: softmax(scale * x) over row i's window max(0, i - W) .. i, exact zeros elsewhere.
TEST_P(SoftmaxTest, ScaledWindowMatchesNaiveOnTheVisibleColumns) {
  Generator gen(6);
  const int64_t T = 7;
  const double scale = 0.37;
  const Tensor x = Tensor::randn({3, T, T}, gen, 0.0, 3.0, GetParam());
  std::vector<double> scaled = x.to_vector();
  for (double& v : scaled) v *= scale;
  const double tol = GetParam() == DType::F32 ? 1e-6 : 1e-14;
  for (int64_t window : {0, 1, 3}) {
    const std::vector<double> y = ops::softmax(x, {.causal = true, .window = window, .scale = scale}).to_vector();
    for (int64_t r = 0; r < 3 * T; ++r) {
      const int64_t i = r % T, lo = window > 0 ? std::max<int64_t>(0, i - window) : 0;
      const auto want = naive_softmax_row(scaled, static_cast<size_t>(r * T + lo), static_cast<size_t>(i + 1 - lo));
      for (int64_t j = 0; j < T; ++j) {
        const double got = y[static_cast<size_t>(r * T + j)];
        if (j < lo || j > i) ASSERT_EQ(got, 0.0) << "window " << window << " masked (" << i << ", " << j << ")";
        else ASSERT_NEAR(got, want[static_cast<size_t>(j - lo)], tol) << "window " << window << " (" << i << ", " << j << ")";
      }
    }
  }
  // A window without causal, or a negative one, is refused by name.
  EXPECT_THROW(ops::softmax(x, {.window = 2}), Error);
  EXPECT_THROW(ops::softmax(x, {.causal = true, .window = -1}), Error);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, SoftmaxTest, ::testing::Values(DType::F32, DType::F64),
                         [](const auto& info) { return info.param == DType::F32 ? "f32" : "f64"; });

// With z = s x: dx_i = s sum_j g_j y_j ([i == j] - y_i), for s = 1 and attention's kind of scale.
TEST(Softmax, BackwardIsTheJacobianTransposeProduct) {
  Generator gen(3);
  Tensor x = Tensor::randn({3, 4}, gen, 0.0, 1.0, DType::F64);
  Tensor dy = Tensor::randn({3, 4}, gen, 0.0, 1.0, DType::F64);
  for (double s : {1.0, 0.3}) {
    Tensor y = ops::softmax(x, {.scale = s});
    const std::vector<double> yv = y.to_vector(), gv = dy.to_vector();
    const std::vector<double> dx = ops::softmax_backward(y, dy, s).to_vector();
    for (int r = 0; r < 3; ++r)
      for (int i = 0; i < 4; ++i) {
        double want = 0;  // sum_j g_j dy_j/dx_i
        for (int j = 0; j < 4; ++j) want += gv[r * 4 + j] * yv[r * 4 + j] * ((i == j) - yv[r * 4 + i]);
        EXPECT_NEAR(dx[r * 4 + i], s * want, 1e-14) << "scale " << s;
      }
  }
}

TEST(CrossEntropy, ForwardMatchesNaiveAndSkipsIgnoredRows) {
  Generator gen(4);
  const int64_t N = 5, V = 6;
  Tensor logits = Tensor::randn({N, V}, gen, 0.0, 2.0, DType::F64);
  Tensor targets = Tensor::from_ints({2, -100, 5, 0, -100}, {N});
  Tensor lse = Tensor::empty({N}, DType::F64);
  const double loss = cpu_backend().cross_entropy_forward(logits, targets, -100, lse);

  const std::vector<double> x = logits.to_vector(), l = lse.to_vector();
  const std::vector<int32_t> t = targets.to_ints();
  double total = 0;
  int counted = 0;
  for (int64_t r = 0; r < N; ++r) {
    double s = 0;
    for (int64_t j = 0; j < V; ++j) s += std::exp(x[r * V + j]);
    EXPECT_NEAR(l[r], std::log(s), 1e-12);
    if (t[r] == -100) continue;
    total += -std::log(std::exp(x[r * V + t[r]]) / s);
    ++counted;
  }
  EXPECT_NEAR(loss, total / counted, 1e-12);

  // Backward with scale 1/3: (softmax - onehot) / 3 on counted rows, zero on ignored rows.
  Tensor d = Tensor::empty({N, V}, DType::F64);
  cpu_backend().cross_entropy_backward(logits, targets, -100, lse, 1.0 / 3.0, d);
  const std::vector<double> dv = d.to_vector();
  for (int64_t r = 0; r < N; ++r) {
    const auto p = naive_softmax_row(x, static_cast<size_t>(r * V), static_cast<size_t>(V));
    for (int64_t j = 0; j < V; ++j) {
      const double want = t[r] == -100 ? 0.0 : (p[j] - (j == t[r])) / 3.0;
      EXPECT_NEAR(dv[r * V + j], want, 1e-14);
    }
  }
}

// The mean loss is the same double at every thread count: rows are added in row order, not as
// per-thread partial sums. Large enough (1000 x 300) for the rows to be split over threads.
TEST(CrossEntropy, MeanLossIsBitwiseEqualAtOneAndTwoThreads) {
  Generator gen(8);
  const int64_t N = 1000, V = 300;
  const Tensor logits = Tensor::randn({N, V}, gen, 0.0, 3.0, DType::F32);
  std::vector<int32_t> t(static_cast<size_t>(N));
  for (auto& v : t) v = static_cast<int32_t>(gen.below(V));
  t[7] = -100;
  const Tensor targets = Tensor::from_ints(t, {N});
  const int before = num_threads();
  double loss[2];
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    Tensor lse = Tensor::empty({N}, DType::F32);
    loss[threads - 1] = cpu_backend().cross_entropy_forward(logits, targets, -100, lse);
  }
  set_num_threads(before);
  EXPECT_EQ(loss[0], loss[1]);
}

TEST(CrossEntropy, TargetOutOfRangeThrows) {
  Tensor lse = Tensor::empty({2}, DType::F64);
  EXPECT_THROW(cpu_backend().cross_entropy_forward(Tensor::zeros({2, 3}, DType::F64),
                                                   Tensor::from_ints({0, 3}, {2}), -1, lse),
               Error);
}

TEST(Embedding, GatherAndScatterAdd) {
  Tensor w = Tensor::from_vector({0, 1, 10, 11, 20, 21}, {3, 2}, DType::F64);
  Tensor ids = Tensor::from_ints({2, 0, 2}, {3});
  EXPECT_EQ(ops::embedding(w, ids).to_vector(), (std::vector<double>{20, 21, 0, 1, 20, 21}));
  Tensor dw = Tensor::zeros({3, 2}, DType::F64);
  cpu_backend().embedding_backward(ids, Tensor::from_vector({1, 2, 3, 4, 5, 6}, {3, 2}, DType::F64), dw);
  EXPECT_EQ(dw.to_vector(), (std::vector<double>{3, 4, 0, 0, 6, 8}));  // id 2 twice: summed
  EXPECT_THROW(ops::embedding(w, Tensor::from_ints({3}, {1})), Error);
  EXPECT_THROW(ops::embedding(w, Tensor::from_ints({-1}, {1})), Error);
}

TEST(Dropout, MaskIsDeterministicScaledAndKeepsAboutOneMinusP) {
  const double p = 0.25;
  Tensor a = Tensor::empty({10000}, DType::F64), b = Tensor::empty({10000}, DType::F64);
  cpu_backend().dropout_mask(9, p, a);
  cpu_backend().dropout_mask(9, p, b);
  EXPECT_EQ(a.to_vector(), b.to_vector());
  int kept = 0;
  for (double m : a.to_vector()) {
    ASSERT_TRUE(m == 0.0 || std::abs(m - 1.0 / (1.0 - p)) < 1e-15) << m;
    kept += m != 0.0;
  }
  EXPECT_NEAR(kept / 10000.0, 1.0 - p, 0.02);
  cpu_backend().dropout_mask(10, p, b);
  EXPECT_NE(a.to_vector(), b.to_vector());
}

}  // namespace
}  // namespace normlab
