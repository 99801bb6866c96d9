#include "xiong/stats.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/error.h"
#include "core/random.h"

namespace normlab::xiong {

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
  const double half = t_quantile_975(out.n - 1) * sd / std::sqrt(static_cast<double>(v.size()));
  out.low = mean - half;
  out.high = mean + half;
  return out;
}

double quantile_of_sorted(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t i = static_cast<size_t>(pos);
  const double frac = pos - static_cast<double>(i);
  return i + 1 < sorted.size() ? sorted[i] * (1 - frac) + sorted[i + 1] * frac : sorted[i];
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

Interval mean_interval(const std::vector<double>& values) { return t_interval(values, "t"); }

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

Interval bootstrap(int n, const std::function<double(const std::vector<int>&)>& statistic, int resamples,
                   uint64_t seed) {
  Interval out;
  out.method = "bootstrap";
  out.n = n;
  if (n <= 0) return out;
  std::vector<int> all(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) all[static_cast<size_t>(i)] = i;
  out.estimate = statistic(all);
  Generator gen(seed);
  std::vector<double> values;
  std::vector<int> pick(static_cast<size_t>(n));
  for (int r = 0; r < resamples; ++r) {
    for (int& p : pick) p = static_cast<int>(gen.below(static_cast<uint64_t>(n)));
    const double v = statistic(pick);
    if (std::isfinite(v)) values.push_back(v);
  }
  if (values.empty() || n == 1) {
    out.low = -INFINITY;
    out.high = INFINITY;
    return out;
  }
  std::sort(values.begin(), values.end());
  out.low = quantile_of_sorted(values, 0.025);
  out.high = quantile_of_sorted(values, 0.975);
  return out;
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

void Verdict::decide_direction(double null_value, Side predicted) {
  const bool above = predicted == Side::Above;
  criterion = fmt::format("reproduced if the 95% CI lies {} {}, contradicted if it lies {} it, else inconclusive",
                          above ? "above" : "below", null_value, above ? "below" : "above");
  if (!estimate.valid()) {
    verdict = "inconclusive";
    return;
  }
  const bool lies_above = estimate.low > null_value, lies_below = estimate.high < null_value;
  if (above ? lies_above : lies_below) verdict = "reproduced";
  else if (above ? lies_below : lies_above) verdict = "contradicted";
  else verdict = "inconclusive";
}

void Verdict::decide_equivalence(double center, double margin) {
  decide_within(center - margin, center + margin);
  criterion += fmt::format(" ({} ± {})", center, margin);
}

void Verdict::decide_within(double low, double high) {
  criterion = fmt::format("reproduced if the 95% CI lies inside [{:.4g}, {:.4g}], contradicted if it lies wholly "
                          "outside, else inconclusive", low, high);
  if (!estimate.valid()) {
    verdict = "inconclusive";
    return;
  }
  if (estimate.low >= low && estimate.high <= high) verdict = "reproduced";
  else if (estimate.high < low || estimate.low > high) verdict = "contradicted";
  else verdict = "inconclusive";
}

nlohmann::json Verdict::to_json() const {
  auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"id", id},
          {"claim", claim},
          {"paper", paper},
          {"quantity", quantity},
          {"n_seeds", estimate.n},
          {"steps", steps},
          {"estimate", number(estimate.estimate)},
          {"ci_low", number(estimate.low)},
          {"ci_high", number(estimate.high)},
          {"ci_method", estimate.method},
          {"criterion", criterion},
          {"verdict", verdict},
          {"note", note}};
}

}  // namespace normlab::xiong
