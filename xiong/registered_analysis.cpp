#include "xiong/registered_analysis.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "xiong/registered_init.h"
#include "xiong/report.h"

namespace normlab::xiong {

namespace {

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

enum class Primary { SignFlip, Tost, LogRank };

// The registered primary test, from its text (a text the analysis does not know is an error: the
// registration cannot name a test that nothing computes).
Primary primary_of(const Registration& reg, const RegisteredClaim& c) {
  if (starts_with(c.primary_test, "exact sign-flip")) return Primary::SignFlip;
  if (starts_with(c.primary_test, "two one-sided")) return Primary::Tost;
  if (starts_with(c.primary_test, "log-rank")) return Primary::LogRank;
  fail("registration", "{} line {}: claim '{}': no analysis computes the primary test '{}'", reg.path, c.line, c.id,
       c.primary_test);
}

// The registered arms as points; each arm's runs over the claim's seeds.
std::vector<TrainPoint> arm_points(const Registration& reg, const RegisteredClaim& c) {
  std::vector<TrainPoint> arms;
  for (const std::string& text : c.points) arms.push_back(parse_point(text, reg.path + ": claim '" + c.id + "'"));
  return arms;
}

// Per seed: q(arm 0) - q(arm 1), or with four arms (q0 - q1) - (q2 - q3).
std::vector<double> paired_statistic(const std::vector<std::vector<double>>& q) {
  std::vector<double> d(q[0].size());
  for (size_t s = 0; s < d.size(); ++s)
    d[s] = q.size() == 4 ? (q[0][s] - q[1][s]) - (q[2][s] - q[3][s]) : q[0][s] - q[1][s];
  return d;
}

// Steps until the validation loss first reaches kTimeTarget; censored at the last evaluation, or
// at the divergence of a run that diverged first.
TimeToEvent time_to_target(const RunOutcome& r) {
  const int64_t reached = r.first_step_at_or_below(kTimeTarget);
  const bool diverged = r.status == RunStatus::Diverged && r.diverged_step >= 0;
  if (reached >= 0 && !(diverged && reached > r.diverged_step)) return {static_cast<double>(reached), true};
  const double last = r.val_curve.empty() ? 0.0 : r.val_curve.back().first;
  return {diverged ? std::min(last, static_cast<double>(r.diverged_step)) : last, false};
}

std::string arms_text(const RegisteredClaim& c, const std::vector<std::vector<double>>& q, int learned_count_digits) {
  std::string out;
  for (size_t a = 0; a < q.size(); ++a)
    out += fmt::format("{}{}: {}", a ? "; " : "", c.arms[a], mean_ci_text(q[a], learned_count_digits));
  return out;
}

void analyse_quality(const RegisteredClaim& c, Primary primary, const std::vector<std::vector<double>>& q,
                     double learned_below, ClaimAnalysis& out) {
  const std::vector<double> d = paired_statistic(q);
  const Interval t = mean_interval(d);
  out.estimate = t;
  out.estimate.method = q.size() == 4 ? "t over per-seed interactions" : "paired t";
  out.arms = arms_text(c, q, 3);
  if (primary == Primary::SignFlip) {
    out.primary_p = sign_flip_test(d).p_value;
    std::string fisher;
    if (q.size() == 2) {
      auto learned = [&](const std::vector<double>& v) {
        return static_cast<int>(std::count_if(v.begin(), v.end(), [&](double x) { return x < learned_below; }));
      };
      const int a = learned(q[0]), b = learned(q[1]), n = static_cast<int>(q[0].size());
      fisher = fmt::format("; learned (final quality < {}): {}/{} vs {}/{}, Fisher two-sided p = {}", num(learned_below, 3),
                           a, n, b, n, num(fisher_exact(a, n, b, n).p_two_sided, 3));
    }
    out.secondary = fmt::format("paired t 95%: {} (t p = {}){}", interval_text(t), num(t.p_value, 3), fisher);
  } else {
    out.primary_p = tost_paired(d, c.low, c.high).p_value;
    out.decision_interval = mean_interval_at(d, 0.90);
    out.secondary = fmt::format("90% t interval {} against [{}, {}]; exact sign-flip p of the difference = {}",
                                interval_text(out.decision_interval), num(c.low, 3), num(c.high, 3),
                                num(sign_flip_test(d).p_value, 3));
  }
}

void analyse_time(const Registration& reg, const RegisteredClaim& c, const std::vector<std::vector<TimeToEvent>>& t,
                  ClaimAnalysis& out) {
  NL_CHECK(c.statistic.find(num(kTimeTarget, 3)) != std::string::npos, "registration",
           "{} line {}: claim '{}': its statistic does not name the target {} that the analysis uses", reg.path,
           c.line, c.id, num(kTimeTarget, 3));
  const double tau = static_cast<double>(c.steps);
  out.primary_p = log_rank(t[0], t[1]).p_value;
  out.estimate = rmst_difference(t[1], t[0], tau);  // arm 2 - arm 1: Post-LN - Pre-LN
  const Interval ratio = median_ratio(t[0], t[1]);
  out.arms = fmt::format("{}: RMST {}, reached {}/{}; {}: RMST {}, reached {}/{}", c.arms[0],
                         interval_text(rmst(t[0], tau)), reached_fraction(t[0]).reached, t[0].size(), c.arms[1],
                         interval_text(rmst(t[1], tau)), reached_fraction(t[1]).reached, t[1].size());
  out.secondary = fmt::format("KM medians {} and {}, ratio (arm 1 / arm 2) {} (bootstrap)",
                              interval_text(median_time(t[0])), interval_text(median_time(t[1])), interval_text(ratio));
}

}  // namespace

double final_quality(const RunOutcome& run) {
  if (run.status == RunStatus::Diverged) return run.initial_loss;
  if (run.status != RunStatus::Completed) return NAN;
  const double from = 0.8 * static_cast<double>(run.steps);
  double sum = 0;
  int n = 0;
  for (const auto& [step, loss] : run.val_curve)
    if (step > from) sum += loss, ++n;
  return n > 0 ? sum / n : NAN;
}

std::string decide_registered(const RegisteredClaim& c, double p, const Interval& estimate,
                              const Interval& decision_interval, double alpha) {
  if (!std::isfinite(p) || !estimate.valid()) return "inconclusive";
  if (c.decision == "direction") {
    if (p >= alpha) return "inconclusive";
    const bool above = estimate.estimate > c.null_value;
    return above == (c.predicted == "above") ? "reproduced" : "contradicted";
  }
  if (p < alpha && decision_interval.low >= c.low && decision_interval.high <= c.high) return "reproduced";
  if (estimate.low > c.high || estimate.high < c.low) return "contradicted";
  return "inconclusive";
}

ClaimAnalysis analyse_claim(const Registration& reg, const RegisteredClaim& c, const TrainingResults& runs,
                            double learned_below, const RunStatistic& quality_of) {
  ClaimAnalysis out;
  out.claim = &c;
  const Primary primary = primary_of(reg, c);
  const std::vector<int> seeds = reg.seeds_of(c);
  std::vector<std::vector<double>> quality;
  std::vector<std::vector<TimeToEvent>> times;
  for (const TrainPoint& arm : arm_points(reg, c)) {
    quality.emplace_back();
    times.emplace_back();
    for (const int seed : seeds) {
      TrainPoint p = arm;
      p.seed = seed;
      ++out.runs_expected;
      const RunOutcome* r = runs.find(p);
      const bool has = r && (r->status == RunStatus::Completed || r->status == RunStatus::Diverged);
      out.runs_found += has;
      quality.back().push_back(has ? quality_of(*r) : NAN);
      if (has) times.back().push_back(time_to_target(*r));
    }
  }
  if (out.runs_found < out.runs_expected) return out;  // incomplete: nothing decided
  if (primary == Primary::LogRank) analyse_time(reg, c, times, out);
  else analyse_quality(c, primary, quality, learned_below, out);
  out.verdict = decide_registered(c, out.primary_p, out.estimate, out.decision_interval, reg.alpha);
  return out;
}

std::vector<ClaimAnalysis> analyse_registered(const Registration& reg, const ConfirmatoryRuns& runs,
                                              double copy_learned_below, double text_learned_below,
                                              const nlohmann::json* init_probes) {
  std::vector<ClaimAnalysis> out;
  for (const RegisteredClaim& c : reg.claims) {
    if (c.task == "init") {
      ClaimAnalysis pending;
      pending.claim = &c;
      pending.runs_expected = c.seeds;
      out.push_back(init_probes ? analyse_init_claim(reg, c, *init_probes) : pending);
      continue;
    }
    const bool text = c.task == "text";
    out.push_back(analyse_claim(reg, c, text ? runs.text : runs.copy, text ? text_learned_below : copy_learned_below));
  }
  // Holm over the whole family "paper": claims without a p (incomplete) count as 1.
  std::vector<double> family_p;
  for (const RegisteredClaim* c : reg.family("paper")) {
    auto it = std::find_if(out.begin(), out.end(), [&](const ClaimAnalysis& a) { return a.claim == c; });
    family_p.push_back(it != out.end() && std::isfinite(it->primary_p) ? it->primary_p : 1.0);
  }
  const std::vector<double> adjusted = holm_adjust(family_p);
  const std::vector<const RegisteredClaim*> family = reg.family("paper");
  for (ClaimAnalysis& a : out)
    for (size_t i = 0; i < family.size(); ++i)
      if (family[i] == a.claim && std::isfinite(a.primary_p)) a.holm_p = adjusted[i];
  return out;
}

std::string registered_tables(const std::vector<ClaimAnalysis>& results, double alpha) {
  std::string md;
  for (const std::string family : {"paper", "exploratory"}) {
    std::vector<std::vector<std::string>> rows;
    for (const ClaimAnalysis& a : results) {
      if (a.claim->family != family) continue;
      const bool holds = family == "paper" && a.verdict != "incomplete" && a.holm_p < alpha;
      rows.push_back({a.claim->id, a.claim->statement, a.verdict, interval_text(a.estimate), num(a.primary_p, 3),
                      family == "paper" ? num(a.holm_p, 3) + (holds ? " (holds family-wise)" : "") : "-",
                      fmt::format("{}/{}", a.runs_found, a.runs_expected)});
    }
    if (rows.empty()) continue;
    md += family == "paper" ? "### Confirmatory: the family \"paper\" (Holm over the whole family)\n\n"
                            : "### Exploratory (unadjusted)\n\n";
    md += md_table({"claim", "statement", "verdict", "estimate [95% CI]", "primary p", "Holm p", "runs"}, rows) + "\n";
  }
  md += "Per claim: the arms, the registered primary test and the secondary estimates.\n\n";
  for (const ClaimAnalysis& a : results) {
    md += fmt::format("- **{}** ({}): {}. Primary: {}, p = {}. {}", a.claim->id, a.verdict, a.claim->statistic,
                      a.claim->primary_test, num(a.primary_p, 3), a.arms.empty() ? "" : "Arms: " + a.arms + ". ");
    md += a.secondary.empty() ? "\n" : "Secondary: " + a.secondary + ".\n";
  }
  return md + "\n";
}

}  // namespace normlab::xiong
