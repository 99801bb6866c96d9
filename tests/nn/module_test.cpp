// Module: dotted names, registration order, buffers, train/eval, zero_grad, replace_parameters.
#include <gtest/gtest.h>

#include <cmath>

#include "autograd/ops.h"
#include "core/random.h"
#include "nn/layers.h"
#include "nn/module.h"
#include "nn/norms.h"

namespace normlab {
namespace {

class Pair : public Module {
 public:
  Pair() {
    a = register_module("a", std::make_shared<Linear>(3, 2, true, DType::F64));
    b = register_module("b", std::make_shared<Linear>(2, 4, false, DType::F64));
  }
  std::shared_ptr<Linear> a, b;
};

TEST(Module, NamesAreDottedPathsInRegistrationOrder) {
  Pair m;
  const auto named = m.named_parameters();
  ASSERT_EQ(named.size(), 3u);
  EXPECT_EQ(named[0].first, "a.weight");
  EXPECT_EQ(named[1].first, "a.bias");
  EXPECT_EQ(named[2].first, "b.weight");
  EXPECT_EQ(named[0].second.shape(), (Shape{2, 3}));  // PyTorch layout (out, in)
  EXPECT_EQ(m.parameter_count(), 2 * 3 + 2 + 4 * 2);
  EXPECT_FALSE(m.b->bias().defined());
}

TEST(Module, TrainEvalReachesChildren) {
  Pair m;
  m.eval();
  EXPECT_FALSE(m.is_training());
  EXPECT_FALSE(m.a->is_training());
  m.train();
  EXPECT_TRUE(m.b->is_training());
}

TEST(Module, ZeroGradClearsEveryParameter) {
  Pair m;
  Var x = constant(Tensor::ones({5, 3}, DType::F64));
  backward(sum_all(m.b->forward(m.a->forward(x))));
  for (const Var& p : m.parameters()) EXPECT_TRUE(p.grad().defined());
  m.zero_grad();
  for (const Var& p : m.parameters()) EXPECT_FALSE(p.grad().defined());
}

TEST(Module, ReplaceParametersRoutesGradientsToTheNewVars) {
  Pair m;
  std::vector<Var> fresh;
  for (const Var& p : m.parameters()) fresh.push_back(parameter(Tensor::full(p.shape(), 0.5, DType::F64)));
  m.replace_parameters(fresh);
  Var y = m.b->forward(m.a->forward(constant(Tensor::ones({1, 3}, DType::F64))));
  // a: 3 * (1 * 0.5) + 0.5 = 2 per output; b: 2 * (2 * 0.5) = 2
  EXPECT_DOUBLE_EQ(y.value().to_vector()[0], 2.0);
  backward(sum_all(y));
  for (const Var& p : fresh) EXPECT_TRUE(p.grad().defined());
}

TEST(Module, ReplaceParametersRejectsMismatchAndLeavesModuleUnchanged) {
  Pair m;
  const Var before = m.a->weight();
  std::vector<Var> wrong = {parameter(Tensor::zeros({2, 3}, DType::F64))};
  EXPECT_THROW(m.replace_parameters(wrong), Error);
  std::vector<Var> bad_shape;
  for (size_t i = 0; i < m.parameters().size(); ++i)
    bad_shape.push_back(parameter(Tensor::zeros({7}, DType::F64)));
  try {
    m.replace_parameters(bad_shape);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a.weight"), std::string::npos) << e.what();
  }
  EXPECT_EQ(m.a->weight().get(), before.get());
}

double total(const Tensor& t) {
  double s = 0;
  for (double v : t.to_vector()) s += v;
  return s;
}

TEST(Module, BatchNormBuffersAreNamedAndUpdatedInTraining) {
  ModelConfig c;
  c.norm_type = NormType::BatchNorm;
  c.dtype = ParamDType::Float64;
  Norm norm(c, 4);
  const auto buffers = norm.named_buffers();
  ASSERT_EQ(buffers.size(), 2u);
  EXPECT_EQ(buffers[0].first, "running_mean");
  EXPECT_EQ(buffers[1].first, "running_var");
  Generator gen(3);
  Var x = constant(Tensor::randn({2, 5, 4}, gen, 2.0, 1.0, DType::F64));
  norm.forward(x);
  EXPECT_GT(total(buffers[0].second), 0.1);  // moved towards the batch mean (~2 per channel)
  // Eval uses the running statistics: the output no longer has zero mean per channel.
  norm.eval();
  const std::vector<double> y = norm.forward(x).value().to_vector();
  double mean = 0;
  for (double v : y) mean += v / static_cast<double>(y.size());
  EXPECT_GT(std::abs(mean), 0.5);
}

}  // namespace
}  // namespace normlab
