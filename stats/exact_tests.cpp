#include "stats/exact_tests.h"

#include <algorithm>
#include <cstdint>

#include <boost/math/distributions/hypergeometric.hpp>
#include <boost/math/distributions/students_t.hpp>

#include "core/error.h"
#include "stats/stats.h"

namespace normlab::stats {

namespace {

std::vector<double> finite(const std::vector<double>& values) {
  std::vector<double> out;
  for (double v : values)
    if (std::isfinite(v)) out.push_back(v);
  return out;
}

// P(T_df >= t)
double t_upper_tail(double t, int df) {
  return boost::math::cdf(boost::math::complement(boost::math::students_t(df), t));
}

}  // namespace

TestResult sign_flip_test(const std::vector<double>& differences) {
  const std::vector<double> d = finite(differences);
  const int n = static_cast<int>(d.size());
  NL_CHECK(n <= 24, "sign_flip_test", "at most 24 differences (2^n sign patterns), got {}", n);
  TestResult r{NAN, NAN, n, "exact sign-flip permutation"};
  if (n == 0) return r;
  double sum = 0, largest = 0;
  for (double v : d) {
    sum += v;
    largest = std::max(largest, std::abs(v));
  }
  r.estimate = sum / n;
  const double observed = std::abs(sum), tolerance = 1e-12 * largest * n;
  int64_t as_extreme = 0;
  const uint64_t patterns = uint64_t{1} << n;
  for (uint64_t s = 0; s < patterns; ++s) {
    double flipped = 0;
    for (int i = 0; i < n; ++i) flipped += (s >> i & 1) ? -d[i] : d[i];
    as_extreme += std::abs(flipped) >= observed - tolerance;
  }
  r.p_value = static_cast<double>(as_extreme) / static_cast<double>(patterns);
  return r;
}

FisherResult fisher_exact(int a, int n_a, int b, int n_b) {
  NL_CHECK(n_a >= 0 && n_b >= 0 && n_a + n_b >= 1 && a >= 0 && a <= n_a && b >= 0 && b <= n_b, "fisher_exact",
           "expected 0 <= a <= n_a and 0 <= b <= n_b with n_a + n_b >= 1, got a {} of {}, b {} of {}", a, n_a, b, n_b);
  const int K = a + b, N = n_a + n_b;
  const int lo = std::max(0, n_a - (N - K)), hi = std::min(K, n_a);
  // X, the successes among arm a's n_a of the N runs when K of them succeed: hypergeometric.
  const boost::math::hypergeometric_distribution<double> X(K, n_a, N);
  auto probability = [&](int x) { return boost::math::pdf(X, x); };
  const double observed = probability(a);
  FisherResult r{0, 0, 0};
  for (int x = lo; x <= hi; ++x) {
    const double p = probability(x);
    if (p <= observed * (1 + 1e-7)) r.p_two_sided += p;
    if (x >= a) r.p_greater += p;
    if (x <= a) r.p_less += p;
  }
  r.p_two_sided = std::min(1.0, r.p_two_sided);
  r.p_greater = std::min(1.0, r.p_greater);
  r.p_less = std::min(1.0, r.p_less);
  return r;
}

TestResult tost_paired(const std::vector<double>& differences, double low, double high) {
  NL_CHECK(low < high, "tost_paired", "the margin needs low < high, got [{}, {}]", low, high);
  const std::vector<double> d = finite(differences);
  const int n = static_cast<int>(d.size());
  TestResult r{NAN, NAN, n, "two one-sided paired t tests (TOST)"};
  if (n < 2) return r;
  double mean = 0;
  for (double v : d) mean += v / n;
  double ss = 0;
  for (double v : d) ss += (v - mean) * (v - mean);
  const double se = std::sqrt(ss / (n - 1) / n);
  r.estimate = mean;
  if (se == 0) {  // every difference equal: inside the margin or not, with certainty
    r.p_value = mean > low && mean < high ? 0.0 : 1.0;
    return r;
  }
  const double p_low = t_upper_tail((mean - low) / se, n - 1);
  const double p_high = 1 - t_upper_tail((mean - high) / se, n - 1);
  r.p_value = std::max(p_low, p_high);
  return r;
}

}  // namespace normlab::stats
