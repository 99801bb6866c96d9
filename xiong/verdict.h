// The three-way verdict of a claim of the Xiong reproduction, decided on an interval from the stats
// library (stats/stats.h); it carries the claim's prose and is written to verdicts.json.
// Verdict::decide_*: the predicted effect's interval against "no effect":
//   direction    reproduced if the interval excludes `null` on the predicted side, contradicted if it
//                excludes it on the other side, otherwise inconclusive
//   equivalence  ("is flat", "is 1.5"): reproduced if the interval lies inside center ± margin,
//                contradicted if it lies wholly outside, otherwise inconclusive
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "stats/exact_tests.h"
#include "stats/stats.h"
#include "stats/survival.h"

namespace normlab::xiong {

// The suite's code names the statistics unqualified (Interval, mean_interval, kaplan_meier, ...).
using namespace normlab::stats;

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
  std::string task;       // training claims: "copy" or "text"; "" for init-time probes
  std::string schedule;   // training claims: the compared arms' schedules, in words

  double null_value = NAN;  // decide_direction's null (the p-value tests estimate == null_value)
  void decide_direction(double null_value, Side predicted);
  // The two-sided p-value of estimate == null_value behind a direction verdict: from the t interval
  // (t, paired t; log-ratio t on the log scale), the log-rank p of a Kaplan-Meier comparison
  // (estimate.p_value), NaN for bootstrap intervals and equivalence claims. The 95% interval
  // excludes the null exactly when p < 0.05.
  double p_value() const;
  void decide_equivalence(double center, double margin);  // within [center - margin, center + margin]
  void decide_within(double low, double high);             // the same rule for any range (ratios)
  nlohmann::json to_json() const;
  // The verdict to_json wrote (missing fields keep their defaults; null numbers are NaN).
  static Verdict from_json(const nlohmann::json& j);
};

}  // namespace normlab::xiong
