// The registered analysis of protocol v4 (xiong/registration.toml): each training claim's
// statistic and primary test computed from its confirmatory runs (init-time claims:
// registered_init.h), the claim decided by its
// registered rule, and the family "paper" adjusted together by Holm at the registration's alpha.
//
// Final quality of a run: the mean validation loss over its evaluations after 80% of its steps
// (the last 20%); a diverged run (the suite's one rule, TrainingResults::apply_divergence_rule)
// counts as its loss at initialization, as in every table since v3.
// The statistic per primary test (the arms in the registration's order, paired by seed):
//   exact sign-flip    d = q(arm 1) - q(arm 2); with four arms the interaction
//                      d = (q1 - q2) - (q3 - q4); p = stats::sign_flip_test(d), estimate mean(d)
//                      with its paired t interval
//   TOST               d = q(arm 1) - q(arm 2); p = stats::tost_paired(d, low, high)
//   log-rank           steps until the validation loss first reaches the target (kTimeTarget),
//                      censored at the last evaluation (a diverged run: at its divergence); p =
//                      stats::log_rank, estimate RMST(arm 2) - RMST(arm 1) to the horizon
// Decisions (alpha from the registration):
//   direction    reproduced: p < alpha with the estimate on the predicted side of the null;
//                contradicted: p < alpha on the other side; otherwise inconclusive
//   equivalence  reproduced: TOST p < alpha (the 90% t interval inside [low, high]); contradicted:
//                the 95% t interval wholly outside [low, high]; otherwise inconclusive
// A claim with a registered run missing (not trained yet) or failed is "incomplete", not decided.
// Holm: over every claim of the family "paper"; a claim without a p-value counts as p = 1, so that
// the family keeps its registered size (conservative while claims are incomplete).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xiong/confirmatory.h"
#include "xiong/registration.h"
#include "xiong/training.h"
#include "xiong/verdict.h"

namespace normlab::xiong {

// The quality a log-rank claim's runs must reach; its statistic text must name it (checked).
inline constexpr double kTimeTarget = 0.1;

// A run's final quality (the mean validation loss over the evaluations in the last 20% of the
// run; a diverged run counts as its initial loss); NaN for a run without a result.
double final_quality(const RunOutcome& run);

struct ClaimAnalysis {
  const RegisteredClaim* claim = nullptr;
  int runs_expected = 0, runs_found = 0;
  Interval estimate;           // the registered statistic with its 95% interval
  Interval decision_interval;  // equivalence: the 90% t interval the decision used
  double primary_p = NAN;      // the registered primary test's p-value
  double holm_p = NAN;         // family "paper": Holm-adjusted over the whole family
  std::string verdict = "incomplete";  // reproduced | contradicted | inconclusive | incomplete
  std::string arms;            // each arm's final quality (or time to target) over seeds
  std::string secondary;       // the registered secondary estimates and tests
};


// A run's per-run statistic for the quality claims: final_quality (registered) or an alternative
// of the sensitivity audit (xiong/sensitivity_audit.h).
using RunStatistic = std::function<double(const RunOutcome&)>;

// One training claim on its runs (already read and put through the divergence rule), each run's
// quality measured by `quality` (the registered final_quality unless an audit asks otherwise).
ClaimAnalysis analyse_claim(const Registration& reg, const RegisteredClaim& claim, const TrainingResults& runs,
                            double learned_below, const RunStatistic& quality = final_quality);

// Every claim of the registration, in file order, with Holm over the family "paper": training
// claims from `runs`, init-time ones from `init_probes` (registered_init.h; null: incomplete).
std::vector<ClaimAnalysis> analyse_registered(const Registration& reg, const ConfirmatoryRuns& runs,
                                              double copy_learned_below, double text_learned_below,
                                              const nlohmann::json* init_probes = nullptr);

// The decision of one claim from its p-value and intervals (exposed for tests).
std::string decide_registered(const RegisteredClaim& claim, double p, const Interval& estimate,
                              const Interval& decision_interval, double alpha);

// Markdown: the family "paper" table (with Holm), then the exploratory claims apart.
std::string registered_tables(const std::vector<ClaimAnalysis>& results, double alpha);

}  // namespace normlab::xiong
