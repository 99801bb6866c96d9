#include "stats/stats.h"

#include <algorithm>
#include <tuple>

#include <boost/math/distributions/students_t.hpp>
#include <boost/math/special_functions/beta.hpp>
#include <fmt/format.h>

#include "core/error.h"
#include "core/random.h"

namespace normlab::stats {

namespace {

std::vector<double> finite(const std::vector<double>& v) {
  std::vector<double> out;
  for (const double x : v)
    if (std::isfinite(x)) out.push_back(x);
  return out;
}

// Mean and the t interval at `level` of finite values.
Interval t_interval(const std::vector<double>& values, const std::string& method, double level = 0.95) {
  Interval out;
  out.method = method;
  const std::vector<double> v = finite(values);
  out.n = static_cast<int>(v.size());
  if (v.empty()) return out;
  double sum = 0;
  for (const double x : v) sum += x;
  const double mean = sum / static_cast<double>(v.size());
  out.estimate = mean;
  if (v.size() == 1) {
    out.low = -INFINITY;
    out.high = INFINITY;
    return out;
  }
  double sq = 0;
  for (const double x : v) sq += (x - mean) * (x - mean);
  const double sd = std::sqrt(sq / static_cast<double>(v.size() - 1));
  const double se = sd / std::sqrt(static_cast<double>(v.size()));
  const double half = t_quantile((1 + level) / 2, out.n - 1) * se;
  out.low = mean - half;
  out.high = mean + half;
  // t = mean / se; all values equal: certain, p = 1 at a zero mean and 0 otherwise.
  out.p_value = se > 0 ? t_two_sided_p(mean / se, out.n - 1) : (mean == 0 ? 1.0 : 0.0);
  return out;
}

// Linear interpolation at position q (N - 1). Next to an infinite draw (0 < frac < 1) the
// interpolant is that infinity; at an order statistic (frac == 0) it is the draw itself.
double quantile_of_sorted(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t i = static_cast<size_t>(pos);
  const double frac = pos - static_cast<double>(i);
  if (i + 1 >= sorted.size() || frac == 0 || sorted[i] == sorted[i + 1]) return sorted[i];
  if (std::isinf(sorted[i]) || std::isinf(sorted[i + 1]))
    return std::isinf(sorted[i]) && std::isinf(sorted[i + 1]) ? NAN : (std::isinf(sorted[i]) ? sorted[i] : sorted[i + 1]);
  return sorted[i] * (1 - frac) + sorted[i + 1] * frac;
}

}  // namespace

double t_quantile(double p, int df) {
  NL_CHECK(df >= 1, "stats", "t quantile needs df >= 1, got {}", df);
  NL_CHECK(p > 0 && p < 1, "stats", "t quantile needs p in (0, 1), got {}", p);
  return boost::math::quantile(boost::math::students_t(df), p);
}

double t_quantile_975(int df) { return t_quantile(0.975, df); }

double regularized_incomplete_beta(double a, double b, double x) {
  NL_CHECK(a > 0 && b > 0, "stats", "incomplete beta needs a, b > 0, got {} and {}", a, b);
  NL_CHECK(x >= 0 && x <= 1, "stats", "incomplete beta needs x in [0, 1], got {}", x);
  return boost::math::ibeta(a, b, x);
}

double t_two_sided_p(double t_stat, int df) {
  NL_CHECK(df >= 1, "stats", "t p-value needs df >= 1, got {}", df);
  if (std::isnan(t_stat)) return NAN;
  if (std::isinf(t_stat)) return 0.0;
  return 2 * boost::math::cdf(boost::math::complement(boost::math::students_t(df), std::fabs(t_stat)));
}

std::vector<double> holm_adjust(const std::vector<double>& p_values) {
  std::vector<size_t> order;
  for (size_t i = 0; i < p_values.size(); ++i) {
    if (std::isnan(p_values[i])) continue;
    NL_CHECK(p_values[i] >= 0 && p_values[i] <= 1, "holm_adjust", "p-value {} is {}, not in [0, 1]", i, p_values[i]);
    order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return p_values[x] < p_values[y]; });
  std::vector<double> adjusted(p_values.size(), NAN);
  const size_t m = order.size();
  double running = 0;  // the step-down maximum keeps the adjusted values monotone in p
  for (size_t j = 0; j < m; ++j) {
    running = std::max(running, std::min(1.0, static_cast<double>(m - j) * p_values[order[j]]));
    adjusted[order[j]] = running;
  }
  return adjusted;
}

Interval mean_interval(const std::vector<double>& values) { return t_interval(values, "t"); }

Interval mean_interval_at(const std::vector<double>& values, double level) {
  NL_CHECK(level > 0 && level < 1, "stats", "an interval's level must lie in (0, 1), got {}", level);
  return t_interval(values, fmt::format("t ({:g}%)", level * 100), level);
}

Interval paired_difference(const std::vector<double>& a, const std::vector<double>& b) {
  NL_CHECK(a.size() == b.size(), "stats", "paired difference needs equal sizes, got {} and {}", a.size(), b.size());
  std::vector<double> d;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::isfinite(a[i]) && std::isfinite(b[i])) d.push_back(a[i] - b[i]);
  return t_interval(d, "paired t");
}

Interval log_ratio(const std::vector<double>& a, const std::vector<double>& b) {
  NL_CHECK(a.size() == b.size(), "stats", "log ratio needs equal sizes, got {} and {}", a.size(), b.size());
  std::vector<double> r;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::isfinite(a[i]) && std::isfinite(b[i]) && a[i] > 0 && b[i] > 0) r.push_back(std::log(a[i] / b[i]));
  Interval out = t_interval(r, "log-ratio t");
  out.estimate = std::exp(out.estimate);
  out.low = std::exp(out.low);
  out.high = std::exp(out.high);
  return out;
}

std::vector<double> bootstrap_draws(int n, const std::function<double(const std::vector<int>&)>& statistic,
                                    int resamples, uint64_t seed) {
  std::vector<double> values;
  if (n <= 0) return values;
  Generator gen(seed);
  std::vector<int> pick(static_cast<size_t>(n));
  for (int r = 0; r < resamples; ++r) {
    for (int& p : pick) p = static_cast<int>(gen.below(static_cast<uint64_t>(n)));
    const double v = statistic(pick);
    if (std::isfinite(v)) values.push_back(v);
  }
  return values;
}

Interval bootstrap(int n, const std::function<double(const std::vector<int>&)>& statistic, int resamples,
                   uint64_t seed) {
  Interval out;
  out.method = "bootstrap";
  out.n = n;
  if (n <= 0) return out;
  std::vector<int> all(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) all[static_cast<size_t>(i)] = i;
  out.estimate = statistic(all);
  std::vector<double> values = bootstrap_draws(n, statistic, resamples, seed);
  if (values.empty() || n == 1) {
    out.low = -INFINITY;
    out.high = INFINITY;
    return out;
  }
  std::tie(out.low, out.high) = percentile_interval(std::move(values));
  return out;
}

namespace {

std::pair<double, double> percentiles(std::vector<double> draws, double q_low, double q_high) {
  draws.erase(std::remove_if(draws.begin(), draws.end(), [](double v) { return std::isnan(v); }), draws.end());
  if (draws.empty()) return {NAN, NAN};
  std::sort(draws.begin(), draws.end());
  return {quantile_of_sorted(draws, q_low), quantile_of_sorted(draws, q_high)};
}

}  // namespace

std::pair<double, double> percentile_interval(std::vector<double> draws) { return percentiles(std::move(draws), 0.025, 0.975); }

std::pair<double, double> percentile_interval(std::vector<double> draws, double level) {
  NL_CHECK(level > 0 && level < 1, "stats", "an interval's level must lie in (0, 1), got {}", level);
  return percentiles(std::move(draws), (1 - level) / 2, (1 + level) / 2);
}

int seeds_to_decide(double sd, double half_width) {
  NL_CHECK(sd >= 0 && half_width > 0, "stats", "seeds_to_decide needs sd >= 0 and half_width > 0, got {} and {}", sd,
           half_width);
  for (int n = 2; n < 100000; ++n)
    if (t_quantile_975(n - 1) * sd / std::sqrt(static_cast<double>(n)) <= half_width) return n;
  return 100000;
}

double median_of(std::vector<double> values) {
  std::vector<double> v = finite(values);
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string interval_text(const Interval& i, int digits) {
  if (!i.valid()) return "-";
  auto f = [digits](double v) { return std::isfinite(v) ? fmt::format("{:.{}g}", v, digits) : std::string(v > 0 ? "inf" : "-inf"); };
  return fmt::format("{} [{}, {}]", f(i.estimate), f(i.low), f(i.high));
}

}  // namespace normlab::stats
