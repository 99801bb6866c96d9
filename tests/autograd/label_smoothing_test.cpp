// label_smoothed_cross_entropy against fairseq's formula computed by hand in float64 (per counted
// token (1 - eps - eps_i) nll + eps_i smooth, eps_i = eps / (V - 1), then the mean), its gradient
// against softmax - q with q built by hand, facts that need no formula (uniform logits give log V
// for every epsilon; logits = log q are the minimum: zero gradient, loss = entropy of q), and
// cross_entropy bitwise at epsilon 0. The finite-difference check is the registry's case.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "autograd/ops.h"
#include "core/random.h"
#include "expect_error.h"

namespace normlab {
namespace {

struct Loss {
  double value;
  std::vector<double> grad;  // dL/dlogits
};

Loss run(const std::function<Var(const Var&)>& f, const Tensor& logits) {
  Var x = parameter(logits.clone());
  const Var loss = f(x);
  const double value = loss.item();
  backward(loss);
  return {value, x.grad().to_vector()};
}

// fairseq's label_smoothed_nll_loss over rows of x (N, V), as a mean over the counted rows.
double fairseq_formula(const std::vector<double>& x, const std::vector<int32_t>& targets, int64_t vocab,
                       double eps, int32_t ignore_index) {
  const double eps_i = eps / static_cast<double>(vocab - 1);
  double total = 0.0;
  int64_t counted = 0;
  for (size_t r = 0; r < targets.size(); ++r) {
    if (targets[r] == ignore_index) continue;
    const double* row = x.data() + r * static_cast<size_t>(vocab);
    double lse = 0.0;
    for (int64_t j = 0; j < vocab; ++j) lse += std::exp(row[j]);
    lse = std::log(lse);
    const double nll = lse - row[targets[r]];
    double smooth = 0.0;  // -sum_j log p_j
    for (int64_t j = 0; j < vocab; ++j) smooth += lse - row[j];
    total += (1.0 - eps - eps_i) * nll + eps_i * smooth;
    counted += 1;
  }
  return total / static_cast<double>(counted);
}

// dL/dx[r, j] = (p_rj - q_rj) / n on counted rows, q = 1 - eps on the target, eps / (V - 1) elsewhere.
std::vector<double> softmax_minus_q(const std::vector<double>& x, const std::vector<int32_t>& targets,
                                    int64_t vocab, double eps, int32_t ignore_index) {
  const double n = static_cast<double>(std::count_if(targets.begin(), targets.end(),
                                                     [&](int32_t t) { return t != ignore_index; }));
  std::vector<double> d(x.size(), 0.0);
  for (size_t r = 0; r < targets.size(); ++r) {
    if (targets[r] == ignore_index) continue;
    double z = 0.0;
    for (int64_t j = 0; j < vocab; ++j) z += std::exp(x[r * static_cast<size_t>(vocab) + static_cast<size_t>(j)]);
    for (int64_t j = 0; j < vocab; ++j) {
      const size_t i = r * static_cast<size_t>(vocab) + static_cast<size_t>(j);
      const double q = j == targets[r] ? 1.0 - eps : eps / static_cast<double>(vocab - 1);
      d[i] = (std::exp(x[i]) / z - q) / n;
    }
  }
  return d;
}

TEST(LabelSmoothedCrossEntropy, MatchesFairseqFormulaAndSoftmaxMinusQ) {
  // (2, 4) tokens over V = 7; ignored positions: -1 (outside the vocabulary) and 0 (fairseq's pad id).
  const std::vector<int32_t> with_minus_one = {3, -1, 0, 6, 2, -1, 5, 1};
  const std::vector<int32_t> with_pad_zero = {3, 0, 4, 6, 2, 0, 5, 1};
  Generator gen(17);
  const Tensor logits = Tensor::randn({2, 4, 7}, gen, 0.0, 2.0, DType::F64);
  const std::vector<double> x = logits.to_vector();
  for (int32_t ignore : {-1, 0}) {
    const std::vector<int32_t>& t = ignore == -1 ? with_minus_one : with_pad_zero;
    for (double eps : {0.1, 0.35}) {
      const Loss got = run([&](const Var& v) {
        return label_smoothed_cross_entropy(v, Tensor::from_ints(t, {2, 4}), eps, ignore);
      }, logits);
      EXPECT_NEAR(got.value, fairseq_formula(x, t, 7, eps, ignore), 1e-14) << "eps " << eps << " ignore " << ignore;
      const std::vector<double> want = softmax_minus_q(x, t, 7, eps, ignore);
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_NEAR(got.grad[i], want[i], 1e-15) << i << " eps " << eps << " ignore " << ignore;
        if (t[i / 7] == ignore) {
          EXPECT_EQ(got.grad[i], 0.0) << i;
        }
      }
    }
  }
}

TEST(LabelSmoothedCrossEntropy, Float32FollowsTheFloat64Formula) {
  const std::vector<int32_t> t = {4, 0, -1, 9, 2, 2};
  Generator gen(5);
  const Tensor logits = Tensor::randn({6, 10}, gen, 0.0, 3.0, DType::F32);
  const Loss got = run([&](const Var& v) { return label_smoothed_cross_entropy(v, Tensor::from_ints(t, {6}), 0.1); },
                       logits);
  EXPECT_NEAR(got.value, fairseq_formula(logits.to_vector(), t, 10, 0.1, -1), 2e-6);
  const std::vector<double> want = softmax_minus_q(logits.to_vector(), t, 10, 0.1, -1);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got.grad[i], want[i], 1e-7) << i;
}

TEST(LabelSmoothedCrossEntropy, UniformLogitsCostLogVAndLogQIsTheMinimum) {
  const int64_t vocab = 6;
  const double eps = 0.3, eps_i = eps / 5.0;
  const std::vector<int32_t> t = {2, 5, -1};
  // Uniform p: the cross-entropy against any distribution q is log V.
  const Loss uniform = run([&](const Var& v) {
    return label_smoothed_cross_entropy(v, Tensor::from_ints(t, {3}), eps);
  }, Tensor::full({3, vocab}, 0.4, DType::F64));
  EXPECT_NEAR(uniform.value, std::log(6.0), 1e-15);
  // logits = log q: p = q, the gradient vanishes and the loss is q's entropy.
  std::vector<double> log_q(static_cast<size_t>(3 * vocab));
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t j = 0; j < vocab; ++j)
      log_q[static_cast<size_t>(r * vocab + j)] = std::log(j == t[static_cast<size_t>(r)] ? 1.0 - eps : eps_i);
  const Loss at_q = run([&](const Var& v) {
    return label_smoothed_cross_entropy(v, Tensor::from_ints(t, {3}), eps);
  }, Tensor::from_vector(log_q, {3, vocab}, DType::F64));
  EXPECT_NEAR(at_q.value, -(1.0 - eps) * std::log(1.0 - eps) - 5.0 * eps_i * std::log(eps_i), 1e-15);
  for (size_t i = 0; i < at_q.grad.size(); ++i) EXPECT_NEAR(at_q.grad[i], 0.0, 1e-16) << i;
}

TEST(LabelSmoothedCrossEntropy, EpsilonZeroIsCrossEntropyBitwise) {
  const std::vector<int32_t> t = {1, -1, 4, 0, 3, 3};
  for (DType dtype : {DType::F64, DType::F32}) {
    Generator gen(2);
    const Tensor logits = Tensor::randn({2, 3, 5}, gen, 0.0, 2.0, dtype);
    const Tensor targets = Tensor::from_ints(t, {2, 3});
    const Loss smoothed = run([&](const Var& v) { return label_smoothed_cross_entropy(v, targets, 0.0); }, logits);
    const Loss plain = run([&](const Var& v) { return cross_entropy(v, targets); }, logits);
    EXPECT_EQ(smoothed.value, plain.value);
    for (size_t i = 0; i < plain.grad.size(); ++i) EXPECT_EQ(smoothed.grad[i], plain.grad[i]) << i;
  }
}

TEST(LabelSmoothedCrossEntropy, AllIgnoredIsZeroLossAndGradientAsCrossEntropy) {
  const Tensor logits = Tensor::full({2, 4}, 1.5, DType::F64);
  const Tensor targets = Tensor::from_ints({-1, -1}, {2});
  const Loss smoothed = run([&](const Var& v) { return label_smoothed_cross_entropy(v, targets, 0.1); }, logits);
  const Loss plain = run([&](const Var& v) { return cross_entropy(v, targets); }, logits);
  EXPECT_EQ(smoothed.value, 0.0);
  EXPECT_EQ(plain.value, 0.0);
  for (size_t i = 0; i < smoothed.grad.size(); ++i) EXPECT_EQ(smoothed.grad[i], 0.0) << i;
}

using test::expect_error;

TEST(LabelSmoothedCrossEntropy, ErrorsNameTheOpTheValueAndThePosition) {
  const Var logits(Tensor::zeros({2, 3, 5}, DType::F64));
  const Tensor targets = Tensor::from_ints({0, 1, 2, 3, 4, 0}, {2, 3});
  const char* op = "[label_smoothed_cross_entropy]";
  expect_error([&] { label_smoothed_cross_entropy(logits, targets, 1.0); }, {op, "epsilon", "[0, 1)", "1"});
  expect_error([&] { label_smoothed_cross_entropy(logits, targets, -0.1); }, {op, "epsilon", "-0.1"});
  expect_error([&] { label_smoothed_cross_entropy(logits, Tensor::from_ints({0, 1, 2, 3, 7, 0}, {2, 3}), 0.1); },
               {op, "target 7", "(1, 1)", "(2, 3)", "[0, 5)"});
  expect_error([&] { label_smoothed_cross_entropy(logits, Tensor::from_ints({0, 1}, {2}), 0.1); },
               {op, "(2,)", "(2, 3, 5)"});
  expect_error([&] { label_smoothed_cross_entropy(Var(Tensor::zeros({2, 5}, DType::BF16)), Tensor::from_ints({0, 1}, {2}), 0.1); },
               {op, "float32 or float64", "bfloat16"});
  expect_error([&] { label_smoothed_cross_entropy(Var(Tensor::zeros({2, 1}, DType::F64)), Tensor::from_ints({0, 0}, {2}), 0.1); },
               {op, "V >= 2", "(2, 1)"});
}

}  // namespace
}  // namespace normlab
