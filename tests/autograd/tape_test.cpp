// The tape's contract: accumulation, freeing, no-grad, and loud failures.
#include <gtest/gtest.h>

#include "autograd/ops.h"
#include "core/ops.h"
#include "core/random.h"

namespace normlab {
namespace {

Tensor vec(std::vector<double> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector(v, {n}, DType::F64);
}

class TapeTest : public ::testing::Test {
 protected:
  void SetUp() override { Tape::current().clear(); }
  void TearDown() override { Tape::current().clear(); }
};

TEST_F(TapeTest, TensorUsedTwiceGetsTheSumOfBothGradients) {
  Var x = parameter(vec({-1.5, 0.0, 2.0, 3.0}), "x");
  Var y = add(mul(x, x), x);  // x appears three times: dy/dx = 2x + 1
  backward(sum_all(y));
  ASSERT_TRUE(x.grad().defined());
  EXPECT_EQ(x.grad().to_vector(), (std::vector<double>{-2.0, 1.0, 5.0, 7.0}));
}

TEST_F(TapeTest, ParameterGradientsAccumulateUntilZeroGrad) {
  Var w = parameter(vec({1.0, 2.0}), "w");
  backward(sum_all(scale(w, 3.0)));
  EXPECT_EQ(w.grad().to_vector(), (std::vector<double>{3.0, 3.0}));
  backward(sum_all(scale(w, 3.0)));
  EXPECT_EQ(w.grad().to_vector(), (std::vector<double>{6.0, 6.0}));
  w.zero_grad();
  EXPECT_FALSE(w.grad().defined());
  backward(sum_all(square(w)));
  EXPECT_EQ(w.grad().to_vector(), (std::vector<double>{2.0, 4.0}));
}

TEST_F(TapeTest, IntermediatesAreFreedAndTheTapeEmptied) {
  Var x = parameter(vec({1.0, 2.0, 3.0}), "x");
  Var h = tanh(x);
  Var loss = sum_all(mul(h, h));
  EXPECT_EQ(Tape::current().size(), 3u);
  EXPECT_FALSE(h.is_leaf());
  backward(loss);
  EXPECT_EQ(Tape::current().size(), 0u);
  EXPECT_FALSE(h.grad().defined());     // intermediate: freed
  EXPECT_FALSE(loss.grad().defined());  // the output too
  EXPECT_TRUE(x.grad().defined());      // the leaf keeps its gradient
}

TEST_F(TapeTest, ConstantInputsReceiveNoGradient) {
  Var x = parameter(vec({1.0, 2.0}), "x");
  Var c = constant(vec({5.0, 6.0}));
  backward(sum_all(mul(x, c)));
  EXPECT_EQ(x.grad().to_vector(), (std::vector<double>{5.0, 6.0}));
  EXPECT_FALSE(c.grad().defined());
}

TEST_F(TapeTest, NoGradGuardRecordsNothing) {
  Var x = parameter(vec({1.0, 2.0}), "x");
  const size_t before = Tape::current().size();
  {
    NoGradGuard guard;
    EXPECT_FALSE(grad_enabled());
    Var y = sum_all(exp(mul(x, x)));
    EXPECT_EQ(Tape::current().size(), before);
    EXPECT_FALSE(y.requires_grad());
    EXPECT_THROW(backward(y), Error);
    {
      NoGradGuard nested;
    }
    EXPECT_FALSE(grad_enabled());  // the nested guard restored "off", not "on"
  }
  EXPECT_TRUE(grad_enabled());
  Var z = exp(x);
  EXPECT_TRUE(z.requires_grad());
  EXPECT_EQ(Tape::current().size(), before + 1);
}

TEST_F(TapeTest, MissingBackwardThrowsNamingTheOpAndNeverReturnsZeros) {
  Var x = parameter(vec({1.0, 2.0}), "x");
  Var y = record("mystery_op", {x}, ops::scale(x.value(), 2.0), BackwardFn{});
  ASSERT_TRUE(y.requires_grad());
  try {
    backward(sum_all(y));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mystery_op"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(x.grad().defined());  // no silent zero gradient
}

TEST_F(TapeTest, NonScalarBackwardNeedsASeed) {
  Var x = parameter(vec({1.0, 2.0, 3.0}), "x");
  Var y = scale(x, 2.0);
  try {
    backward(y);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("[backward]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(3,)"), std::string::npos) << msg;
  }
  Tape::current().clear();
  Var y2 = scale(x, 2.0);
  backward(y2, vec({1.0, 10.0, 100.0}));
  EXPECT_EQ(x.grad().to_vector(), (std::vector<double>{2.0, 20.0, 200.0}));
}

TEST_F(TapeTest, TiedWeightGetsBothUses) {
  // The tied-embedding pattern: W (V, C) is the lookup table and the output projection.
  Generator gen(8);
  const Tensor w0 = Tensor::randn({5, 3}, gen, 0.0, 1.0, DType::F64);
  const Tensor ids = Tensor::from_ints({4, 1, 4}, {3});
  auto loss_of = [&](const Var& table, const Var& proj) {
    return sum_all(square(linear(embedding(table, ids), proj, Var())));
  };
  Var tied = parameter(w0.clone(), "tied");
  backward(loss_of(tied, tied));
  Var a = parameter(w0.clone(), "a"), b = parameter(w0.clone(), "b");
  backward(loss_of(a, b));
  const auto t = tied.grad().to_vector(), ga = a.grad().to_vector(), gb = b.grad().to_vector();
  for (size_t i = 0; i < t.size(); ++i) EXPECT_NEAR(t[i], ga[i] + gb[i], 1e-12) << i;
}

}  // namespace
}  // namespace normlab
