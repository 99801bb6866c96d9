// normlab_stats: 95% confidence intervals over seeds (the Xiong suite's statistics, needing only core).
//
// Intervals (every one at 95%, the method named in Interval::method):
//   mean_interval        Student t over the values (n - 1 degrees of freedom)
//   paired_difference    Student t over the per-seed differences a_i - b_i (same seed, same data)
//   log_ratio            Student t over log(a_i / b_i), reported as the ratio exp(.): a geometric mean
//   bootstrap            percentile bootstrap over seeds: `statistic` evaluated on resampled seed
//                        sets (with replacement), B resamples from a fixed generator (reproducible)
// The t methods also carry the two-sided p-value of "no effect" (estimate == 0; log-ratio == 0, i.e.
// ratio == 1). holm_adjust corrects a family of such p-values for multiplicity.
// Time-to-event statistics (Kaplan-Meier, log-rank, RMST) are in stats/survival.h, the exact tests
// (sign flip, Fisher, TOST) in stats/exact_tests.h.
#pragma once
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace normlab::stats {

struct Interval {
  double estimate = NAN, low = NAN, high = NAN;
  int n = 0;           // seeds (or pairs) behind it
  std::string method;  // "t", "paired t", "log-ratio t", "bootstrap", "Kaplan-Meier"
  // Two-sided p-value of the test of no effect: estimate == 0 for "t" and "paired t", log-ratio == 0
  // for "log-ratio t"; NaN where the method has no test (bootstrap, Kaplan-Meier) or n < 2.
  double p_value = NAN;
  bool valid() const { return n > 0 && !std::isnan(estimate); }  // an infinite ratio is an estimate
};

// The distributions are Boost.Math's (exact to about machine precision), checked against known
// answers in tests/stats/stats_test.cpp.
// The p quantile of Student's t with `df` degrees of freedom (df >= 1, 0 < p < 1).
double t_quantile(double p, int df);
// t_quantile(0.975, df): the half-width factor of a two-sided 95% interval.
double t_quantile_975(int df);
// P(|T| >= |t_stat|) for Student's t with `df` degrees of freedom (df >= 1): 1 at t = 0, 0 at
// |t| = inf, NaN for a NaN t.
double t_two_sided_p(double t_stat, int df);
// I_x(a, b), the regularized incomplete beta function, for a, b > 0 and x in [0, 1].
double regularized_incomplete_beta(double a, double b, double x);

// Holm-Bonferroni step-down adjustment: with the m non-NaN p-values sorted, p_(1) <= ... <= p_(m),
//   adjusted_(i) = min(1, max_{j <= i} (m - j + 1) p_(j))
// returned in the input order (rejecting adjusted <= alpha controls the family-wise error at alpha).
// NaN entries stay NaN and do not count in m; other values must lie in [0, 1].
std::vector<double> holm_adjust(const std::vector<double>& p_values);

// Non-finite values are dropped (and not counted in n). n == 1 gives an infinite interval.
Interval mean_interval(const std::vector<double>& values);
// The t interval of the mean at another confidence level (0 < level < 1; 0.90 for the two
// one-sided tests of an equivalence claim): mean -+ t_{(1 + level) / 2, n - 1} se. mean_interval is mean_interval_at(values, 0.95).
Interval mean_interval_at(const std::vector<double>& values, double level);
// Pairs where either value is non-finite are dropped.
Interval paired_difference(const std::vector<double>& a, const std::vector<double>& b);
// Pairs with a non-positive or non-finite value are dropped.
Interval log_ratio(const std::vector<double>& a, const std::vector<double>& b);
// statistic(indices) for indices resampled from 0 .. n - 1; non-finite results are skipped.
Interval bootstrap(int n, const std::function<double(const std::vector<int>&)>& statistic,
                   int resamples = 4000, uint64_t seed = 20200212);
// The finite values of `statistic` on `resamples` resampled index sets (bootstrap's draws).
std::vector<double> bootstrap_draws(int n, const std::function<double(const std::vector<int>&)>& statistic,
                                    int resamples = 4000, uint64_t seed = 20200212);
// The (1 - level) / 2 and (1 + level) / 2 percentiles, as below (level 0.90 for two one-sided tests).
std::pair<double, double> percentile_interval(std::vector<double> draws, double level);
// The 2.5% and 97.5% percentiles of `draws` (sorted here), by linear interpolation between order
// statistics: quantile q sits at position q (N - 1) of the sorted draws x_0 <= ... <= x_{N-1}, so
// 0, 1, ..., 1000 gives exactly {25, 975}. Infinite draws are allowed (a bound next to an infinite
// draw is that infinity: an open interval); NaN draws are dropped. {NaN, NaN} when none is left.
// The bootstrap's interval.
std::pair<double, double> percentile_interval(std::vector<double> draws);

// The smallest number of seeds n >= 2 whose 95% t interval of a mean (or a paired difference) with
// standard deviation `sd` has half-width <= `half_width`: t_{n-1} sd / sqrt(n) <= half_width. The
// seeds a claim needs to decide a margin at the pilot's spread. Capped at 100000.
int seeds_to_decide(double sd, double half_width);

// The median of the finite values (NaN when none).
double median_of(std::vector<double> values);

// "0.123 [0.101, 0.145]" (significant digits); "-" when invalid.
std::string interval_text(const Interval& i, int digits = 3);

}  // namespace normlab::stats
