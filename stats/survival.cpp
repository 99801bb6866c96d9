#include "stats/survival.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/normal.hpp>

#include "core/error.h"
#include "core/random.h"

namespace normlab::stats {

namespace {

const double kZ975 = boost::math::quantile(boost::math::normal(), 0.975);  // 1.95996...
constexpr double kHalfTolerance = 1e-12;  // S(t) "is" 1/2 within rounding of the product

// The runs with a finite time, sorted by time; throws on a negative time.
std::vector<TimeToEvent> sorted_runs(const std::vector<TimeToEvent>& runs, const char* op) {
  std::vector<TimeToEvent> out;
  for (const TimeToEvent& r : runs) {
    if (!std::isfinite(r.time)) continue;
    NL_CHECK(r.time >= 0, op, "times must be >= 0, got {}", r.time);
    out.push_back(r);
  }
  std::sort(out.begin(), out.end(), [](const TimeToEvent& x, const TimeToEvent& y) { return x.time < y.time; });
  return out;
}

// The 95% log-log band of S with Greenwood sum g = Var S / S^2 (see KaplanMeier).
std::pair<double, double> log_log_band(double s, double greenwood_sum) {
  if (s <= 0) return {0.0, 0.0};
  if (s >= 1) return {1.0, 1.0};
  const double theta = std::sqrt(greenwood_sum) / std::fabs(std::log(s));
  return {std::pow(s, std::exp(kZ975 * theta)), std::pow(s, std::exp(-kZ975 * theta))};
}

// The index of the first j with values[j] <= 1/2, or values.size() when none.
size_t first_at_or_below_half(const std::vector<double>& values) {
  for (size_t j = 0; j < values.size(); ++j)
    if (values[j] <= 0.5 + kHalfTolerance) return j;
  return values.size();
}

double ratio_of_medians(double a, double b) {
  if (b == 0) return a == 0 ? NAN : INFINITY;
  return a / b;
}

std::vector<TimeToEvent> resample(const std::vector<TimeToEvent>& runs, Generator& gen) {
  std::vector<TimeToEvent> out(runs.size());
  for (TimeToEvent& r : out) r = runs[static_cast<size_t>(gen.below(runs.size()))];
  return out;
}

}  // namespace

double KaplanMeier::survival_at(double t) const {
  // The last event time <= t; S = 1 before the first.
  const auto it = std::upper_bound(times.begin(), times.end(), t);
  return it == times.begin() ? 1.0 : survival[static_cast<size_t>(it - times.begin() - 1)];
}

KaplanMeier kaplan_meier(const std::vector<TimeToEvent>& runs) {
  const std::vector<TimeToEvent> sorted = sorted_runs(runs, "kaplan_meier");
  KaplanMeier km;
  km.n = static_cast<int>(sorted.size());
  int remaining = km.n;  // runs with time >= the current one
  double s = 1, greenwood_sum = 0;
  for (size_t i = 0; i < sorted.size();) {
    const double t = sorted[i].time;
    int reached = 0, censored = 0;
    for (; i < sorted.size() && sorted[i].time == t; ++i) (sorted[i].reached ? reached : censored) += 1;
    if (reached > 0) {  // events first: the runs censored at t are still at risk at t
      s *= 1.0 - static_cast<double>(reached) / remaining;
      if (remaining > reached) greenwood_sum += static_cast<double>(reached) / (static_cast<double>(remaining) * (remaining - reached));
      const auto [lower, upper] = log_log_band(s, greenwood_sum);
      km.times.push_back(t);
      km.survival.push_back(s);
      km.variance.push_back(s * s * greenwood_sum);  // 0 once s = 0
      km.lower.push_back(lower);
      km.upper.push_back(upper);
      km.at_risk.push_back(remaining);
      km.events.push_back(reached);
      km.reached += reached;
    }
    remaining -= reached + censored;
  }
  return km;
}

Interval median_time(const KaplanMeier& km) {
  Interval out;
  out.method = "Kaplan-Meier";
  out.n = km.n;
  if (km.n == 0) return out;
  const size_t j = first_at_or_below_half(km.survival);
  if (j == km.times.size()) {
    out.estimate = INFINITY;
  } else if (std::fabs(km.survival[j] - 0.5) <= kHalfTolerance && j + 1 < km.times.size()) {
    out.estimate = 0.5 * (km.times[j] + km.times[j + 1]);  // S is 1/2 on [t_j, t_{j+1}): its midpoint
  } else {
    out.estimate = km.times[j];
  }
  const size_t low = first_at_or_below_half(km.lower), high = first_at_or_below_half(km.upper);
  out.low = low < km.times.size() ? km.times[low] : INFINITY;
  out.high = high < km.times.size() ? km.times[high] : INFINITY;
  return out;
}

Interval median_time(const std::vector<TimeToEvent>& runs) { return median_time(kaplan_meier(runs)); }

double bounded_median(const std::vector<TimeToEvent>& runs) {
  const double median = median_time(runs).estimate;
  if (!std::isinf(median)) return median;
  double longest = 0.0;  // S stays above 1/2 up to the last time observed: the median lies beyond it
  for (const TimeToEvent& r : runs)
    if (std::isfinite(r.time)) longest = std::max(longest, r.time);
  return longest;
}

ReachedFraction reached_fraction(const std::vector<TimeToEvent>& runs) {
  ReachedFraction out;
  for (const TimeToEvent& r : sorted_runs(runs, "reached_fraction")) {
    ++out.n;
    out.reached += r.reached ? 1 : 0;
  }
  if (out.n == 0) return out;
  // Wilson: the p with |p_hat - p| = z sqrt(p (1 - p) / n), solved for p:
  //   (p_hat + z^2 / 2n ± z sqrt(p_hat (1 - p_hat) / n + z^2 / 4n^2)) / (1 + z^2 / n)
  const double n = out.n, p = out.reached / n, z2 = kZ975 * kZ975;
  const double center = (p + z2 / (2 * n)) / (1 + z2 / n);
  const double half = kZ975 * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n);
  out.fraction = p;
  out.low = std::max(0.0, center - half);
  out.high = std::min(1.0, center + half);
  return out;
}

LogRank log_rank(const std::vector<TimeToEvent>& a, const std::vector<TimeToEvent>& b) {
  struct Tagged {
    TimeToEvent run;
    bool in_a;
  };
  std::vector<Tagged> pooled;
  for (const TimeToEvent& r : sorted_runs(a, "log_rank")) pooled.push_back({r, true});
  for (const TimeToEvent& r : sorted_runs(b, "log_rank")) pooled.push_back({r, false});
  std::stable_sort(pooled.begin(), pooled.end(), [](const Tagged& x, const Tagged& y) { return x.run.time < y.run.time; });
  LogRank out;
  for (const Tagged& p : pooled) (p.in_a ? out.n_a : out.n_b) += 1;
  int risk_a = out.n_a, risk_b = out.n_b;
  for (size_t i = 0; i < pooled.size();) {
    const double t = pooled[i].run.time;
    int d_a = 0, d_b = 0, gone_a = 0, gone_b = 0;
    for (; i < pooled.size() && pooled[i].run.time == t; ++i) {
      (pooled[i].in_a ? gone_a : gone_b) += 1;
      if (pooled[i].run.reached) (pooled[i].in_a ? d_a : d_b) += 1;
    }
    const double d = d_a + d_b, n = risk_a + risk_b, share_a = risk_a / n;
    if (d > 0) {  // events first: the runs censored at t are still at risk at t
      out.observed_a += d_a;
      out.observed_b += d_b;
      out.expected_a += d * share_a;
      out.expected_b += d * (1 - share_a);
      if (n > 1) out.variance += d * share_a * (1 - share_a) * (n - d) / (n - 1);
    }
    risk_a -= gone_a;
    risk_b -= gone_b;
  }
  if (out.variance > 0) {
    const double diff = out.observed_a - out.expected_a;
    out.chi2 = diff * diff / out.variance;
    out.p_value = boost::math::cdf(boost::math::complement(boost::math::chi_squared(1), out.chi2));
  }
  return out;
}

Interval median_ratio(const std::vector<TimeToEvent>& a, const std::vector<TimeToEvent>& b, int resamples,
                      uint64_t seed) {
  NL_CHECK(resamples >= 1, "median_ratio", "resamples must be >= 1, got {}", resamples);
  const std::vector<TimeToEvent> ra = sorted_runs(a, "median_ratio"), rb = sorted_runs(b, "median_ratio");
  Interval out;
  out.method = "KM median ratio bootstrap";
  out.n = static_cast<int>(ra.size() + rb.size());
  if (ra.empty() || rb.empty()) return out;
  out.estimate = ratio_of_medians(bounded_median(ra), bounded_median(rb));
  Generator gen(seed);
  std::vector<double> draws;
  for (int r = 0; r < resamples; ++r) {
    const std::vector<TimeToEvent> sa = resample(ra, gen), sb = resample(rb, gen);
    draws.push_back(ratio_of_medians(bounded_median(sa), bounded_median(sb)));
  }
  std::tie(out.low, out.high) = percentile_interval(std::move(draws));  // drops the NaN draws
  if (std::isnan(out.low)) {  // no draw had a ratio
    out.low = 0.0;
    out.high = INFINITY;
  }
  return out;
}

namespace {

struct AreaAndVariance {
  double area = NAN, variance = NAN;
  int n = 0;
};

AreaAndVariance restricted_area(const std::vector<TimeToEvent>& runs, double tau) {
  NL_CHECK(tau > 0 && std::isfinite(tau), "rmst", "tau must be a positive number, got {}", tau);
  const KaplanMeier km = kaplan_meier(runs);
  AreaAndVariance out;
  out.n = km.n;
  if (km.n == 0) return out;
  size_t k = 0;  // event times <= tau
  while (k < km.times.size() && km.times[k] <= tau) ++k;
  // segment j (j = 0..k): from t_j (t_0 = 0) to t_{j+1} (or tau), under S = 1 (j = 0) or survival[j-1]
  std::vector<double> segment(k + 1);
  for (size_t j = 0; j <= k; ++j) {
    const double start = j == 0 ? 0.0 : km.times[j - 1], end = j == k ? tau : km.times[j];
    segment[j] = (j == 0 ? 1.0 : km.survival[j - 1]) * (end - start);
  }
  out.area = 0;
  for (double a : segment) out.area += a;
  out.variance = 0;
  double after = 0;  // A_j: the area under S from t_j to tau, built from the right
  for (size_t j = k; j >= 1; --j) {
    after += segment[j];
    const double n = km.at_risk[j - 1], d = km.events[j - 1];
    if (n > d) out.variance += after * after * d / (n * (n - d));
  }
  return out;
}

}  // namespace

Interval rmst(const std::vector<TimeToEvent>& runs, double tau) {
  const AreaAndVariance r = restricted_area(runs, tau);
  const double half = kZ975 * std::sqrt(r.variance);
  return Interval{r.area, r.area - half, r.area + half, r.n, "RMST"};
}

Interval rmst_difference(const std::vector<TimeToEvent>& a, const std::vector<TimeToEvent>& b, double tau) {
  const AreaAndVariance ra = restricted_area(a, tau), rb = restricted_area(b, tau);
  const double diff = ra.area - rb.area, sd = std::sqrt(ra.variance + rb.variance);
  Interval out{diff, diff - kZ975 * sd, diff + kZ975 * sd, ra.n + rb.n, "RMST difference"};
  if (sd > 0) out.p_value = 2 * boost::math::cdf(boost::math::complement(boost::math::normal(), std::abs(diff) / sd));
  return out;
}

}  // namespace normlab::stats
