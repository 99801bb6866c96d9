// Every fused normalization against its formula written out in long double (norm_formula.h),
// forward and every input gradient, the gradients by finite differences of that formula: nothing
// is shared with the kernels (core/cpu/cpu_norm.cpp, cpu_batch_norm.cpp) or the plain-ops
// references (autograd/norm_reference.cpp). Then float32 LayerNorm on rows far from zero.
#include <gtest/gtest.h>

#include <string>

#include "norm_formula.h"
#include "norm_test_util.h"

namespace normlab {
namespace {

namespace nf = norm_formula;
using norm_testing::forward_backward;
using norm_testing::make_inputs;

struct FormulaCase {
  std::string name;
  Shape x_shape;
  bool gamma, beta;
  nf::Spec spec;
  norm_testing::Fn fused;
};

const Tensor& running_mean() {
  static const Tensor t = Tensor::from_vector({0.5, -1.0, 0.0, 2.0, 0.25, -0.5, 1.0, 0.1}, {8}, DType::F64);
  return t;
}
const Tensor& running_var() {
  static const Tensor t = Tensor::from_vector({1.0, 4.0, 0.25, 9.0, 2.0, 0.5, 1.5, 3.0}, {8}, DType::F64);
  return t;
}

nf::Vec as_ld(const std::vector<double>& v) { return nf::Vec(v.begin(), v.end()); }

nf::Spec spec(nf::Kind kind, long double eps, int64_t groups = 1) {
  nf::Spec s;
  s.kind = kind;
  s.eps = eps;
  s.groups = groups;
  if (kind == nf::Kind::BatchEval) {
    s.running_mean = as_ld(running_mean().to_vector());
    s.running_var = as_ld(running_var().to_vector());
  }
  return s;
}

std::vector<FormulaCase> cases() {
  using V = std::vector<Var>;
  const auto eval_bn = [](const V& v) {
    return batch_norm(v[0], v[1], v[2], running_mean(), running_var(), false, 0.1, 1e-5);
  };
  return {
      {"layer_norm", {3, 5, 8}, true, true, spec(nf::Kind::Layer, 1e-5L),
       [](const V& v) { return layer_norm(v[0], v[1], v[2], 1e-5); }},
      {"layer_norm_no_affine", {4, 8}, false, false, spec(nf::Kind::Layer, 1e-5L),
       [](const V& v) { return layer_norm(v[0], Var(), Var(), 1e-5); }},
      {"rms_norm", {3, 5, 8}, true, false, spec(nf::Kind::Rms, 1e-6L),
       [](const V& v) { return rms_norm(v[0], v[1], 1e-6); }},
      {"rms_norm_no_weight", {4, 8}, false, false, spec(nf::Kind::Rms, 1e-6L),
       [](const V& v) { return rms_norm(v[0], Var(), 1e-6); }},
      // Gemma: the stored weight is near 0 (make_inputs_for shifts it) and acts as 1 + w.
      {"rms_norm_unit_offset", {3, 5, 8}, true, false, spec(nf::Kind::RmsUnitOffset, 1e-6L),
       [](const V& v) { return rms_norm(v[0], v[1], 1e-6, true); }},
      {"group_norm_1", {3, 5, 8}, true, true, spec(nf::Kind::Group, 1e-5L, 1),
       [](const V& v) { return group_norm(v[0], v[1], v[2], 1, 1e-5); }},
      {"group_norm_2", {3, 5, 8}, true, true, spec(nf::Kind::Group, 1e-5L, 2),
       [](const V& v) { return group_norm(v[0], v[1], v[2], 2, 1e-5); }},
      {"group_norm_4", {6, 8}, true, true, spec(nf::Kind::Group, 1e-5L, 4),
       [](const V& v) { return group_norm(v[0], v[1], v[2], 4, 1e-5); }},
      {"batch_norm_train", {3, 5, 8}, true, true, spec(nf::Kind::BatchTrain, 1e-5L),
       [](const V& v) { return batch_norm(v[0], v[1], v[2], Tensor(), Tensor(), true, 0.1, 1e-5); }},
      {"batch_norm_eval", {3, 5, 8}, true, true, spec(nf::Kind::BatchEval, 1e-5L), eval_bn},
  };
}

// x, then gamma (Gemma's stored weight shifted to 0.1 N(0, 1)), then beta, as float64 tensors.
std::vector<Tensor> make_inputs_for(const FormulaCase& c) {
  std::vector<Tensor> in = make_inputs(c.x_shape, (c.gamma ? 1 : 0) + (c.beta ? 1 : 0));
  if (c.spec.kind == nf::Kind::RmsUnitOffset) in[1] = ops::unary(UnaryOp::AddScalar, in[1], -1.0);
  return in;
}

// The formula's y for the inputs in make_inputs_for's order.
nf::Vec formula_forward(const FormulaCase& c, const std::vector<nf::Vec>& in) {
  const nf::Vec none;
  const nf::Vec& gamma = c.gamma ? in[1] : none;
  const nf::Vec& beta = c.beta ? in[c.gamma ? 2 : 1] : none;
  return nf::forward(c.spec, in[0], c.x_shape.back(), gamma, beta);
}

using Formula = std::function<nf::Vec(const std::vector<nf::Vec>&)>;

// How close a kernel must come: |y - y_formula| <= y_abs, and per input
// |grad - grad_formula| <= grad_rel * max(1, max |grad_formula|).
struct Tolerance {
  double y_abs, grad_rel;
};
// float64 kernels: the long-double differences are good to ~1e-12, the kernels round a few times
// per element (~1e-15 relative) and sum fewer than 100 terms; |y| and |grad| are O(1-10).
// Measured worst: y 2e-15, grad 1.5e-12 relative.
constexpr Tolerance kFloat64{1e-12, 1e-10};

// fused(inputs) against formula(inputs): y, and every input's gradient of forward_backward's loss
// L = sum(y * w) (w ~ N(0, 1) from Generator(7), rounded to the inputs' dtype) against central
// differences of the formula.
void expect_matches_formula(const norm_testing::Fn& fused, const std::vector<Tensor>& inputs,
                            const Formula& formula, Tolerance tol = kFloat64) {
  const norm_testing::Run run = forward_backward(fused, inputs);
  std::vector<nf::Vec> ld;
  for (const Tensor& t : inputs) ld.push_back(as_ld(t.to_vector()));
  const nf::Vec y = formula(ld);
  ASSERT_EQ(run.y.size(), y.size());
  for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(run.y[i], static_cast<double>(y[i]), tol.y_abs) << "y " << i;
  Generator gen(7);
  const Tensor w_tensor = Tensor::randn(inputs[0].shape(), gen, 0.0, 1.0, DType::F64).to(inputs[0].dtype());
  const nf::Vec w = as_ld(w_tensor.to_vector());
  const auto loss = [&](const std::vector<nf::Vec>& in) {
    const nf::Vec yy = formula(in);
    long double s = 0;
    for (size_t i = 0; i < yy.size(); ++i) s += yy[i] * w[i];
    return s;
  };
  const std::vector<nf::Vec> expected = nf::finite_difference_gradients(loss, ld);
  ASSERT_EQ(run.grads.size(), expected.size());
  for (size_t k = 0; k < expected.size(); ++k) {
    ASSERT_EQ(run.grads[k].size(), expected[k].size()) << "input " << k;
    long double largest = 1;
    for (long double g : expected[k]) largest = std::max(largest, std::abs(g));
    const double bound = tol.grad_rel * static_cast<double>(largest);
    for (size_t i = 0; i < expected[k].size(); ++i)
      ASSERT_NEAR(run.grads[k][i], static_cast<double>(expected[k][i]), bound) << "input " << k << " element " << i;
  }
}

TEST(NormFormula, ForwardAndEveryGradientMatchTheLongDoubleFormula) {
  for (const FormulaCase& c : cases()) {
    SCOPED_TRACE(c.name);
    expect_matches_formula(c.fused, make_inputs_for(c),
                           [&c](const std::vector<nf::Vec>& in) { return formula_forward(c, in); });
  }
}

// GroupNorm with one group and LayerNorm each equal the LayerNorm formula, forward and backward.
// (They share a kernel, so comparing them with each other would prove nothing.)
TEST(NormFormula, GroupNormWithOneGroupAndLayerNormBothMatchTheFormula) {
  const std::vector<Tensor> inputs = make_inputs({4, 10}, 2);
  const Formula layer = [](const std::vector<nf::Vec>& in) {
    return nf::forward(spec(nf::Kind::Layer, 1e-5L), in[0], 10, in[1], in[2]);
  };
  expect_matches_formula([](const std::vector<Var>& v) { return group_norm(v[0], v[1], v[2], 1, 1e-5); },
                         inputs, layer);
  expect_matches_formula([](const std::vector<Var>& v) { return layer_norm(v[0], v[1], v[2], 1e-5); },
                         inputs, layer);
}

// float32 rows of mean 1e4 with noise of std 1e-2 .. 1, as activations far from zero are.
// Each row's last element is set so that the row's exact mean is 1e4, representable in float32:
// the kernel stores the mean in float32 (backward reads it back), and an unrepresentable mean would
// move every xhat by up to half an ulp of 1e4 (2^-11) / std, which is storage, not the variance
// algorithm this test is about. With an exact mean, x - mean is exact in float32 and the
// statistics are summed in double, so only float32 roundings of rstd, the products, gamma and beta
// remain: ~4 roundings of 6e-8 relative on |y| < 5, about 1e-6; y_abs = 1e-5 leaves a 10x margin.
// The same argument bounds each gradient relative to its largest element (|dx| ~ rstd, up to
// 100): 2e-6. Measured worst: y 4e-7, gradients 1.5e-7 relative.
// A one-pass float32 variance E[x^2] - E[x]^2 rounds x^2 ~ 1e8 to multiples of 8, so the variance
// (1e-4 .. 1) is lost entirely (measured: y off by 0.47). (A one-pass variance in double is exact
// on these rows, whose mean is exact: the float64 test below catches that one.)
std::vector<Tensor> rows_with_mean_1e4(int64_t C) {
  Generator gen(21);
  std::vector<float> x;
  for (double noise_std : {1e-2, 3e-2, 1e-1, 3e-1, 1.0}) {
    for (int row = 0; row < 3; ++row) {
      double sum = 0;  // exact: every value is a multiple of 2^-10 below 2^14
      for (int64_t j = 0; j + 1 < C; ++j) {
        x.push_back(static_cast<float>(1e4 + noise_std * gen.normal()));
        sum += x.back();
      }
      x.push_back(static_cast<float>(1e4 * static_cast<double>(C) - sum));
      EXPECT_EQ(static_cast<double>(x.back()), 1e4 * static_cast<double>(C) - sum);  // representable
    }
  }
  std::vector<double> xd(x.begin(), x.end());
  const int64_t rows = static_cast<int64_t>(xd.size()) / C;
  std::vector<Tensor> in = make_inputs({rows, C}, 2, DType::F32);
  in[0] = Tensor::from_vector(xd, {rows, C}, DType::F32);
  return in;
}

const Formula& layer_norm_formula_64() {
  static const Formula f = [](const std::vector<nf::Vec>& in) {
    return nf::forward(spec(nf::Kind::Layer, 1e-5L), in[0], 64, in[1], in[2]);
  };
  return f;
}

Var layer_norm_of(const std::vector<Var>& v) { return layer_norm(v[0], v[1], v[2], 1e-5); }

TEST(NormFormula, Float32LayerNormOfRowsWithMean1e4MatchesTheFormula) {
  expect_matches_formula(layer_norm_of, rows_with_mean_1e4(64), layer_norm_formula_64(), Tolerance{1e-5, 2e-6});
}

// float64 rows of mean 1e6 with noise of std 1e-2 .. 1. The stored mean is off by at most half an
// ulp of 1e6 (6e-11), which moves xhat by 6e-9 at std 1e-2; the rest rounds at 1e-16: y_abs =
// 1e-7, gradients 1e-6 relative (the long-double differences at rstd = 100 are good to ~1e-8).
// Measured worst: y 6e-9, gradients 1e-8 relative. A one-pass variance in double rounds
// E[x^2] ~ 1e12 to ~1e-4, the size of the variance itself at std 1e-2.
TEST(NormFormula, Float64LayerNormOfRowsWithMean1e6MatchesTheFormula) {
  Generator gen(22);
  std::vector<double> x;
  for (double noise_std : {1e-2, 1e-1, 1.0})
    for (int64_t j = 0; j < 3 * 64; ++j) x.push_back(1e6 + noise_std * gen.normal());
  std::vector<Tensor> in = make_inputs({9, 64}, 2);
  in[0] = Tensor::from_vector(x, {9, 64}, DType::F64);
  expect_matches_formula(layer_norm_of, in, layer_norm_formula_64(), Tolerance{1e-7, 1e-6});
}

}  // namespace
}  // namespace normlab
