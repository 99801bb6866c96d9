#include "xiong/post_hoc_effects.h"

#include <cmath>

#include <fmt/format.h>

#include "stats/exact_tests.h"
#include "xiong/report.h"

namespace normlab::xiong {

namespace {

struct PostHocSesoi {
  const char* claim_prefix;  // the first row whose prefix the claim id starts with applies
  double value;              // on the statistic's scale (log_scale: ln of a ratio)
  bool log_scale;
  const char* text;          // the smallest effect as printed
  const char* reason;
};

const PostHocSesoi kPostHocSesois[] = {
    {"E1", 0.1, false, "0.1 in b", "E1a's registered margin: |b| <= 0.1 moves the gradient by at most 1.23x over L = 6..48"},
    {"E2", std::log(1.25), true, "ratio 1.25", "25% from the first to the last layer, the most that \"almost the same\" allows"},
    {"E3d", 400, false, "400 steps", "10% of the 4000-step horizon"},
    {"E3.text", 0.05, false, "0.05 nats/char", "5% in per-character perplexity"},
    {"E3", 0.1, false, "0.1 nats", "per copied token, the right token's geometric-mean probability e^-0.1 = 0.905 against 1; "
                                   "a run that copies ends near 0.02"},
};

const PostHocSesoi* sesoi_of(const std::string& id) {
  for (const PostHocSesoi& s : kPostHocSesois)
    if (id.rfind(s.claim_prefix, 0) == 0) return &s;
  return nullptr;
}

// The arms' outcomes of a copy-task quality claim: "learned k/n" per arm, "" otherwise.
std::string learned_counts(const Registration& reg, const RegisteredClaim& c, const ConfirmatoryRuns& runs,
                           double learned_below) {
  if (c.task != "copy" || c.primary_test.rfind("log-rank", 0) == 0) return "";
  std::vector<std::string> parts;
  for (size_t a = 0; a < c.points.size(); ++a) {
    TrainPoint arm = parse_point(c.points[a], reg.path + ": claim '" + c.id + "'");
    int n = 0, learned = 0;
    for (const int seed : reg.seeds_of(c)) {
      arm.seed = seed;
      const RunOutcome* r = runs.copy.find(arm);
      if (!r) continue;
      ++n;
      learned += final_quality(*r) <= learned_below;
    }
    parts.push_back(fmt::format("{}: {}/{}", c.arms[a], learned, n));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

// Equivalence claims: the sign-flip test of the paired differences (first arm - second) against 0.
std::string superiority(const Registration& reg, const RegisteredClaim& c, const ConfirmatoryRuns& runs) {
  if (c.decision != "equivalence" || c.task == "init" || c.points.size() != 2) return "";
  TrainPoint a = parse_point(c.points[0], reg.path), b = parse_point(c.points[1], reg.path);
  const TrainingResults& task_runs = c.task == "text" ? runs.text : runs.copy;
  std::vector<double> differences;
  double sum_a = 0, sum_b = 0;
  for (const int seed : reg.seeds_of(c)) {
    a.seed = b.seed = seed;
    const RunOutcome *ra = task_runs.find(a), *rb = task_runs.find(b);
    if (!ra || !rb) continue;
    differences.push_back(final_quality(*ra) - final_quality(*rb));
    sum_a += final_quality(*ra), sum_b += final_quality(*rb);
  }
  if (differences.empty()) return "";
  const stats::TestResult t = stats::sign_flip_test(differences);
  return fmt::format("{} / {}: arm means {} vs {} (ratio {}), sign-flip p {}", c.arms[0], c.arms[1],
                     num(sum_a / differences.size()), num(sum_b / differences.size()), num(sum_a / sum_b, 2),
                     num(t.p_value, 3));
}

}  // namespace

std::string effect_against(const Interval& estimate, double sesoi, bool log_scale) {
  const double low = log_scale ? std::log(estimate.low) : estimate.low;
  const double high = log_scale ? std::log(estimate.high) : estimate.high;
  if (!std::isfinite(low) || !std::isfinite(high)) return "-";
  if (low > sesoi || high < -sesoi) return "beyond";
  if (low > -sesoi && high < sesoi) return "within";
  return "straddles";
}

std::string post_hoc_effects(const Registration& reg, const ConfirmatoryRuns& runs,
                             const std::vector<ClaimAnalysis>& analysis, double copy_learned_below) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> reasons;
  for (const ClaimAnalysis& a : analysis) {
    const PostHocSesoi* s = sesoi_of(a.claim->id);
    if (!s) continue;
    const Interval& e = a.estimate;
    rows.push_back({a.claim->id, a.verdict, fmt::format("{} [{}, {}]", num(e.estimate), num(e.low), num(e.high)),
                    s->text, effect_against(e, s->value, s->log_scale),
                    learned_counts(reg, *a.claim, runs, copy_learned_below), superiority(reg, *a.claim, runs)});
  }
  for (const PostHocSesoi& s : kPostHocSesois)
    reasons.push_back(fmt::format("- {} ({}*): {}", s.text, s.claim_prefix, s.reason));
  return fmt::format(
      "## Effects against smallest effects of interest (post hoc)\n\n"
      "v4 registered directions, not sizes. Each registered verdict stands; beside it, the 95% interval of the "
      "registered estimate against a smallest effect of interest chosen after the data (labelled post hoc): "
      "\"beyond\" when the interval lies wholly beyond plus or minus it, \"within\" when wholly inside, "
      "\"straddles\" otherwise (ratios compared on the log scale). Copy-task claims show how many runs of each "
      "arm learned (final quality at most {} nats, half of chance); equivalence claims show the superiority test "
      "of their paired differences.\n\n{}\nThe smallest effects and why:\n\n{}\n\n",
      num(copy_learned_below), md_table({"claim", "registered verdict", "estimate [95%]", "smallest effect (post hoc)",
                                         "the interval is", "learned", "superiority"}, rows),
      fmt::join(reasons, "\n"));
}

}  // namespace normlab::xiong
