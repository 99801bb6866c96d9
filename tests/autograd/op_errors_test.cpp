// Shape and argument errors: each names the op in brackets and the offending shapes or values.
#include <gtest/gtest.h>

#include <functional>

#include "autograd/ops.h"
#include "expect_error.h"

namespace normlab {
namespace {

using test::expect_error;

Var param(const Shape& shape) { return parameter(Tensor::zeros(shape, DType::F64)); }

class OpErrors : public ::testing::Test {
 protected:
  void TearDown() override { Tape::current().clear(); }
};

TEST_F(OpErrors, MatmulInnerDimensionMismatchNamesBothShapes) {
  expect_error([] { matmul(param({2, 3}), param({4, 5})); }, {"[matmul]", "(2, 3)", "(4, 5)"});
  expect_error([] { matmul(param({2, 3}), param({3, 2}), false, true); }, {"[matmul]", "(3, 2)^T"});
  expect_error([] { matmul(param({2, 2, 3}), param({3, 3, 4})); }, {"[matmul]", "(2, 2, 3)", "(3, 3, 4)"});
}

TEST_F(OpErrors, UnbroadcastableAddNamesBothShapes) {
  expect_error([] { add(param({3, 4}), param({2, 4})); }, {"[add]", "(3, 4)", "(2, 4)"});
  expect_error([] { mul(param({2, 3}), param({4})); }, {"[mul]", "(2, 3)", "(4,)"});
}

TEST_F(OpErrors, LinearShapes) {
  expect_error([] { linear(param({2, 3}), param({5, 4}), Var()); }, {"[linear]", "(2, 3)", "(5, 4)"});
  expect_error([] { linear(param({2, 4}), param({5, 4}), param({4})); }, {"[linear]", "(4,)"});
  expect_error([] { linear(param({2, 4}), param({4}), Var()); }, {"[linear]", "(4,)"});
}

TEST_F(OpErrors, EmbeddingIdOutOfRangeThrows) {
  expect_error([] { embedding(param({5, 3}), Tensor::from_ints({0, 5}, {2})); }, {"[embedding]", "5"});
  expect_error([] { embedding(param({5, 3}), Tensor::from_ints({-1}, {1})); }, {"[embedding]", "-1"});
  expect_error([] { embedding(param({5, 3}), Tensor::zeros({2})); }, {"[embedding]", "int32"});
}

TEST_F(OpErrors, CrossEntropyTargets) {
  expect_error([] { cross_entropy(param({2, 3, 5}), Tensor::from_ints({0, 1}, {2})); },
               {"[cross_entropy]", "(2,)", "(2, 3, 5)"});
  expect_error([] { cross_entropy(param({2, 5}), Tensor::from_ints({0, 7}, {2})); }, {"[cross_entropy]", "7"});
  expect_error([] { cross_entropy(param({2, 5}), Tensor::zeros({2})); }, {"[cross_entropy]", "int32"});
}

TEST_F(OpErrors, DropoutProbabilityMustBeBelowOne) {
  expect_error([] { dropout(param({4}), 1.0, 0, true); }, {"[dropout]", "1"});
  expect_error([] { dropout(param({4}), -0.1, 0, true); }, {"[dropout]", "-0.1"});
  expect_error([] { dropout(param({4}), 1.5, 0, false); }, {"[dropout]"});  // checked even in eval
}

TEST_F(OpErrors, ShapeOps) {
  expect_error([] { split_heads(param({2, 3, 7}), 2); }, {"[split_heads]", "(2, 3, 7)"});
  expect_error([] { split_heads(param({3, 7}), 1); }, {"[split_heads]", "(3, 7)"});
  expect_error([] { merge_heads(param({2, 3, 4})); }, {"[merge_heads]", "(2, 3, 4)"});
  expect_error([] { narrow_last(param({3, 4}), 2, 3); }, {"[narrow_last]", "(3, 4)"});
  expect_error([] { reshape(param({3, 4}), {5, 2}); }, {"[reshape]", "(3, 4)", "(5, 2)"});
  expect_error([] { transpose(param({3, 4}), 0, 2); }, {"[transpose]"});
  expect_error([] { causal_softmax(param({2, 3, 4})); }, {"[causal_softmax]", "(2, 3, 4)"});
}

}  // namespace
}  // namespace normlab
