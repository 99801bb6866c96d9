// Wortsman et al.'s learning-rate sensitivity S (xiong/outcomes.h) with the best rate not first.
#include <gtest/gtest.h>

#include <cmath>

#include "xiong/outcomes.h"

namespace normlab::xiong {
namespace {

// S = mean(capped) - min(capped): with the best loss at the second rate, S = 2 - 1 = 1 (a bug that
// took the first rate's loss as the best would give 2 - 3 = -1); best last: S = (3 + 2 + 1)/3 - 1.
TEST(XiongLrSensitivity, WortsmanSensitivityUsesTheBestRateNotTheFirst) {
  EXPECT_DOUBLE_EQ(lr_sensitivity({3.0, 1.0, 2.0}), 1.0);
  EXPECT_DOUBLE_EQ(lr_sensitivity({3.0, 2.0, 1.0}), 1.0);
  EXPECT_DOUBLE_EQ(lr_sensitivity({1.0, 2.0, 3.0}), 1.0);
  EXPECT_DOUBLE_EQ(lr_sensitivity({2.0, 2.0}), 0.0);
  EXPECT_TRUE(std::isnan(lr_sensitivity({1.0, NAN})));
}

}  // namespace
}  // namespace normlab::xiong
