#include "xiong/e10_training.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "xiong/report.h"

namespace normlab::xiong {

namespace {

bool any_learned(const std::vector<double>& a, const std::vector<double>& b, double learn_below) {
  auto learned = [learn_below](double v) { return std::isfinite(v) && v <= learn_below; };
  return std::any_of(a.begin(), a.end(), learned) || std::any_of(b.begin(), b.end(), learned);
}

// Neither arm learned: a difference between two runs that stayed near the baseline says nothing
// about warmup.
void unless_learned(Verdict& v, const std::vector<double>& a, const std::vector<double>& b, double learn_below) {
  if (any_learned(a, b, learn_below)) return;
  v.verdict = "inconclusive";
  v.note = fmt::format("neither arm learned (no final loss <= {} nats)", num(learn_below, 3));
}

}  // namespace

Verdict needs_warmup_verdict(const std::vector<double>& none, const std::vector<double>& warm, double learn_below) {
  NL_CHECK(none.size() == warm.size(), "reproduce", "needs_warmup_verdict pairs seeds: {} and {} values", none.size(),
           warm.size());
  Verdict v;
  v.estimate = paired_difference(none, warm);
  v.decide_direction(0.0, Side::Above);
  unless_learned(v, none, warm, learn_below);
  return v;
}

Verdict matches_verdict(const std::vector<double>& pre_none, const std::vector<double>& post_warm, double margin,
                        double learn_below) {
  NL_CHECK(pre_none.size() == post_warm.size(), "reproduce", "matches_verdict pairs seeds: {} and {} values",
           pre_none.size(), post_warm.size());
  NL_CHECK(margin > 0, "reproduce", "matches_verdict: the margin must be > 0, got {}", margin);
  Verdict v;
  v.estimate = paired_difference(pre_none, post_warm);
  v.decide_direction(margin, Side::Below);
  v.note = fmt::format("non-inferiority margin {} nats, fixed before the runs", num(margin, 3));
  unless_learned(v, pre_none, post_warm, learn_below);
  return v;
}

int64_t first_step_at_or_below(const Curve& curve, double target) {
  for (const auto& [step, loss] : curve)
    if (std::isfinite(loss) && loss <= target) return static_cast<int64_t>(step);
  return -1;
}

Speedup speedup(const std::vector<Curve>& post_warm, const std::vector<double>& post_final,
                const std::vector<Curve>& pre_none, int64_t run_length) {
  NL_CHECK(post_warm.size() == post_final.size() && post_warm.size() == pre_none.size(), "reproduce",
           "speedup pairs seeds: {} Post-LN curves, {} final losses, {} Pre-LN curves", post_warm.size(),
           post_final.size(), pre_none.size());
  NL_CHECK(run_length > 0, "reproduce", "speedup: run_length must be > 0, got {}", run_length);
  Speedup s;
  std::vector<double> pre_for_ratio;
  for (size_t i = 0; i < post_warm.size(); ++i) {
    const double target = post_final[i];
    const int64_t post = std::isfinite(target) ? first_step_at_or_below(post_warm[i], target) : -1;
    const int64_t pre = std::isfinite(target) ? first_step_at_or_below(pre_none[i], target) : -1;
    s.targets.push_back(target);
    s.post_steps.push_back(post > 0 ? static_cast<double>(post) : NAN);
    s.pre_steps.push_back(pre > 0 ? static_cast<double>(pre) : NAN);
    const bool censored = std::isfinite(target) && post > 0 && pre < 0;
    s.censored += censored;
    pre_for_ratio.push_back(censored ? static_cast<double>(run_length) : s.pre_steps.back());
    s.ratios.push_back(pre_for_ratio.back() / s.post_steps.back());
  }
  s.ratio = log_ratio(pre_for_ratio, s.post_steps);
  return s;
}

Verdict speedup_verdict(const Speedup& s, int64_t steps) {
  Verdict v;
  v.estimate = s.ratio;
  v.steps = steps;
  v.decide_direction(1.0, Side::Below);
  const bool paper_inside = s.ratio.valid() && s.ratio.low <= kPaperBertRatio && kPaperBertRatio <= s.ratio.high;
  v.note = fmt::format("the paper's ratio {} (500k / 700k updates) is {} the interval", num(kPaperBertRatio, 2),
                       paper_inside ? "inside" : "outside");
  if (s.censored > 0) {
    v.note += fmt::format("; {} Pre-LN seed(s) never reached the target (ratio entered as a lower bound)", s.censored);
    if (v.verdict == "reproduced") v.verdict = "inconclusive";
  }
  return v;
}

}  // namespace normlab::xiong
