#include "stats/stats.h"

#include <algorithm>
#include <array>
#include <tuple>

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

// Mean and the t half-width of finite values.
Interval t_interval(const std::vector<double>& values, const std::string& method) {
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
  const double half = t_quantile_975(out.n - 1) * se;
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

// The continued fraction of I_x(a, b) (DLMF 8.17.22):
//   I_x(a, b) = x^a (1 - x)^b / (a B(a, b)) * 1 / (1 + d_1 / (1 + d_2 / (1 + ...)))
//   d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)),   d_{2m} = m (b - m) x / ((a + 2m - 1)(a + 2m)),
// which converges quickly for x < (a + 1) / (a + b + 2). The denominator f = 1 + d_1 / (1 + ...) is
// evaluated forwards by the modified Lentz method: f_j = f_{j-1} C_j D_j with
//   D_j = 1 / (1 + d_j D_{j-1}),  C_j = 1 + d_j / C_{j-1}   (C_0 = f_0 = 1, D_0 = 0),
// a tiny number standing in for a zero C or D, until C_j D_j is 1 to machine precision.
double incomplete_beta_fraction(double a, double b, double x) {
  constexpr double tiny = 1e-300, eps = 1e-15;
  auto guard = [](double v) { return std::fabs(v) < tiny ? tiny : v; };
  double f = 1, c = 1, d = 0;
  for (int j = 1; j <= 2000; ++j) {
    const int m = j / 2;
    const double dj = j % 2 ? -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
                            : m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
    d = 1 / guard(1 + dj * d);
    c = guard(1 + dj / c);
    f *= c * d;
    if (std::fabs(c * d - 1) < eps) break;
  }
  const double log_front = a * std::log(x) + b * std::log1p(-x) + std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b);
  return std::exp(log_front) / (a * f);
}

}  // namespace

double t_quantile_975(int df) {
  NL_CHECK(df >= 1, "stats", "t quantile needs df >= 1, got {}", df);
  static const std::array<double, 30> table = {
      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
      2.120,  2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df <= 30) return table[static_cast<size_t>(df - 1)];
  // Cornish-Fisher expansion around the normal quantile (error < 1e-4 from df 30 on).
  const double z = 1.959963985, n = static_cast<double>(df);
  return z + (z * z * z + z) / (4 * n) + (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * n * n);
}

double regularized_incomplete_beta(double a, double b, double x) {
  NL_CHECK(a > 0 && b > 0, "stats", "incomplete beta needs a, b > 0, got {} and {}", a, b);
  NL_CHECK(x >= 0 && x <= 1, "stats", "incomplete beta needs x in [0, 1], got {}", x);
  if (x == 0 || x == 1) return x;
  // The fraction converges fast below the mean-ish point; above it use I_x(a, b) = 1 - I_{1-x}(b, a).
  if (x < (a + 1) / (a + b + 2)) return incomplete_beta_fraction(a, b, x);
  return 1 - incomplete_beta_fraction(b, a, 1 - x);
}

// With x = df / (df + t^2): P(|T| >= |t|) = I_x(df / 2, 1 / 2) (the t density integrated over both tails).
double t_two_sided_p(double t_stat, int df) {
  NL_CHECK(df >= 1, "stats", "t p-value needs df >= 1, got {}", df);
  if (std::isnan(t_stat)) return NAN;
  if (std::isinf(t_stat)) return 0.0;
  const double n = static_cast<double>(df);
  return regularized_incomplete_beta(n / 2, 0.5, n / (n + t_stat * t_stat));
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
  Interval out = mean_interval(values);
  if (out.n < 2) return out;
  double sq = 0;
  for (const double x : values)
    if (std::isfinite(x)) sq += (x - out.estimate) * (x - out.estimate);
  const double se = std::sqrt(sq / (out.n - 1) / out.n);
  double lo = 0, hi = 1e3;  // t_two_sided_p falls from 1 (t = 0) to 0: find p(t) = 1 - level
  for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
    const double mid = (lo + hi) / 2;
    (t_two_sided_p(mid, out.n - 1) > 1 - level ? lo : hi) = mid;
  }
  out.low = out.estimate - lo * se;
  out.high = out.estimate + lo * se;
  out.method = fmt::format("t ({:g}%)", level * 100);
  return out;
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
