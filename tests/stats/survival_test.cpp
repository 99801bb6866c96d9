// Time to target: Kaplan-Meier with Greenwood's variance, the median and its Brookmeyer-Crowley
// interval, the log-rank test and the bootstrap ratio of medians, against hand-computed answers.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "core/random.h"
#include "stats/survival.h"

namespace normlab::stats {
namespace {

// Eight runs, given out of order. Times: 1, 2, 2, 2+, 3+, 4, 5+, 6 ("+": censored). The tie at 2
// (two events, one censoring) puts the censored run at risk at 2 (events first).
//   t   n_j  d_j  S                     Greenwood sum g            Var S = S^2 g
//   1    8    1   7/8                   1/56                       49/3584
//   2    7    2   7/8 * 5/7 = 5/8       1/56 + 2/35 = 21/280       25/64 * 21/280 = 525/17920
//   4    3    1   5/8 * 2/3 = 5/12      21/280 + 1/6 = 203/840     25/144 * 203/840 = 5075/120960
//   6    1    1   0                     (d = n: no term)           0
// Log-log band [S^exp(z th), S^exp(-z th)], th = sqrt(g) / |log S|, z = 1.95996 (float64 by hand, in
// Python): t = 1 [0.387000014032025, 0.981392965878966], t = 2 [0.229333322429132, 0.860698276913539],
// t = 4 [0.0719674975007891, 0.747326185498859], t = 6 [0, 0].
std::vector<TimeToEvent> textbook_runs() {
  return {{4, true}, {2, false}, {1, true}, {6, true}, {2, true}, {3, false}, {5, false}, {2, true}};
}

TEST(Survival, KaplanMeierMatchesTheHandComputedTable) {
  const KaplanMeier km = kaplan_meier(textbook_runs());
  EXPECT_EQ(km.n, 8);
  EXPECT_EQ(km.reached, 5);
  EXPECT_EQ(km.times, (std::vector<double>{1, 2, 4, 6}));
  EXPECT_EQ(km.at_risk, (std::vector<int>{8, 7, 3, 1}));
  EXPECT_EQ(km.events, (std::vector<int>{1, 2, 1, 1}));
  const std::vector<double> s = {7.0 / 8, 5.0 / 8, 5.0 / 12, 0};
  const std::vector<double> var = {49.0 / 3584, 525.0 / 17920, 5075.0 / 120960, 0};
  const std::vector<double> lower = {0.387000014032025, 0.229333322429132, 0.0719674975007891, 0};
  const std::vector<double> upper = {0.981392965878966, 0.860698276913539, 0.747326185498859, 0};
  ASSERT_EQ(km.survival.size(), 4u);
  for (size_t j = 0; j < 4; ++j) {
    EXPECT_NEAR(km.survival[j], s[j], 1e-15) << j;
    EXPECT_NEAR(km.variance[j], var[j], 1e-15) << j;
    EXPECT_NEAR(km.lower[j], lower[j], 1e-12) << j;
    EXPECT_NEAR(km.upper[j], upper[j], 1e-12) << j;
  }
  EXPECT_EQ(km.survival_at(0.5), 1.0);
  EXPECT_EQ(km.survival_at(3.0), 5.0 / 8);
  EXPECT_DOUBLE_EQ(km.survival_at(4.0), 5.0 / 12);  // right-continuous
  EXPECT_EQ(km.survival_at(100.0), 0.0);
}

TEST(Survival, KaplanMeierDropsNonFiniteTimesAndRejectsNegativeOnes) {
  std::vector<TimeToEvent> runs = textbook_runs();
  runs.push_back({NAN, true});
  runs.push_back({INFINITY, false});
  EXPECT_EQ(kaplan_meier(runs).n, 8);
  try {
    kaplan_meier({{1, true}, {-1, true}});
    FAIL() << "a negative time was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[kaplan_meier]"), std::string::npos) << e.what();
  }
}

TEST(Survival, MedianAndItsBrookmeyerCrowleyInterval) {
  // Textbook runs: S first <= 1/2 at 4 (5/12). The lower band is 0.387 <= 1/2 already at t = 1; the
  // upper band stays above 1/2 (0.98, 0.86, 0.75) until S = 0 at 6.
  const Interval m = median_time(textbook_runs());
  EXPECT_EQ(m.method, "Kaplan-Meier");
  EXPECT_EQ(m.n, 8);
  EXPECT_EQ(m.estimate, 4.0);
  EXPECT_EQ(m.low, 1.0);
  EXPECT_EQ(m.high, 6.0);
  // 1..20 uncensored: S(t) = 1 - t/20, S(10) = 1/2 exactly, so the median is (10 + 11) / 2, the sample
  // median. Bands (Python): lower(4) = 0.5511, lower(5) = 0.49994 <= 1/2; upper(14) = 0.50135,
  // upper(15) = 0.44853 <= 1/2: the interval is [5, 15] (the binomial order-statistic one is [6, 15]).
  std::vector<TimeToEvent> twenty;
  std::vector<double> twenty_times;
  for (int t = 20; t >= 1; --t) {
    twenty.push_back({static_cast<double>(t), true});
    twenty_times.push_back(t);
  }
  const Interval m20 = median_time(twenty);
  EXPECT_DOUBLE_EQ(m20.estimate, median_of(twenty_times));
  EXPECT_EQ(m20.estimate, 10.5);
  EXPECT_EQ(m20.low, 5.0);
  EXPECT_EQ(m20.high, 15.0);
}

TEST(Survival, MedianWithoutCensoringIsTheSampleMedian) {
  const std::vector<std::vector<double>> samples = {{3, 1, 2, 5, 4}, {1, 2, 3, 3}, {1, 2, 2, 3}, {7, 7}, {4}};
  for (const std::vector<double>& times : samples) {
    std::vector<TimeToEvent> runs;
    for (const double t : times) runs.push_back({t, true});
    EXPECT_DOUBLE_EQ(median_time(runs).estimate, median_of(times)) << times.size() << " runs from " << times[0];
  }
}

TEST(Survival, MedianNotReachedIsInfinite) {
  const Interval none = median_time(std::vector<TimeToEvent>{{10, false}, {20, false}, {30, false}});
  EXPECT_EQ(none.n, 3);
  EXPECT_EQ(none.estimate, INFINITY);
  EXPECT_EQ(none.low, INFINITY);
  EXPECT_EQ(none.high, INFINITY);
  // One of five reached the target at 1: S = 0.8 from then on, never 1/2.
  const Interval few = median_time(std::vector<TimeToEvent>{{1, true}, {2, false}, {3, false}, {4, false}, {5, false}});
  EXPECT_EQ(few.estimate, INFINITY);
  EXPECT_EQ(few.high, INFINITY);
  const Interval empty = median_time(std::vector<TimeToEvent>{});
  EXPECT_EQ(empty.n, 0);
  EXPECT_TRUE(std::isnan(empty.estimate));
}

TEST(Survival, ReachedFractionHasWilsonBounds) {
  // 3 of 10: p = 0.3, Wilson (p + z^2/2n ± z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n) = [0.10779, 0.60322].
  std::vector<TimeToEvent> runs;
  for (int i = 0; i < 10; ++i) runs.push_back({static_cast<double>(100 + i), i < 3});
  const ReachedFraction f = reached_fraction(runs);
  EXPECT_EQ(f.reached, 3);
  EXPECT_EQ(f.n, 10);
  EXPECT_DOUBLE_EQ(f.fraction, 0.3);
  EXPECT_NEAR(f.low, 0.10779126740630099, 1e-12);
  EXPECT_NEAR(f.high, 0.6032218525388546, 1e-12);
  // 0 of 10: [0, z^2 / (n + z^2)] = [0, 0.27753].
  for (TimeToEvent& r : runs) r.reached = false;
  const ReachedFraction zero = reached_fraction(runs);
  EXPECT_EQ(zero.low, 0.0);
  EXPECT_NEAR(zero.high, 0.2775327998628892, 1e-12);
  EXPECT_EQ(reached_fraction({}).n, 0);
}

TEST(Survival, LogRankMatchesAHandComputedExample) {
  // a: 1, 3; b: 2, 3+ (censored at 3, the time of a's event: still at risk there).
  //   t   n_a n_b  d  d_a   E_a term       V term
  //   1    2   2   1   1    1 * 2/4        1 * (1/2)(1/2) * 3/3 = 1/4
  //   2    1   2   1   0    1 * 1/3        1 * (1/3)(2/3) * 2/2 = 2/9
  //   3    1   1   1   1    1 * 1/2        1 * (1/2)(1/2) * 1/1 = 1/4
  // O_a = 2, E_a = 4/3, V = 13/18, chi2 = (2/3)^2 / (13/18) = 8/13, p = erfc(sqrt(4/13)) = 0.432768.
  const LogRank lr = log_rank({{1, true}, {3, true}}, {{2, true}, {3, false}});
  EXPECT_EQ(lr.n_a, 2);
  EXPECT_EQ(lr.n_b, 2);
  EXPECT_DOUBLE_EQ(lr.observed_a, 2.0);
  EXPECT_NEAR(lr.expected_a, 4.0 / 3, 1e-15);
  EXPECT_DOUBLE_EQ(lr.observed_b, 1.0);
  EXPECT_NEAR(lr.expected_b, 5.0 / 3, 1e-15);
  EXPECT_NEAR(lr.variance, 13.0 / 18, 1e-15);
  EXPECT_NEAR(lr.chi2, 8.0 / 13, 1e-14);
  EXPECT_NEAR(lr.p_value, 0.43276758066778465, 1e-12);
  // Ties across groups (three events at 2, n = 7): O_a = 3, E_a = 57/28, V = 0.9272959 (Python).
  const LogRank tied = log_rank({{1, true}, {2, true}, {2, true}, {4, false}}, {{2, true}, {3, true}, {5, true}, {5, false}});
  EXPECT_NEAR(tied.expected_a, 57.0 / 28, 1e-14);
  EXPECT_NEAR(tied.variance, 0.9272959183673468, 1e-14);
  EXPECT_NEAR(tied.p_value, 0.31664575312551146, 1e-12);
}

TEST(Survival, LogRankOnIdenticalAndOnSeparatedGroups) {
  std::vector<TimeToEvent> a, late;
  for (int i = 1; i <= 10; ++i) {
    a.push_back({static_cast<double>(10 * i), i % 3 != 0});
    late.push_back({static_cast<double>(1000 + 10 * i), true});
  }
  const LogRank same = log_rank(a, a);
  EXPECT_NEAR(same.chi2, 0.0, 1e-12);
  EXPECT_NEAR(same.p_value, 1.0, 1e-9);
  const LogRank apart = log_rank(a, late);
  EXPECT_LT(apart.p_value, 1e-3);
  EXPECT_GT(apart.expected_a, 0.0);
  EXPECT_LT(apart.expected_a, apart.observed_a);  // a reaches the target sooner than "no difference" expects
  const LogRank swapped = log_rank(late, a);
  EXPECT_NEAR(swapped.chi2, apart.chi2, 1e-9);
  const LogRank no_events = log_rank({{1, false}}, {{2, false}});
  EXPECT_TRUE(std::isnan(no_events.chi2) && std::isnan(no_events.p_value));
}

std::vector<TimeToEvent> reached_at(const std::vector<double>& times) {
  std::vector<TimeToEvent> out;
  for (const double t : times) out.push_back({t, true});
  return out;
}

TEST(Survival, MedianRatioWithABootstrapInterval) {
  const std::vector<TimeToEvent> a = reached_at({2, 4, 6, 8, 10}), b = reached_at({1, 2, 3, 4, 5});
  const Interval r = median_ratio(a, b, 500), again = median_ratio(a, b, 500);
  EXPECT_EQ(r.n, 10);
  EXPECT_DOUBLE_EQ(r.estimate, 2.0);
  EXPECT_EQ(r.low, again.low);
  EXPECT_EQ(r.high, again.high);
  EXPECT_LT(r.low, 2.0);
  EXPECT_GT(r.high, 2.0);
  // Every resample of a constant group has the same median: the interval is the point.
  const Interval point = median_ratio(reached_at({10, 10, 10}), reached_at({5, 5}), 200);
  EXPECT_EQ(point.estimate, 2.0);
  EXPECT_EQ(point.low, 2.0);
  EXPECT_EQ(point.high, 2.0);
}

// A median that is not reached is bounded by the longest time observed (the KM curve is above 1/2
// up to it): never {10+, 10+} has median > 10, so never / fast (median 2) is at least 5 and
// fast / never at most 0.2, never 0 or inf.
TEST(Survival, MedianRatioBoundsAMedianThatIsNotReached) {
  const std::vector<TimeToEvent> never = {{10, false}, {10, false}}, fast = reached_at({1, 2, 3});
  EXPECT_EQ(bounded_median(never), 10.0);
  EXPECT_EQ(bounded_median(fast), 2.0);
  const Interval at_least = median_ratio(never, fast, 400);
  EXPECT_DOUBLE_EQ(at_least.estimate, 5.0);
  EXPECT_DOUBLE_EQ(at_least.low, 10.0 / 3.0);  // fast's resampled medians are 1, 2 or 3
  EXPECT_DOUBLE_EQ(at_least.high, 10.0);
  const Interval at_most = median_ratio(fast, never, 400);
  EXPECT_DOUBLE_EQ(at_most.estimate, 0.2);
  EXPECT_DOUBLE_EQ(at_most.low, 0.1);
  EXPECT_DOUBLE_EQ(at_most.high, 0.3);
  // a = {1, 2+}: S(1) = 1/2 (median 1) unless a resample is {2+, 2+} (probability 1/4: median > 2,
  // bounded by 2); b is always 1. The draws are 1 or 2, a quarter 2.
  const Interval open = median_ratio({{1, true}, {2, false}}, reached_at({1, 1}), 400);
  EXPECT_EQ(open.estimate, 1.0);
  EXPECT_EQ(open.low, 1.0);
  EXPECT_EQ(open.high, 2.0);
  const Interval both = median_ratio(never, never, 50);  // neither reached: run length over run length
  EXPECT_EQ(both.estimate, 1.0);
  EXPECT_EQ(both.low, 1.0);
  EXPECT_EQ(both.high, 1.0);
}

// Exponential times (rate 1: median log 2) censored at a uniform [0, 3) follow-up, n = 40, 1000
// samples from a fixed generator. The Brookmeyer-Crowley interval with the log-log band covers
// close to the nominal 95% at this n (0.955, 0.943, 0.946 with generator seeds 7, 8, 9); the band
// [0.93, 0.97] is 0.95 ± about 3 Monte Carlo standard errors (sqrt(0.95 * 0.05 / 1000) = 0.007).
// Swapping the band edges, or a band that ignores the variance, covers far less.
TEST(Survival, MedianIntervalCoversTheTrueMedian) {
  Generator gen(7);
  const int samples = 1000, n = 40;
  int covered = 0;
  for (int s = 0; s < samples; ++s) {
    std::vector<TimeToEvent> runs;
    for (int i = 0; i < n; ++i) {
      const double t = -std::log(1 - gen.uniform()), c = 3 * gen.uniform();
      runs.push_back({std::min(t, c), t <= c});
    }
    const Interval m = median_time(runs);
    covered += m.low <= std::log(2.0) && std::log(2.0) <= m.high ? 1 : 0;
  }
  const double rate = static_cast<double>(covered) / samples;
  EXPECT_GE(rate, 0.93);
  EXPECT_LE(rate, 0.97);
}

}  // namespace
}  // namespace normlab::stats
