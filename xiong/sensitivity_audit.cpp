#include "xiong/sensitivity_audit.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "xiong/registered_analysis.h"
#include "xiong/report.h"

namespace normlab::xiong {

namespace {

// The validation losses evaluated after `from` of the run's steps.
std::vector<double> losses_after(const RunOutcome& run, double from) {
  std::vector<double> out;
  for (const auto& [step, loss] : run.val_curve)
    if (step > from * static_cast<double>(run.steps)) out.push_back(loss);
  return out;
}

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (const double x : v) sum += x;
  return v.empty() ? NAN : sum / static_cast<double>(v.size());
}

std::string decided(const ClaimAnalysis& a) {
  return fmt::format("{}, {} (p {})", a.verdict, interval_text(a.estimate), num(a.primary_p, 3));
}

// A quality claim decided under the three per-run statistics.
struct ThreeWays {
  const RegisteredClaim* claim;
  ClaimAnalysis registered, last, median;
  bool disagree() const { return last.verdict != registered.verdict || median.verdict != registered.verdict; }
};

std::vector<ThreeWays> three_ways(const Registration& reg, const ConfirmatoryRuns& runs, double copy_learned_below) {
  std::vector<ThreeWays> out;
  for (const RegisteredClaim& c : reg.claims) {
    if (c.task == "init" || c.primary_test.rfind("log-rank", 0) == 0) continue;  // init probes; times to a target
    const TrainingResults& task_runs = c.task == "text" ? runs.text : runs.copy;
    const double learned = c.task == "text" ? NAN : copy_learned_below;
    out.push_back({&c, analyse_claim(reg, c, task_runs, learned), analyse_claim(reg, c, task_runs, learned, last_evaluation),
                   analyse_claim(reg, c, task_runs, learned, window_median)});
  }
  return out;
}

std::string verdict_table(const std::vector<ThreeWays>& claims, int& disagreements) {
  std::vector<std::vector<std::string>> rows;
  for (const ThreeWays& t : claims) {
    disagreements += t.disagree();
    rows.push_back({t.claim->id, decided(t.registered), decided(t.last), decided(t.median),
                    t.disagree() ? "**disagree**" : ""});
  }
  return md_table({"claim", "registered: window mean", "last evaluation", "window median", "flag"}, rows);
}

std::string convergence_table(const Registration& reg, const ConfirmatoryRuns& runs, int& arms_below_all) {
  std::vector<std::vector<std::string>> rows;
  std::set<std::string> seen;
  for (const RegisteredClaim& c : reg.claims) {
    if (c.task == "init") continue;
    const TrainingResults& task_runs = c.task == "text" ? runs.text : runs.copy;
    for (size_t a = 0; a < c.points.size(); ++a) {
      TrainPoint arm = parse_point(c.points[a], reg.path + ": claim '" + c.id + "'");
      if (!seen.insert(c.task + " " + arm.name()).second) continue;
      int n = 0, passed = 0;
      for (const int seed : reg.seeds_of(c)) {
        arm.seed = seed;
        const RunOutcome* r = task_runs.find(arm);
        if (!r) continue;
        ++n;
        passed += converged(*r, c.task);
      }
      arms_below_all += passed < n;
      rows.push_back({c.id, c.arms[a], c.task, std::to_string(n), std::to_string(passed),
                      n > 0 ? fmt::format("{:.0f}%", 100.0 * passed / n) : "-"});
    }
  }
  return md_table({"first claim", "arm", "task", "runs", "converged", "share"}, rows);
}

}  // namespace

double last_evaluation(const RunOutcome& run) {
  if (run.status == RunStatus::Diverged) return run.initial_loss;
  if (run.status != RunStatus::Completed || run.val_curve.empty()) return NAN;
  return run.val_curve.back().second;
}

double window_median(const RunOutcome& run) {
  if (run.status == RunStatus::Diverged) return run.initial_loss;
  if (run.status != RunStatus::Completed) return NAN;
  std::vector<double> w = losses_after(run, 0.8);
  if (w.empty()) return NAN;
  std::sort(w.begin(), w.end());
  const size_t m = w.size() / 2;
  return w.size() % 2 ? w[m] : 0.5 * (w[m - 1] + w[m]);
}

bool converged(const RunOutcome& run, const std::string& task) {
  if (run.status != RunStatus::Completed) return false;
  const double last = mean_of(losses_after(run, 0.8));
  std::vector<double> before;
  for (const auto& [step, loss] : run.val_curve)
    if (step > 0.6 * static_cast<double>(run.steps) && step <= 0.8 * static_cast<double>(run.steps)) before.push_back(loss);
  const double previous = mean_of(before);
  if (!std::isfinite(last) || !std::isfinite(previous)) return false;
  return task == "text" ? (previous - last) / previous < 0.02 : std::abs(last - previous) < 0.02;
}

std::map<std::string, std::string> audit_notes(const Registration& reg, const ConfirmatoryRuns& runs,
                                               double copy_learned_below) {
  std::map<std::string, std::string> notes;
  for (const ThreeWays& t : three_ways(reg, runs, copy_learned_below)) {
    std::vector<std::string> parts;
    if (t.last.verdict != t.registered.verdict) parts.push_back("last evaluation: " + t.last.verdict);
    if (t.median.verdict != t.registered.verdict) parts.push_back("window median: " + t.median.verdict);
    if (!parts.empty()) notes[t.claim->id] = fmt::format("{}", fmt::join(parts, "; "));
  }
  return notes;
}

std::string sensitivity_audit(const Registration& reg, const ConfirmatoryRuns& runs, double copy_learned_below) {
  int disagreements = 0, arms_below_all = 0;
  const std::string verdicts = verdict_table(three_ways(reg, runs, copy_learned_below), disagreements);
  const std::string convergence = convergence_table(reg, runs, arms_below_all);
  return fmt::format(
      "## Sensitivity and convergence audit (post hoc)\n\n"
      "Not registered: each quality claim decided again by its registered primary test and rule, with each run's "
      "statistic replaced by its last evaluation or by the median of the registered window (the evaluations after "
      "80% of the run). {}\n\n{}\n"
      "The registration's convergence rule, applied to every run: copy task, the mean validation loss of the last "
      "20% of the run within 0.02 nats of the mean of the 20% before it; text task, less than 2% lower. A run that "
      "diverged does not pass. {}\n\n{}\n",
      disagreements == 0 ? std::string("Every verdict is the same under the three statistics.")
                         : fmt::format("{} claim{} change verdict under another statistic (flagged).", disagreements,
                                       disagreements == 1 ? "" : "s"),
      verdicts,
      arms_below_all == 0 ? std::string("Every run passes.")
                          : fmt::format("In {} arm{} not every run passes.", arms_below_all, arms_below_all == 1 ? "" : "s"),
      convergence);
}

}  // namespace normlab::xiong
