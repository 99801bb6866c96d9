// Autograd on half tensors: a forward and backward of composed ops in bfloat16/float16 against the
// same graph in float32 from the same (half-representable) parameter values. Every op rounds its
// output once, so values and gradients agree within a few half ulps of the float32 ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "autograd/ops.h"
#include "core/random.h"

namespace normlab {
namespace {

struct Result {
  double loss;
  std::vector<Tensor> grads;
};

// embedding -> add -> gelu -> mul -> silu -> softmax -> dropout -> cross-entropy, plus a sum.
Result run_graph(DType dtype, const std::vector<Tensor>& values) {
  Tape::current().clear();
  Var weight = parameter(values[0].to(dtype), "weight"), bias = parameter(values[1].to(dtype), "bias");
  Var gain = parameter(values[2].to(dtype), "gain");
  const Tensor ids = Tensor::from_ints({3, 0, 3, 9, 4, 1, 10, 3, 2, 7}, {2, 5});
  const Tensor targets = Tensor::from_ints({1, 7, 0, 5, -1, 2, 6, 3, 3, 4}, {2, 5});
  const Var a = gelu(add(embedding(weight, ids), bias));  // (2, 5, 8)
  const Var p = softmax(silu(mul(a, gain)));
  const Var logits = scale(dropout(p, 0.25, 1234, true), 6.0);
  const Var loss = add(cross_entropy(logits, targets), scale(sum_all(a), 0.01));
  EXPECT_EQ(loss.value().dtype(), dtype);
  backward(loss);
  Result r{loss.value().item(), {}};
  for (const Var* v : {&weight, &bias, &gain}) {
    EXPECT_EQ(v->grad().dtype(), dtype);
    r.grads.push_back(v->grad().to(DType::F32));
  }
  Tape::current().clear();
  return r;
}

class HalfAutograd : public ::testing::TestWithParam<DType> {};

TEST_P(HalfAutograd, ComposedOpsMatchFloat32WithinHalfTolerance) {
  const DType h = GetParam();
  Generator gen(5);
  // Parameters rounded to the half type first, so both runs start from identical values.
  std::vector<Tensor> values{Tensor::randn({11, 8}, gen, 0.0, 1.0).to(h).to(DType::F32),
                             Tensor::randn({8}, gen, 0.0, 0.5).to(h).to(DType::F32),
                             Tensor::randn({8}, gen, 1.0, 0.5).to(h).to(DType::F32)};
  const Result ref = run_graph(DType::F32, values);
  const Result half = run_graph(h, values);
  // bfloat16 keeps 8 significant bits (ulp 2^-7 relative), float16 11.
  const double tol = h == DType::BF16 ? 3e-2 : 4e-3;
  EXPECT_NEAR(half.loss, ref.loss, tol * std::fabs(ref.loss));
  for (size_t i = 0; i < ref.grads.size(); ++i) {
    const std::vector<double> want = ref.grads[i].to_vector(), got = half.grads[i].to_vector();
    double scale = 0.0;
    for (double w : want) scale = std::max(scale, std::fabs(w));
    ASSERT_GT(scale, 0.0) << "gradient " << i << " is all zero: the test would be vacuous";
    for (size_t j = 0; j < want.size(); ++j)
      EXPECT_NEAR(got[j], want[j], tol * scale) << "gradient " << i << " element " << j;
  }
}

INSTANTIATE_TEST_SUITE_P(, HalfAutograd, ::testing::Values(DType::BF16, DType::F16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace normlab

namespace normlab {
namespace {

// cast: the forward rounds to the target dtype, the backward hands the gradient back converted to
// the input's dtype (rounding taken as identity), and a cast to the same dtype records nothing.
TEST(CastOp, ForwardRoundsAndBackwardReturnsTheGradientInTheInputsDtype) {
  for (const DType half : {DType::BF16, DType::F16}) {
    Tape::current().clear();
    const std::vector<double> xs = {1.0 + 1.0 / 3.0, -2.5e-3, 300.0, 0.1};
    Var x = parameter(Tensor::from_vector(xs, {4}), "x");
    const Var y = cast(x, half);
    EXPECT_EQ(y.value().dtype(), half);
    EXPECT_EQ(y.value().to_vector(), Tensor::from_vector(xs, {4}, half).to_vector());
    // d/dx sum(w * y) = w, with w chosen exactly representable in both half types
    const Var loss = sum_all(mul(y, Var(Tensor::from_vector({0.5, -2.0, 0.25, 3.0}, {4}, half))));
    backward(loss);
    EXPECT_EQ(x.grad().dtype(), DType::F32) << dtype_name(half);
    EXPECT_EQ(x.grad().to_vector(), (std::vector<double>{0.5, -2.0, 0.25, 3.0})) << dtype_name(half);
    Tape::current().clear();
  }
  Var z = parameter(Tensor::from_vector({1.0}, {1}), "z");
  const size_t before = Tape::current().size();
  const Var same = cast(z, DType::F32);
  EXPECT_EQ(Tape::current().size(), before);
  EXPECT_EQ(same.value().storage(), z.value().storage());
  EXPECT_THROW(cast(z, DType::I32), Error);
}

}  // namespace
}  // namespace normlab
