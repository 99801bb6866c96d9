// The Xiong report's statistics: t and bootstrap intervals, and verdicts decided on intervals.
#include <gtest/gtest.h>

#include <cmath>

#include "xiong/stats.h"

namespace normlab::xiong {
namespace {

TEST(XiongStats, TQuantileMatchesTablesAndTheNormalLimit) {
  EXPECT_NEAR(t_quantile_975(1), 12.706, 1e-3);
  EXPECT_NEAR(t_quantile_975(4), 2.776, 1e-3);
  EXPECT_NEAR(t_quantile_975(30), 2.042, 1e-3);
  EXPECT_NEAR(t_quantile_975(31), 2.040, 1e-3);   // expansion, just past the table
  EXPECT_NEAR(t_quantile_975(60), 2.000, 1e-3);
  EXPECT_NEAR(t_quantile_975(100000), 1.960, 1e-3);
  EXPECT_GT(t_quantile_975(30), t_quantile_975(31));
}

TEST(XiongStats, MeanIntervalIsTheTInterval) {
  // 1..5: mean 3, sd sqrt(2.5), half-width t(4) sd / sqrt(5).
  const Interval i = mean_interval({1, 2, 3, 4, 5});
  const double half = 2.776 * std::sqrt(2.5) / std::sqrt(5.0);
  EXPECT_EQ(i.n, 5);
  EXPECT_DOUBLE_EQ(i.estimate, 3.0);
  EXPECT_NEAR(i.low, 3.0 - half, 1e-9);
  EXPECT_NEAR(i.high, 3.0 + half, 1e-9);
  EXPECT_EQ(mean_interval({1, NAN, 3}).n, 2);  // non-finite values dropped
  const Interval one = mean_interval({2.0});
  EXPECT_TRUE(std::isinf(one.low) && std::isinf(one.high));
}

TEST(XiongStats, PairedDifferenceUsesThePerSeedDifferences) {
  // Large seed-to-seed spread, constant difference: the paired interval is a point.
  const Interval d = paired_difference({10, 20, 30, 40}, {9, 19, 29, 39});
  EXPECT_DOUBLE_EQ(d.estimate, 1.0);
  EXPECT_NEAR(d.low, 1.0, 1e-12);
  EXPECT_NEAR(d.high, 1.0, 1e-12);
  EXPECT_EQ(paired_difference({1, NAN, 3}, {0, 0, NAN}).n, 1);
}

TEST(XiongStats, LogRatioIsAGeometricMean) {
  const Interval r = log_ratio({2, 8}, {1, 2});  // ratios 2 and 4: geometric mean sqrt(8)
  EXPECT_NEAR(r.estimate, std::sqrt(8.0), 1e-12);
  EXPECT_LT(r.low, r.estimate);
  EXPECT_GT(r.high, r.estimate);
}

TEST(XiongStats, BootstrapIsReproducibleAndCoversTheEstimate) {
  const std::vector<double> v = {0.1, 0.4, 0.35, 0.8, 0.2, 0.5, 0.45, 0.3};
  auto mean_of = [&](const std::vector<int>& idx) {
    double s = 0;
    for (const int i : idx) s += v[static_cast<size_t>(i)];
    return s / static_cast<double>(idx.size());
  };
  const Interval a = bootstrap(static_cast<int>(v.size()), mean_of), b = bootstrap(static_cast<int>(v.size()), mean_of);
  EXPECT_DOUBLE_EQ(a.low, b.low);
  EXPECT_DOUBLE_EQ(a.high, b.high);
  EXPECT_NEAR(a.estimate, 0.3875, 1e-12);
  EXPECT_LT(a.low, a.estimate);
  EXPECT_GT(a.high, a.estimate);
  // The percentile interval of a mean is close to the t interval's (a bit narrower at n = 8).
  const Interval t = mean_interval(v);
  EXPECT_GT(a.low, t.low - 0.05);
  EXPECT_LT(a.high, t.high + 0.05);
  EXPECT_GT(a.high - a.low, 0.5 * (t.high - t.low));
}

Verdict with(double est, double lo, double hi) {
  Verdict v;
  v.estimate = {est, lo, hi, 5, "t"};
  return v;
}

TEST(XiongStats, DirectionVerdictsFollowTheInterval) {
  Verdict v = with(0.5, 0.1, 0.9);
  v.decide_direction(0.0, Side::Above);
  EXPECT_EQ(v.verdict, "reproduced");
  v.decide_direction(0.0, Side::Below);
  EXPECT_EQ(v.verdict, "contradicted");
  v = with(0.5, -0.1, 0.9);
  v.decide_direction(0.0, Side::Above);
  EXPECT_EQ(v.verdict, "inconclusive");
  v = with(-0.5, -0.9, -0.2);
  v.decide_direction(0.0, Side::Below);
  EXPECT_EQ(v.verdict, "reproduced");
  v = with(1.5, 1.1, 1.9);  // a ratio against 1
  v.decide_direction(1.0, Side::Above);
  EXPECT_EQ(v.verdict, "reproduced");
  EXPECT_NE(v.criterion.find("above 1"), std::string::npos) << v.criterion;
  Verdict missing;
  missing.decide_direction(0.0, Side::Above);
  EXPECT_EQ(missing.verdict, "inconclusive");
}

TEST(XiongStats, EquivalenceVerdictsFollowTheInterval) {
  Verdict v = with(0.05, -0.1, 0.12);
  v.decide_equivalence(0.0, 0.15);
  EXPECT_EQ(v.verdict, "reproduced");
  v = with(0.1, -0.1, 0.2);  // straddles the margin
  v.decide_equivalence(0.0, 0.15);
  EXPECT_EQ(v.verdict, "inconclusive");
  v = with(0.4, 0.3, 0.5);
  v.decide_equivalence(0.0, 0.15);
  EXPECT_EQ(v.verdict, "contradicted");
}

TEST(XiongStats, VerdictJsonHasTheDocumentedFields) {
  Verdict v = with(0.5, 0.1, INFINITY);
  v.id = "E3a";
  v.steps = 2000;
  v.decide_direction(0.0, Side::Above);
  const nlohmann::json j = v.to_json();
  for (const char* key : {"id", "claim", "n_seeds", "steps", "estimate", "ci_low", "ci_high", "criterion", "verdict"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_TRUE(j["ci_high"].is_null());  // infinite bounds become null
  EXPECT_EQ(j["verdict"], "reproduced");
  EXPECT_EQ(j["steps"], 2000);
}

}  // namespace
}  // namespace normlab::xiong
