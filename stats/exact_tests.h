// The tests v4 registers beside the t intervals (xiong/registration.toml), for outcomes that are
// bimodal (a run learns or it does not) and for claims of equality:
//
//   sign_flip_test   exact two-sided permutation test of paired differences: under "no effect"
//                    each difference is as likely positive as negative, so every one of the 2^n
//                    sign patterns s is equally likely; with T(d) = |mean(d)|,
//                      p = #{s : T(s * d) >= T(d)} / 2^n
//                    (ties within 1e-12 max|d| count as >=). Its smallest p is 2 / 2^n: 0.0625 at
//                    n = 5, 0.00195 at n = 10.
//   fisher_exact     Fisher's exact test of a 2x2 table (a of n_a learned against b of n_b): given
//                    the margins, X = the count in the first row is hypergeometric,
//                      P(X = x) = C(K, x) C(N - K, n_a - x) / C(N, n_a),  K = a + b, N = n_a + n_b;
//                    two-sided p = sum of P(x) over the x with P(x) <= P(a) (1 + 1e-7) (R's and
//                    SciPy's rule); greater = P(X >= a), less = P(X <= a).
//   tost_paired      two one-sided t tests of |mean difference| within [low, high] (Schuirmann):
//                      p_low = P(T_{n-1} >= (mean - low) / se),  p_high = P(T_{n-1} <= (mean - high) / se)
//                    p = max(p_low, p_high); p < alpha exactly when the (1 - 2 alpha) t interval
//                    lies inside [low, high].
// Errors start with the function's name.
#pragma once
#include <cmath>
#include <string>
#include <vector>

namespace normlab::stats {

struct TestResult {
  double estimate = NAN;  // the mean difference (sign flip, TOST)
  double p_value = NAN;   // two-sided (TOST: the larger one-sided p)
  int n = 0;              // differences (or runs) behind it
  std::string method;
};

// Non-finite differences are dropped; at most 24 finite ones (2^24 patterns). NaN p for n = 0.
TestResult sign_flip_test(const std::vector<double>& differences);

struct FisherResult {
  double p_two_sided = NAN, p_greater = NAN, p_less = NAN;
};
// 0 <= a <= n_a, 0 <= b <= n_b, n_a + n_b >= 1.
FisherResult fisher_exact(int a, int n_a, int b, int n_b);

// low < high; NaN p for fewer than 2 finite differences.
TestResult tost_paired(const std::vector<double>& differences, double low, double high);

}  // namespace normlab::stats
