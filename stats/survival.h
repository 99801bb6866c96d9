// Time-to-event statistics of the Xiong reproduction: "steps until a run's validation loss first
// reaches a target". A run that never reaches it is right-censored at its last evaluated step: we
// know only that its time exceeds that step.
//
//   kaplan_meier     the Kaplan-Meier estimate of S(t) = P(time > t), Greenwood's variance and the
//                    pointwise 95% log-log band
//   median_time      the KM median with the Brookmeyer-Crowley 95% interval (an Interval)
//   reached_fraction how many runs reached the target, with a Wilson 95% interval
//   log_rank         the two-sample log-rank test (chi-square, 1 df)
//   median_ratio     the ratio of two KM medians with a percentile bootstrap interval over runs
//
// Ties (the standard convention): at a time where some runs reach the target and others are
// censored, the events come first, so the censored runs still count as at risk at that time.
// Non-finite times are dropped (not counted); negative times are an error.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "stats/stats.h"

namespace normlab::stats {

struct TimeToEvent {
  double time = NAN;     // the step at which the target was first reached, or the last step evaluated
  bool reached = false;  // false: censored at `time`
};

// The step function S(t), right-continuous, changing only at the event times t_1 < ... < t_k:
//   S(t) = prod_{t_j <= t} (1 - d_j / n_j)          (d_j reached at t_j, n_j at risk: time >= t_j)
// Greenwood's variance:
//   Var S(t) = S(t)^2 sum_{t_j <= t} d_j / (n_j (n_j - d_j))
// (0 once S = 0, where every run still at risk has reached the target). The 95% log-log band:
//   theta = sqrt(sum d_j / (n_j (n_j - d_j))) / |log S|,  [S^exp(z theta), S^exp(-z theta)], z = 1.96
// which stays inside [0, 1]; it is [0, 0] where S = 0.
struct KaplanMeier {
  std::vector<double> times;     // the distinct event times, increasing
  std::vector<double> survival;  // S just after times[j]
  std::vector<double> variance;  // Greenwood's variance of survival[j]
  std::vector<double> lower, upper;  // the 95% log-log band of survival[j]
  std::vector<int> at_risk;      // n_j
  std::vector<int> events;       // d_j
  int n = 0;                     // runs behind it (finite times)
  int reached = 0;               // runs that reached the target

  // S(t): 1 before the first event time.
  double survival_at(double t) const;
};

KaplanMeier kaplan_meier(const std::vector<TimeToEvent>& runs);

// The median time M = the smallest t with S(t) <= 1/2, INFINITY when S never falls to 1/2 (the
// median is not reached). Where S is exactly 1/2 on [t_j, t_{j+1}), M is the midpoint of that flat
// stretch, (t_j + t_{j+1}) / 2 (t_j when no event follows), so that without censoring M is the
// sample median (median_of). The interval is Brookmeyer and Crowley's: the set of t whose pointwise
// 95% log-log band [lower(t), upper(t)] contains 1/2. The lower edge lies below S, so it reaches 1/2
// first and opens the set; the upper edge closes it:
//   low  = the first t with lower(t) <= 1/2   (from here on the band reaches down to 1/2)
//   high = the first t with upper(t) <= 1/2   (the whole band is at or below 1/2), INFINITY if none.
// (Exactly that set when the edges fall monotonically, as they nearly always do; where an edge
// rises again, these first crossings are still the bounds reported, as is usual.)
// Interval{estimate M, low, high, n runs, method "Kaplan-Meier"}; NaN estimate when there are no runs.
Interval median_time(const KaplanMeier& km);
Interval median_time(const std::vector<TimeToEvent>& runs);

struct ReachedFraction {
  int reached = 0, n = 0;  // runs that reached the target, out of n
  double fraction = NAN;   // reached / n (ignores how long the others were followed: see kaplan_meier)
  double low = NAN, high = NAN;  // Wilson's 95% score interval
};
ReachedFraction reached_fraction(const std::vector<TimeToEvent>& runs);

// The log-rank test of S_a == S_b. At each distinct event time t_j of the pooled runs, with n_j at
// risk (n_aj in a), d_j events (d_aj in a):
//   E_a = sum d_j n_aj / n_j,   V = sum d_j (n_aj / n_j)(1 - n_aj / n_j)(n_j - d_j) / (n_j - 1)
//   chi2 = (O_a - E_a)^2 / V,   p = P(chi2_1 >= chi2) (Boost.Math's chi-squared)
// (terms with n_j = 1 add nothing to V). chi2 and p are NaN when V = 0 (no information: no events).
struct LogRank {
  double chi2 = NAN, p_value = NAN;
  double observed_a = 0, expected_a = 0;  // events in a, and expected under S_a == S_b
  double observed_b = 0, expected_b = 0;
  double variance = 0;                    // V
  int n_a = 0, n_b = 0;
};
LogRank log_rank(const std::vector<TimeToEvent>& a, const std::vector<TimeToEvent>& b);

// The restricted mean survival time to tau: the expected steps until the target when a run that has
// not reached it by tau counts as tau, i.e. the area under S from 0 to tau. With event times
// t_1 < ... < t_k <= tau, t_0 = 0 and S(t_0) = 1:
//   RMST = sum_{j=1..k} S(t_{j-1}) (t_j - t_{j-1}) + S(t_k) (tau - t_k)
// Its variance (Klein and Moeschberger, section 4.5), with A_j the area under S from t_j to tau:
//   Var = sum_{j=1..k} A_j^2 d_j / (n_j (n_j - d_j))      (terms with n_j = d_j add nothing)
// Without censoring before tau it is mean(min(T_i, tau)) with variance sum (x_i - mean)^2 / n^2.
// Interval{RMST, RMST -+ 1.96 sqrt(Var), n, "RMST"}; NaN for no runs; tau must be > 0.
Interval rmst(const std::vector<TimeToEvent>& runs, double tau);
// rmst(a) - rmst(b) with the variances added (independent groups), the 95% normal interval and the
// two-sided normal p-value of "no difference"; method "RMST difference".
Interval rmst_difference(const std::vector<TimeToEvent>& a, const std::vector<TimeToEvent>& b, double tau);

// The KM median, or where it is not reached (fewer than half of the runs got there, S stays above
// 1/2) the longest time observed: a lower bound on it. NaN for no runs.
double bounded_median(const std::vector<TimeToEvent>& runs);

// bounded_median(a) / bounded_median(b), with a percentile bootstrap interval (percentile_interval):
// each group resampled with replacement on its own, `resamples` times, from Generator(seed). Where
// b's median is not reached the ratio is an upper bound on the true one (its run length stands in),
// where a's is not reached a lower bound; both unreached: the ratio of the run lengths. x / 0 = inf
// (x > 0), 0 / 0 has no ratio (NaN; such draws are dropped). n = runs in a and b together; method
// "KM median ratio bootstrap". p_value stays NaN: use log_rank.
Interval median_ratio(const std::vector<TimeToEvent>& a, const std::vector<TimeToEvent>& b,
                      int resamples = 2000, uint64_t seed = 20200212);

}  // namespace normlab::stats
