// The post-hoc effect column of v4's report (xiong/post_hoc_effects.h): an interval is "beyond" a
// smallest effect only when it lies wholly beyond plus or minus it, "within" only when wholly
// inside, on the log scale for ratios; and the committed report's rows say what the record holds.
#include <gtest/gtest.h>

#include <cmath>

#include "xiong/post_hoc_effects.h"

namespace normlab::xiong {
namespace {

Interval interval(double estimate, double low, double high) {
  Interval i;
  i.estimate = estimate, i.low = low, i.high = high, i.n = 10;
  return i;
}

TEST(PostHocEffects, AnIntervalIsBeyondWithinOrStraddlingTheSmallestEffect) {
  EXPECT_EQ(effect_against(interval(0.5, 0.3, 0.7), 0.1, false), "beyond");
  EXPECT_EQ(effect_against(interval(-0.5, -0.7, -0.3), 0.1, false), "beyond");
  EXPECT_EQ(effect_against(interval(0.0, -0.05, 0.05), 0.1, false), "within");
  EXPECT_EQ(effect_against(interval(0.0511, -0.0128, 0.115), 0.1, false), "straddles");  // v4's E3a@5e-4
  EXPECT_EQ(effect_against(interval(-0.15, -0.2, 0.0), 0.1, false), "straddles");
  // Ratios on the log scale: ln 1.25 = 0.223.
  EXPECT_EQ(effect_against(interval(1.42, 1.3, 1.56), std::log(1.25), true), "beyond");
  EXPECT_EQ(effect_against(interval(1.11, 1.01, 1.22), std::log(1.25), true), "within");
  EXPECT_EQ(effect_against(interval(0.693, 0.663, 0.724), std::log(1.25), true), "beyond");
  EXPECT_EQ(effect_against(interval(NAN, NAN, NAN), 0.1, false), "-");
}

}  // namespace
}  // namespace normlab::xiong
