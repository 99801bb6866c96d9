// Statistics of the Xiong reproduction: 95% confidence intervals over seeds and the three-way
// verdict decided on an interval.
//
// Intervals (every one at 95%, the method named in Interval::method):
//   mean_interval        Student t over the values (n - 1 degrees of freedom)
//   paired_difference    Student t over the per-seed differences a_i - b_i (same seed, same data)
//   log_ratio            Student t over log(a_i / b_i), reported as the ratio exp(.): a geometric mean
//   bootstrap            percentile bootstrap over seeds: `statistic` evaluated on resampled seed
//                        sets (with replacement), B resamples from a fixed generator (reproducible)
// Verdicts (Verdict::decide_*): the predicted effect's interval against "no effect":
//   direction    reproduced if the interval excludes `null` on the predicted side, contradicted if it
//                excludes it on the other side, otherwise inconclusive
//   equivalence  ("is flat", "is 1.5"): reproduced if the interval lies inside center ± margin,
//                contradicted if it lies wholly outside, otherwise inconclusive
#pragma once
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace normlab::xiong {

struct Interval {
  double estimate = NAN, low = NAN, high = NAN;
  int n = 0;           // seeds (or pairs) behind it
  std::string method;  // "t", "paired t", "log-ratio t", "bootstrap"
  bool valid() const { return n > 0 && std::isfinite(estimate); }
};

// Two-sided 97.5% quantile of Student's t with `df` degrees of freedom (df >= 1).
double t_quantile_975(int df);

// Non-finite values are dropped (and not counted in n). n == 1 gives an infinite interval.
Interval mean_interval(const std::vector<double>& values);
// Pairs where either value is non-finite are dropped.
Interval paired_difference(const std::vector<double>& a, const std::vector<double>& b);
// Pairs with a non-positive or non-finite value are dropped.
Interval log_ratio(const std::vector<double>& a, const std::vector<double>& b);
// statistic(indices) for indices resampled from 0 .. n - 1; non-finite results are skipped.
Interval bootstrap(int n, const std::function<double(const std::vector<int>&)>& statistic,
                   int resamples = 4000, uint64_t seed = 20200212);

// The median of the finite values (NaN when none).
double median_of(std::vector<double> values);

// "0.123 [0.101, 0.145]" (significant digits); "-" when invalid.
std::string interval_text(const Interval& i, int digits = 3);

enum class Side { Above, Below };  // the predicted side of the null value

// One claim of the paper (or of later work) and what the measurements say about it.
struct Verdict {
  std::string id;         // "E1a"
  std::string claim;      // the statement, short
  std::string paper;      // the paper's statement and number
  std::string quantity;   // what `estimate` measures ("Post-LN exponent of L", "final loss, none - long (nats)")
  Interval estimate;
  int64_t steps = 0;      // training steps behind it; 0 for init-time probes
  std::string criterion;  // the rule, with its numbers (filled by decide_*)
  std::string verdict = "inconclusive";  // reproduced | contradicted | inconclusive
  std::string note;       // context: the groups compared, their means

  void decide_direction(double null_value, Side predicted);
  void decide_equivalence(double center, double margin);  // within [center - margin, center + margin]
  void decide_within(double low, double high);             // the same rule for any range (ratios)
  nlohmann::json to_json() const;
};

}  // namespace normlab::xiong
