// The stats library's intervals: t and bootstrap intervals, their p-values, Holm's adjustment.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "core/random.h"
#include "stats/stats.h"

namespace normlab::stats {
namespace {

TEST(Stats, TQuantileMatchesClosedFormsTablesAndTheNormalLimit) {
  const double pi = std::acos(-1.0);
  for (const double p : {0.6, 0.9, 0.95, 0.975, 0.995}) {
    EXPECT_NEAR(t_quantile(p, 1), std::tan(pi * (p - 0.5)), 1e-12 * std::tan(pi * (p - 0.5))) << p;  // Cauchy
    EXPECT_NEAR(t_quantile(p, 2), (2 * p - 1) / std::sqrt(2 * p * (1 - p)), 1e-12) << p;
    const double a = 4 * p * (1 - p), q = std::cos(std::acos(std::sqrt(a)) / 3) / std::sqrt(a);  // df 4
    EXPECT_NEAR(t_quantile(p, 4), 2 * std::sqrt(q - 1), 1e-12) << p;
    EXPECT_NEAR(t_quantile(1 - p, 7), -t_quantile(p, 7), 1e-12) << p;  // symmetric
  }
  // Printed tables (3 decimals): the exact quantile rounds to them.
  EXPECT_NEAR(t_quantile_975(9), 2.262, 5e-4);
  EXPECT_NEAR(t_quantile_975(30), 2.042, 5e-4);
  EXPECT_NEAR(t_quantile_975(60), 2.000, 5e-4);
  EXPECT_NEAR(t_quantile_975(100), 1.984, 5e-4);
  EXPECT_NEAR(t_quantile_975(100000), 1.95996, 1e-4);  // the normal limit
  for (int df = 1; df < 200; ++df) {
    EXPECT_GT(t_quantile_975(df), t_quantile_975(df + 1)) << df;
    EXPECT_NEAR(t_two_sided_p(t_quantile_975(df), df), 0.05, 1e-12) << df;  // the quantile inverts the p-value
  }
  EXPECT_THROW(t_quantile(1.0, 5), Error);
  EXPECT_THROW(t_quantile(0.5, 0), Error);
}

TEST(Stats, MeanIntervalIsTheTInterval) {
  // 1..5: mean 3, sd sqrt(2.5), half-width t(4) sd / sqrt(5).
  const Interval i = mean_interval({1, 2, 3, 4, 5});
  const double half = t_quantile(0.975, 4) * std::sqrt(2.5) / std::sqrt(5.0);
  EXPECT_EQ(i.n, 5);
  EXPECT_DOUBLE_EQ(i.estimate, 3.0);
  EXPECT_NEAR(i.low, 3.0 - half, 1e-9);
  EXPECT_NEAR(i.high, 3.0 + half, 1e-9);
  EXPECT_EQ(mean_interval({1, NAN, 3}).n, 2);  // non-finite values dropped
  const Interval one = mean_interval({2.0});
  EXPECT_TRUE(std::isinf(one.low) && std::isinf(one.high));
}

TEST(Stats, PairedDifferenceUsesThePerSeedDifferences) {
  // Large seed-to-seed spread, constant difference: the paired interval is a point.
  const Interval d = paired_difference({10, 20, 30, 40}, {9, 19, 29, 39});
  EXPECT_DOUBLE_EQ(d.estimate, 1.0);
  EXPECT_NEAR(d.low, 1.0, 1e-12);
  EXPECT_NEAR(d.high, 1.0, 1e-12);
  EXPECT_EQ(paired_difference({1, NAN, 3}, {0, 0, NAN}).n, 1);
}

TEST(Stats, LogRatioIsAGeometricMean) {
  const Interval r = log_ratio({2, 8}, {1, 2});  // ratios 2 and 4: geometric mean sqrt(8)
  EXPECT_NEAR(r.estimate, std::sqrt(8.0), 1e-12);
  EXPECT_LT(r.low, r.estimate);
  EXPECT_GT(r.high, r.estimate);
}

TEST(Stats, BootstrapIsReproducibleAndCoversTheEstimate) {
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

TEST(Stats, IncompleteBetaMatchesClosedForms) {
  for (const double x : {0.0, 0.01, 0.3, 0.5, 0.77, 0.999, 1.0}) {
    EXPECT_NEAR(regularized_incomplete_beta(1, 1, x), x, 1e-14) << x;                      // uniform
    EXPECT_NEAR(regularized_incomplete_beta(3.5, 1, x), std::pow(x, 3.5), 1e-14) << x;     // I_x(a, 1) = x^a
    EXPECT_NEAR(regularized_incomplete_beta(1, 4, x), 1 - std::pow(1 - x, 4), 1e-14) << x;  // 1 - (1 - x)^b
    EXPECT_NEAR(regularized_incomplete_beta(2.5, 0.5, x), 1 - regularized_incomplete_beta(0.5, 2.5, 1 - x), 1e-14);
  }
  EXPECT_NEAR(regularized_incomplete_beta(7, 7, 0.5), 0.5, 1e-14);  // symmetric
  EXPECT_THROW(regularized_incomplete_beta(0, 1, 0.5), Error);
  EXPECT_THROW(regularized_incomplete_beta(1, 1, 1.5), Error);
}

TEST(Stats, TTwoSidedPMatchesClosedFormsAndTables) {
  const double pi = std::acos(-1.0);
  for (const double t : {0.1, 0.5, 1.0, 2.0, 12.706, 50.0}) {
    EXPECT_NEAR(t_two_sided_p(t, 1), 1 - 2 / pi * std::atan(t), 1e-13) << t;   // Cauchy
    EXPECT_NEAR(t_two_sided_p(-t, 2), 1 - t / std::sqrt(2 + t * t), 1e-13) << t;
    const double u = t / std::sqrt(3.0);  // df 3: 1 - (2/pi)(atan u + u / (1 + u^2))
    EXPECT_NEAR(t_two_sided_p(t, 3), 1 - 2 / pi * (std::atan(u) + u / (1 + u * u)), 1e-13) << t;
  }
  // Simpson's rule on the t density (Python, 2e5 panels; error ~1e-11).
  EXPECT_NEAR(t_two_sided_p(2.571, 5), 0.0499746346839, 1e-9);
  EXPECT_NEAR(t_two_sided_p(3.0, 10), 0.0133436550226, 1e-9);
  EXPECT_NEAR(t_two_sided_p(4.0, 7), 0.00518991334934, 1e-9);
  EXPECT_NEAR(t_two_sided_p(2.042, 30), 0.0500286706562, 1e-9);
  EXPECT_NEAR(t_two_sided_p(1.984, 100), 0.0499967737962, 1e-9);
  EXPECT_EQ(t_two_sided_p(0.0, 5), 1.0);
  EXPECT_EQ(t_two_sided_p(INFINITY, 5), 0.0);
  EXPECT_TRUE(std::isnan(t_two_sided_p(NAN, 5)));
}

TEST(Stats, TIntervalsCarryTheirPValue) {
  // 1..5: t = 3 / (sqrt(2.5) / sqrt(5)) = 3 sqrt(2), df 4: p = 1 - sin(th)(1 + cos(th)^2 / 2), th = atan(t / 2).
  const double t = 3 * std::sqrt(2.0), th = std::atan(t / 2);
  EXPECT_NEAR(mean_interval({1, 2, 3, 4, 5}).p_value, 1 - std::sin(th) * (1 + std::cos(th) * std::cos(th) / 2), 1e-13);
  EXPECT_NEAR(mean_interval({-1, 1}).p_value, 1.0, 1e-15);
  EXPECT_TRUE(std::isnan(mean_interval({2.0}).p_value));
  EXPECT_EQ(paired_difference({10, 20, 30}, {9, 19, 29}).p_value, 0.0);  // constant difference
  EXPECT_EQ(paired_difference({1, 2}, {1, 2}).p_value, 1.0);            // constant zero difference
  // Ratios 2 and 4: logs 1.5 log 2 ± log 2 / 2, se log 2 / 2, t = 3 at df 1: p = 1 - (2/pi) atan 3.
  EXPECT_NEAR(log_ratio({2, 8}, {1, 2}).p_value, 1 - 2 / std::acos(-1.0) * std::atan(3.0), 1e-13);
}

TEST(Stats, HolmAdjustsInTheInputOrder) {
  // Sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04 -> running max 0.06.
  const std::vector<double> adj = holm_adjust({0.01, 0.04, 0.03, 0.005});
  const std::vector<double> want = {0.03, 0.06, 0.06, 0.02};
  ASSERT_EQ(adj.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(adj[i], want[i], 1e-15) << i;
  const std::vector<double> with_nan = holm_adjust({0.01, NAN, 0.04});  // m = 2
  EXPECT_NEAR(with_nan[0], 0.02, 1e-15);
  EXPECT_TRUE(std::isnan(with_nan[1]));
  EXPECT_NEAR(with_nan[2], 0.04, 1e-15);
  EXPECT_EQ(holm_adjust({0.6, 0.7}), (std::vector<double>{1.0, 1.0}));  // 1.2 and max(1.2, 0.7), capped at 1
  EXPECT_EQ(holm_adjust({0.02, 0.02}), (std::vector<double>{0.04, 0.04}));
  EXPECT_TRUE(holm_adjust({}).empty());
  EXPECT_THROW(holm_adjust({0.1, 1.5}), Error);
}

TEST(Stats, PercentileIntervalInterpolatesOrderStatistics) {
  // 0..1000: position 0.025 * 1000 = 25 and 0.975 * 1000 = 975, exactly.
  std::vector<double> draws;
  for (int i = 1000; i >= 0; --i) draws.push_back(i);  // unsorted on purpose
  EXPECT_EQ(percentile_interval(draws), (std::pair<double, double>{25.0, 975.0}));
  // i^2, i = 0..10: positions 0.25 and 9.75: 0.75 * 0 + 0.25 * 1 and 0.25 * 81 + 0.75 * 100.
  std::vector<double> squares;
  for (int i = 0; i <= 10; ++i) squares.push_back(i * i);
  const auto [low, high] = percentile_interval(squares);
  EXPECT_DOUBLE_EQ(low, 0.25);
  EXPECT_DOUBLE_EQ(high, 95.25);
  // An infinite draw next to the upper position opens the interval; NaN draws are dropped.
  std::vector<double> open(squares);
  open.back() = INFINITY;
  open.push_back(NAN);
  EXPECT_EQ(percentile_interval(open).second, INFINITY);
  EXPECT_DOUBLE_EQ(percentile_interval(open).first, 0.25);
  EXPECT_TRUE(std::isnan(percentile_interval({}).first));
}

TEST(Stats, BootstrapUsesThe2Point5And97Point5Percentiles) {
  // A statistic that ignores the resample and counts its calls: the estimate (first call, on all
  // seeds) is -1 and the 1001 resamples give 0..1000, so the interval is exactly [25, 975].
  int calls = -1;
  const Interval i = bootstrap(5, [&](const std::vector<int>&) { return static_cast<double>(calls++); }, 1001);
  EXPECT_EQ(i.estimate, -1.0);
  EXPECT_EQ(i.low, 25.0);
  EXPECT_EQ(i.high, 975.0);
  EXPECT_TRUE(std::isnan(i.p_value));
}

// The mean of n normal draws, mean 3 and sd 2, from a fixed generator.
std::vector<double> normal_sample(Generator& gen, int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(3 + 2 * gen.normal());
  return v;
}

TEST(Stats, TIntervalCoversTheTrueMeanAt95Percent) {
  // 2000 samples of n = 8: coverage 0.95 within 3 binomial standard errors, 3 sqrt(0.95 * 0.05 / 2000)
  // = 0.0146. (A z interval, 1.96 for t(7)'s 2.365, covers 0.91 and fails.)
  Generator gen(11);
  const int samples = 2000;
  int covered = 0;
  for (int s = 0; s < samples; ++s) {
    const Interval i = mean_interval(normal_sample(gen, 8));
    covered += i.low <= 3 && 3 <= i.high ? 1 : 0;
  }
  const double rate = static_cast<double>(covered) / samples;
  EXPECT_NEAR(rate, 0.95, 3 * std::sqrt(0.95 * 0.05 / samples));
}

TEST(Stats, PercentileBootstrapOfTheMeanUndercoversAtSmallN) {
  // The percentile interval of a mean is about mean ± 1.96 s sqrt((n-1)/n) / sqrt(n): a normal quantile
  // for a t one and the plug-in variance. At n = 20 that is |T_19| <= 1.96 sqrt(19/20) = 1.910, which
  // covers 0.929, not 0.95 (this generator: 0.934 with B = 400 resamples, 0.932 with B = 2000). Band:
  // [0.90, 0.955], 0.929 with 3 Monte Carlo standard errors (3 sqrt(0.929 * 0.071 / 1000) = 0.024) below
  // and a little more above, since B = 400 adds noise to the interval's ends.
  Generator gen(12);
  const int samples = 1000, n = 20;
  int covered = 0;
  for (int s = 0; s < samples; ++s) {
    const std::vector<double> v = normal_sample(gen, n);
    auto mean_of = [&](const std::vector<int>& idx) {
      double sum = 0;
      for (const int i : idx) sum += v[static_cast<size_t>(i)];
      return sum / static_cast<double>(idx.size());
    };
    const Interval i = bootstrap(n, mean_of, 400, 1000 + static_cast<uint64_t>(s));
    covered += i.low <= 3 && 3 <= i.high ? 1 : 0;
  }
  const double rate = static_cast<double>(covered) / samples;
  EXPECT_GE(rate, 0.90);
  EXPECT_LE(rate, 0.955);
}

}  // namespace
}  // namespace normlab::stats

namespace normlab::stats {
namespace {

// The 90% interval uses t_{0.95, n-1}: 1.833113 at df 9 and 1.795885 at df 11 (tables), and it
// lies inside the 95% interval with the same centre.
TEST(MeanIntervalAt, NinetyPercentUsesTheNinetyFifthQuantile) {
  for (const std::vector<double>& v : {std::vector<double>{0.3, -0.1, 0.5, 0.2, 0.0, 0.4, -0.2, 0.1, 0.6, 0.3},
                                       std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13}}) {
    const double n = static_cast<double>(v.size());
    double mean = 0, sq = 0;
    for (double x : v) mean += x / n;
    for (double x : v) sq += (x - mean) * (x - mean);
    const double se = std::sqrt(sq / (n - 1) / n);
    const double t95 = v.size() == 10 ? 1.833113 : 1.795885;
    const Interval i90 = mean_interval_at(v, 0.90), i95 = mean_interval(v);
    EXPECT_NEAR(i90.estimate, mean, 1e-12);
    EXPECT_NEAR(i90.low, mean - t95 * se, 1e-5 * se);
    EXPECT_NEAR(i90.high, mean + t95 * se, 1e-5 * se);
    EXPECT_GT(i90.low, i95.low);
    EXPECT_LT(i90.high, i95.high);
  }
  EXPECT_THROW(mean_interval_at({1.0, 2.0}, 1.0), std::exception);
}

}  // namespace
}  // namespace normlab::stats
