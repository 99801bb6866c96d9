// Shapes, broadcasting and the one un-broadcast (sum_to_shape).
#include <gtest/gtest.h>

#include "core/ops.h"
#include "core/random.h"
#include "core/shape.h"

namespace normlab {
namespace {

TEST(Shape, NumelStridesAndText) {
  EXPECT_EQ(numel_of({2, 3, 4}), 24);
  EXPECT_EQ(numel_of({}), 1);
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (Shape{12, 4, 1}));
  EXPECT_EQ(shape_str({2, 3}), "(2, 3)");
  EXPECT_EQ(shape_str({5}), "(5,)");
}

TEST(Shape, BroadcastFollowsNumpyRules) {
  EXPECT_EQ(broadcast_shapes({3, 4}, {4}, "add"), (Shape{3, 4}));
  EXPECT_EQ(broadcast_shapes({2, 1, 4}, {3, 1}, "mul"), (Shape{2, 3, 4}));
  EXPECT_EQ(broadcast_shapes({}, {2, 2}, "mul"), (Shape{2, 2}));
}

TEST(Shape, BroadcastErrorNamesOpAndBothShapes) {
  try {
    broadcast_shapes({3, 4}, {2, 4}, "sub");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("[sub]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(3, 4)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(2, 4)"), std::string::npos) << msg;
  }
}

TEST(Shape, NormalizeAxis) {
  EXPECT_EQ(normalize_axis(-1, 3, "op"), 2);
  EXPECT_EQ(normalize_axis(0, 3, "op"), 0);
  EXPECT_THROW(normalize_axis(3, 3, "op"), Error);
  EXPECT_THROW(normalize_axis(-4, 3, "op"), Error);
}

// sum_to against a naive sum over broadcast axes, for x (2, 3, 4) reduced to several shapes.
TEST(Shape, SumToShapeMatchesNaiveSums) {
  Generator gen(3);
  Tensor x = Tensor::randn({2, 3, 4}, gen, 0.0, 1.0, DType::F64);
  const std::vector<double> xv = x.to_vector();
  auto at = [&](int i, int j, int k) { return xv[(i * 3 + j) * 4 + k]; };

  std::vector<double> to4(4, 0.0), to31(3, 0.0), to114(4, 0.0), to_scalar(1, 0.0);
  std::vector<double> to2_1_4(8, 0.0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) {
        to4[k] += at(i, j, k);
        to31[j] += at(i, j, k);
        to114[k] += at(i, j, k);
        to_scalar[0] += at(i, j, k);
        to2_1_4[i * 4 + k] += at(i, j, k);
      }
  auto expect_near = [](const Tensor& t, const std::vector<double>& want) {
    const std::vector<double> got = t.to_vector();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12);
  };
  expect_near(ops::sum_to(x, {4}), to4);
  expect_near(ops::sum_to(x, {3, 1}), to31);
  expect_near(ops::sum_to(x, {1, 1, 4}), to114);
  expect_near(ops::sum_to(x, {}), to_scalar);
  expect_near(ops::sum_to(x, {2, 1, 4}), to2_1_4);
  EXPECT_EQ(ops::sum_to(x, {2, 3, 4}).to_vector(), xv);  // same shape: unchanged
  EXPECT_EQ(ops::sum_to(x, {3, 1}).shape(), (Shape{3, 1}));
}

TEST(Shape, BinaryOpBroadcastsAndUnbroadcasts) {
  Tensor a = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3}, DType::F64);
  Tensor b = Tensor::from_vector({10, 20, 30}, {3}, DType::F64);
  EXPECT_EQ(ops::add(a, b).to_vector(), (std::vector<double>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(ops::sum_to(ops::add(a, b), {3}).to_vector(), (std::vector<double>{25, 47, 69}));
  EXPECT_THROW(ops::add(a, Tensor::zeros({2}, DType::F64)), Error);
}

}  // namespace
}  // namespace normlab
