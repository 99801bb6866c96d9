// The fused normalization ops against their plain-ops references (autograd/norm_reference.h),
// forward and every input gradient; float32 against float64; the gradient-check registry cases;
// one tape node per fused op; thread-count independence; argument errors. (Against the formula
// in long double, with finite-difference gradients: norm_formula_test.cpp.)
#include <gtest/gtest.h>

#include <string>

#include "autograd/gradcheck.h"
#include "autograd/norm_reference.h"
#include "core/backend.h"
#include "norm_test_util.h"

namespace normlab {
namespace {

using norm_testing::forward_backward;
using norm_testing::make_inputs;
using norm_testing::max_abs;
using norm_testing::max_abs_diff;

struct Pair {
  std::string name;
  Shape x_shape;
  int params;  // inputs after x
  norm_testing::Fn fused, reference;
};

std::vector<Pair> pairs() {
  using V = std::vector<Var>;
  return {
      {"layer_norm", {3, 5, 8}, 2, [](const V& v) { return layer_norm(v[0], v[1], v[2], 1e-5); },
       [](const V& v) { return reference::layer_norm(v[0], v[1], v[2], 1e-5); }},
      {"layer_norm_gamma_only", {4, 6}, 1, [](const V& v) { return layer_norm(v[0], v[1], Var(), 1e-5); },
       [](const V& v) { return reference::layer_norm(v[0], v[1], Var(), 1e-5); }},
      {"layer_norm_no_affine", {2, 3, 7}, 0, [](const V& v) { return layer_norm(v[0], Var(), Var(), 1e-5); },
       [](const V& v) { return reference::layer_norm(v[0], Var(), Var(), 1e-5); }},
      {"rms_norm", {3, 5, 8}, 1, [](const V& v) { return rms_norm(v[0], v[1], 1e-6); },
       [](const V& v) { return reference::rms_norm(v[0], v[1], 1e-6); }},
      {"rms_norm_unit_offset", {3, 5, 8}, 1, [](const V& v) { return rms_norm(v[0], v[1], 1e-6, true); },
       [](const V& v) { return reference::rms_norm(v[0], v[1], 1e-6, true); }},
      {"rms_norm_no_weight", {5, 9}, 0, [](const V& v) { return rms_norm(v[0], Var(), 1e-5); },
       [](const V& v) { return reference::rms_norm(v[0], Var(), 1e-5); }},
      {"group_norm_1", {3, 5, 8}, 2, [](const V& v) { return group_norm(v[0], v[1], v[2], 1, 1e-5); },
       [](const V& v) { return reference::group_norm(v[0], v[1], v[2], 1, 1e-5); }},
      {"group_norm_2", {3, 5, 8}, 2, [](const V& v) { return group_norm(v[0], v[1], v[2], 2, 1e-5); },
       [](const V& v) { return reference::group_norm(v[0], v[1], v[2], 2, 1e-5); }},
      {"group_norm_3", {4, 12}, 2, [](const V& v) { return group_norm(v[0], v[1], v[2], 3, 1e-5); },
       [](const V& v) { return reference::group_norm(v[0], v[1], v[2], 3, 1e-5); }},
      {"batch_norm", {3, 5, 8}, 2,
       [](const V& v) { return batch_norm(v[0], v[1], v[2], Tensor(), Tensor(), true, 0.1, 1e-5); },
       [](const V& v) { return reference::batch_norm(v[0], v[1], v[2], 1e-5); }},
      {"batch_norm_2d", {6, 4}, 2,
       [](const V& v) { return batch_norm(v[0], v[1], v[2], Tensor(), Tensor(), true, 0.1, 1e-5); },
       [](const V& v) { return reference::batch_norm(v[0], v[1], v[2], 1e-5); }},
  };
}

TEST(NormFusedVsReference, ForwardAndEveryGradientMatchInFloat64) {
  for (const Pair& p : pairs()) {
    SCOPED_TRACE(p.name);
    const auto inputs = make_inputs(p.x_shape, p.params);
    const auto fused = forward_backward(p.fused, inputs);
    const auto ref = forward_backward(p.reference, inputs);
    EXPECT_LE(max_abs_diff(fused.y, ref.y), 1e-10);
    ASSERT_EQ(fused.grads.size(), inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      SCOPED_TRACE("input " + std::to_string(i));
      ASSERT_EQ(fused.grads[i].size(), static_cast<size_t>(inputs[i].numel()));  // the graph is not cut
      EXPECT_GT(max_abs(fused.grads[i]), 1e-3);                                   // and not all zero
      EXPECT_LE(max_abs_diff(fused.grads[i], ref.grads[i]), 1e-10);
    }
  }
}

TEST(NormFusedVsReference, Float32IsCloseToFloat64) {
  for (const Pair& p : pairs()) {
    SCOPED_TRACE(p.name);
    const auto f64 = forward_backward(p.fused, make_inputs(p.x_shape, p.params, DType::F64));
    const auto f32 = forward_backward(p.fused, make_inputs(p.x_shape, p.params, DType::F32));
    EXPECT_LE(max_abs_diff(f32.y, f64.y), 1e-5);
    for (size_t i = 0; i < f64.grads.size(); ++i) EXPECT_LE(max_abs_diff(f32.grads[i], f64.grads[i]), 1e-4);
  }
}

// 2500 rows: the backward kernels cut them into 64 chunks of 40 rows and fold their float staging
// sums into double every 16 rows, so the weight gradients cross every chunk and stage boundary.
TEST(NormFusedVsReference, ManyRowsCrossChunkBoundaries) {
  for (const Pair& p : pairs()) {
    if (p.name.rfind("batch_norm", 0) == 0) continue;  // its statistics run over rows: another kernel
    SCOPED_TRACE(p.name);
    Shape shape = {2500, p.x_shape.back()};
    const auto inputs = make_inputs(shape, p.params);
    const auto fused = forward_backward(p.fused, inputs);
    const auto ref = forward_backward(p.reference, inputs);
    for (size_t i = 0; i < inputs.size(); ++i) EXPECT_LE(max_abs_diff(fused.grads[i], ref.grads[i]), 1e-9) << i;
    const auto f32 = forward_backward(p.fused, make_inputs(shape, p.params, DType::F32));
    for (size_t i = 0; i < inputs.size(); ++i)  // relative to the gradient's size (sums of 2500 terms)
      EXPECT_LE(max_abs_diff(f32.grads[i], fused.grads[i]), 2e-6 * std::max(1.0, max_abs(fused.grads[i]))) << i;
  }
}

TEST(NormFused, EachIsOneNodeOnTheTape) {
  const auto in = make_inputs({2, 3, 8}, 2);
  const Var x = parameter(in[0]), g = parameter(in[1]), b = parameter(in[2]);
  const std::vector<std::pair<std::string, std::function<Var()>>> ops = {
      {"layer_norm", [&] { return layer_norm(x, g, b); }},
      {"rms_norm", [&] { return rms_norm(x, g); }},
      {"group_norm", [&] { return group_norm(x, g, b, 2); }},
      {"batch_norm", [&] { return batch_norm(x, g, b, Tensor(), Tensor(), true); }},
      {"identity_norm", [&] { return identity_norm(x); }},
  };
  for (const auto& [name, op] : ops) {
    Tape::current().clear();
    const Var y = op();
    ASSERT_EQ(Tape::current().size(), 1u) << name;
    EXPECT_EQ(std::string(Tape::current().nodes().back().op), name);
    EXPECT_TRUE(y.requires_grad());
  }
  Tape::current().clear();
}

TEST(NormFused, IdentityNormPassesValuesAndGradientsThrough) {
  const auto in = make_inputs({3, 4}, 0);
  const auto r = forward_backward([](const std::vector<Var>& v) { return identity_norm(v[0]); }, in);
  EXPECT_EQ(r.y, in[0].to_vector());
  Generator gen(7);  // the same seed forward_backward used for w: dL/dx = w
  EXPECT_EQ(r.grads[0], Tensor::randn({3, 4}, gen, 0.0, 1.0, DType::F64).to_vector());
}

TEST(NormFused, WeightGradientsDoNotDependOnTheThreadCount) {
  // 64 x 1024 = 65536 elements: above kParallelElements, so the parallel paths run.
  const auto in = make_inputs({64, 1024}, 2, DType::F32, 3);
  const std::vector<norm_testing::Fn> fns = {
      [](const std::vector<Var>& v) { return layer_norm(v[0], v[1], v[2]); },
      [](const std::vector<Var>& v) { return rms_norm(v[0], v[1]); },
      [](const std::vector<Var>& v) { return group_norm(v[0], v[1], v[2], 8); },
      [](const std::vector<Var>& v) { return batch_norm(v[0], v[1], v[2], Tensor(), Tensor(), true); },
  };
  const int before = num_threads();
  for (size_t k = 0; k < fns.size(); ++k) {
    SCOPED_TRACE(k);
    set_num_threads(1);
    const auto one = forward_backward(fns[k], in);
    set_num_threads(4);
    const auto four = forward_backward(fns[k], in);
    EXPECT_EQ(one.y, four.y);
    EXPECT_EQ(one.grads, four.grads);  // bitwise: fixed summation order
  }
  set_num_threads(before);
}

TEST(NormGradcheck, EveryNormCasePasses) {
  const std::vector<std::string> names = {"layer_norm", "layer_norm_no_affine", "rms_norm",
                                          "rms_norm_unit_offset", "group_norm", "batch_norm",
                                          "batch_norm_eval", "identity_norm", "residual_norm_block"};
  for (const std::string& name : names) {
    const OpCase* c = find_op_case(name);
    ASSERT_NE(c, nullptr) << name;
    const auto results = gradcheck(c->fn, c->make_inputs(0, {}), c->input_names, c->differentiable, c->options);
    EXPECT_EQ(results.size(), c->differentiable.size());
    for (const InputCheck& r : results)
      EXPECT_TRUE(r.passed) << name << " d/d" << r.input << ": max rel error " << r.max_rel_error;
  }
}

// ---- argument errors ----

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(NormErrors, RmsNormEpsMustBePositive) {
  const Var x = constant(Tensor::ones({2, 4}));
  EXPECT_EQ(error_of([&] { rms_norm(x, Var(), 0.0); }), "[rms_norm] eps must be > 0, got 0");
  const std::string negative = error_of([&] { rms_norm(x, Var(), -1e-6); });
  EXPECT_NE(negative.find("[rms_norm]"), std::string::npos) << negative;
  EXPECT_NE(negative.find("eps"), std::string::npos) << negative;
  EXPECT_NE(error_of([&] { layer_norm(x, Var(), Var(), -1.0); }).find("[layer_norm] eps"), std::string::npos);
}

TEST(NormErrors, WrongParameterShapeNamesBothShapes) {
  const Var x = constant(Tensor::ones({3, 5, 8}));
  const Var bad = constant(Tensor::ones({7}));
  const std::string ln = error_of([&] { layer_norm(x, bad, Var()); });
  EXPECT_NE(ln.find("[layer_norm]"), std::string::npos) << ln;
  EXPECT_NE(ln.find("(7,)"), std::string::npos) << ln;
  EXPECT_NE(ln.find("(3, 5, 8)"), std::string::npos) << ln;
  const std::string rms = error_of([&] { rms_norm(x, constant(Tensor::ones({8, 1}))); });
  EXPECT_NE(rms.find("[rms_norm]"), std::string::npos) << rms;
  EXPECT_NE(rms.find("(8, 1)"), std::string::npos) << rms;
  EXPECT_NE(error_of([&] { batch_norm(x, Var(), bad, Tensor(), Tensor(), true); }).find("[batch_norm]"),
            std::string::npos);
  const Var f64 = constant(Tensor::ones({8}, DType::F64));
  EXPECT_NE(error_of([&] { layer_norm(x, f64, Var()); }).find("dtype"), std::string::npos);
}

TEST(NormErrors, GroupsMustDivideChannels) {
  const Var x = constant(Tensor::ones({2, 8}));
  const std::string e = error_of([&] { group_norm(x, Var(), Var(), 3); });
  EXPECT_NE(e.find("[group_norm]"), std::string::npos) << e;
  EXPECT_NE(e.find("3 groups"), std::string::npos) << e;
  EXPECT_NE(error_of([&] { group_norm(x, Var(), Var(), 0); }), "");
  EXPECT_EQ(error_of([&] { group_norm(x, Var(), Var(), 4); }), "");
}

}  // namespace
}  // namespace normlab
