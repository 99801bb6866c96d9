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

// The basin: every rate within 0.1 nats of the best, from the smallest to the largest, in decades.
TEST(XiongLrSensitivity, BasinWidthSpansTheRatesNearTheBest) {
  const std::vector<double> lrs = {1e-4, 1e-3, 1e-2, 1e-1};
  EXPECT_NEAR(basin_width(lrs, {1.0, 0.5, 0.55, 3.0}, 0.1), 1.0, 1e-12);   // 1e-3 .. 1e-2
  EXPECT_NEAR(basin_width(lrs, {0.55, 0.5, 0.55, 0.6}, 0.1), 3.0, 1e-12);  // all four, 0.6 - 0.5 = 0.1 included
  EXPECT_NEAR(basin_width(lrs, {3.0, 0.5, 2.0, 0.58}, 0.1), 2.0, 1e-12);   // 1e-3 and 1e-1: the span, gap included
  EXPECT_DOUBLE_EQ(basin_width(lrs, {3.0, 2.0, 1.0, 0.2}, 0.1), 0.0);       // only the best
  EXPECT_NEAR(basin_width({1e-2, 1e-4, 1e-3}, {0.5, 0.52, 3.0}, 0.1), 2.0, 1e-12);  // any order
  EXPECT_TRUE(std::isnan(basin_width(lrs, {1.0, NAN, 1.0, 1.0}, 0.1)));
}

}  // namespace
}  // namespace normlab::xiong
