// Every registered op case against central finite differences in float64 (the same registry that
// drives `normlab gradcheck`), plus a check that the checker itself catches a wrong backward.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "core/ops.h"
#include "core/random.h"

namespace normlab {
namespace {

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const OpCase& c : op_cases()) names.push_back(c.name);
  return names;
}

class OpGradcheck : public ::testing::TestWithParam<std::string> {};

TEST_P(OpGradcheck, AnalyticMatchesFiniteDifferences) {
  const OpCase* c = find_op_case(GetParam());
  ASSERT_NE(c, nullptr);
  const std::vector<Tensor> inputs = c->make_inputs(0, {});
  const auto results = gradcheck(c->fn, inputs, c->input_names, c->differentiable, c->options);
  ASSERT_EQ(results.size(), c->differentiable.size());
  ASSERT_FALSE(results.empty()) << c->name << " checks no input";
  for (const InputCheck& r : results) {
    EXPECT_GT(r.elements, 0) << c->name << "." << r.input;
    EXPECT_TRUE(r.passed) << c->name << "." << r.input << ": max_rel_err " << r.max_rel_error
                          << " (abs " << r.max_abs_error << ") > tolerance " << c->options.tolerance;
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpGradcheck, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(OpRegistry, HasEveryRequiredCaseOnce) {
  const std::vector<std::string> names = case_names();
  for (const char* required :
       {"sum", "mean", "reshape", "transpose", "split_heads", "merge_heads", "narrow_last", "matmul",
        "matmul_tn", "matmul_nt", "matmul_tt", "matmul_batched", "matmul_shared_weight", "linear",
        "linear_no_bias", "softmax", "causal_softmax", "attention", "embedding", "cross_entropy",
        "dropout", "sliding_window_softmax", "gqa_attention", "rope", "masked_softmax", "masked_softmax_causal",
        "masked_cross_attention", "label_smoothed_cross_entropy", "logsumexp"}) {
    EXPECT_EQ(std::count(names.begin(), names.end(), required), 1) << required;
  }
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << "duplicate case name";
}

// Every op that records a node on the tape (each `record("name", ...)` in autograd/ops/*.cpp) has a
// case of the same name. to_device alone is checked elsewhere: it needs a second device
// (tests/autograd/cuda_ops_test.cpp runs every case through it).
TEST(OpRegistry, EveryRecordedOpHasACase) {
  const std::vector<std::string> names = case_names();
  const std::regex recorded(R"re(record\("([a-z_0-9]+)")re");
  int found = 0;
  for (const auto& entry : std::filesystem::directory_iterator(NORMLAB_SOURCE_DIR "/autograd/ops")) {
    if (entry.path().extension() != ".cpp") continue;
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (auto it = std::sregex_iterator(text.begin(), text.end(), recorded); it != std::sregex_iterator(); ++it) {
      const std::string op = (*it)[1];
      ++found;
      if (op == "to_device") continue;
      EXPECT_EQ(std::count(names.begin(), names.end(), op), 1) << op << " (" << entry.path().filename() << ")";
    }
  }
  EXPECT_GT(found, 20);  // the scan found the ops
}

TEST(Gradcheck, CatchesAWrongBackward) {
  // y = x^2 recorded with the wrong derivative dx = g x (missing the factor 2).
  GradFn wrong = [](const std::vector<Var>& v) {
    const Tensor x = v[0].value();
    return record("wrong_square", {v[0]}, ops::mul(x, x),
                  [x](const Tensor& g) -> Grads { return {ops::mul(g, x)}; });
  };
  Generator gen(1);
  const std::vector<Tensor> inputs = {Tensor::randn({3, 2}, gen, 0.0, 1.0, DType::F64)};
  const auto results = gradcheck(wrong, inputs, {"x"}, {0}, GradcheckOptions{});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_FALSE(results[0].passed);
  EXPECT_GT(results[0].max_rel_error, 0.1);
}

// The worst entry is the one with the largest relative error, with both gradients there: y = sum
// of x^3 recorded with the derivative 2x (that of x^2); at x = (0.5, -1, 2) the relative errors
// |3x^2 - 2x| / max(|3x^2|, |2x|) are 0.25, 5/3 and 2/3 (a scalar output is checked as it is).
TEST(Gradcheck, NamesTheWorstEntryWithBothGradients) {
  GradFn wrong = [](const std::vector<Var>& v) {
    const Tensor x = v[0].value();
    const Tensor cube = ops::mul(ops::mul(x, x), x);
    const Var y = record("wrong_cube", {v[0]}, cube,
                         [x](const Tensor& g) -> Grads { return {ops::mul(g, ops::scale(x, 2.0))}; });
    return sum_all(y);
  };
  const std::vector<Tensor> inputs = {Tensor::from_vector({0.5, -1.0, 2.0}, {3}, DType::F64)};
  const auto results = gradcheck(wrong, inputs, {"x"}, {0}, GradcheckOptions{});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].worst, 1);
  EXPECT_DOUBLE_EQ(results[0].worst_analytic, -2.0);
  EXPECT_NEAR(results[0].worst_numeric, 3.0, 1e-8);
  EXPECT_NEAR(results[0].max_rel_error, 5.0 / 3.0, 1e-8);
  EXPECT_NEAR(results[0].max_abs_error, 8.0, 1e-8);
}

// A loss that turns NaN under the perturbation fails the check: log(x) at x = 1e-5 with step 1e-4
// takes log of a negative number (a naive logsumexp overflowing to inf did the same, unseen, when
// std::max dropped the NaN errors).
TEST(Gradcheck, ANonFiniteLossFailsTheCheck) {
  GradFn f = [](const std::vector<Var>& v) { return log(v[0]); };
  const std::vector<Tensor> inputs = {Tensor::from_vector({1e-5, 2.0}, {2}, DType::F64)};
  GradcheckOptions options;
  options.step = 1e-4;
  const auto results = gradcheck(f, inputs, {"x"}, {0}, options);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_FALSE(results[0].passed);
  EXPECT_TRUE(std::isinf(results[0].max_rel_error));
}

// on_device routes the gradient through to_device's backward both ways; on the CPU it must leave
// every input gradient exactly as the op computes it (the CUDA run is in cuda_ops_test.cpp).
TEST(Gradcheck, OnDeviceKeepsTheGradientOfEveryInput) {
  const OpCase* c = find_op_case("layer_norm");
  ASSERT_NE(c, nullptr);
  const std::vector<Tensor> inputs = c->make_inputs(0, {});
  auto input_grads = [&](const GradFn& f) {
    Tape::current().clear();
    std::vector<Var> vars;
    for (const Tensor& t : inputs) vars.push_back(Var(t.clone(), true));
    backward(sum_all(mul(f(vars), f(vars))));
    std::vector<std::vector<double>> grads;
    for (const Var& v : vars) grads.push_back(v.grad().to_vector());
    return grads;
  };
  const auto direct = input_grads(c->fn), routed = input_grads(on_device(c->fn, Device::cpu()));
  ASSERT_EQ(direct.size(), routed.size());
  for (size_t i = 0; i < direct.size(); ++i) {
    EXPECT_EQ(direct[i], routed[i]) << "input " << c->input_names[i];
    EXPECT_NE(*std::max_element(direct[i].begin(), direct[i].end()), 0.0);
  }
  for (const InputCheck& r : gradcheck(on_device(c->fn, Device::cpu()), inputs, c->input_names,
                                       c->differentiable, c->options))
    EXPECT_TRUE(r.passed) << r.input;
}

TEST(Gradcheck, RejectsFloat32Inputs) {
  GradFn f = [](const std::vector<Var>& v) { return scale(v[0], 2.0); };
  EXPECT_THROW(gradcheck(f, {Tensor::ones({2})}, {"x"}, {0}, GradcheckOptions{}), Error);
}

}  // namespace
}  // namespace normlab
