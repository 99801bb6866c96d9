// E3d: time to a quality (the paper's section 4: Pre-LN without warmup reaches Post-LN-with-warmup's
// quality at epoch 9 instead of 15). Targets are fixed before the run and independent of every arm;
// a run that never reaches a target is censored at its length (Kaplan-Meier, stats/survival.h),
// never counted as "max steps".
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "xiong/e3_common.h"
#include "xiong/verdict.h"

namespace normlab::xiong {

TimeToEvent time_to(const RunOutcome& r, double target) {
  const int64_t s = r.first_step_at_or_below(target);
  const bool before_divergence = r.status != RunStatus::Diverged || r.diverged_step < 0 || s <= r.diverged_step;
  if (s > 0 && before_divergence) return {static_cast<double>(s), true};
  return {static_cast<double>(r.steps), false};
}

namespace {

std::vector<TimeToEvent> times_of(const Context& ctx, Task task, const TrainingResults& runs, const TrainPoint& arm,
                                  double target) {
  std::vector<TimeToEvent> out;
  for (const RunOutcome* r : runs.over_seeds(arm, seeds_of(ctx.grids, task, arm))) out.push_back(time_to(*r, target));
  return out;
}

std::string reached_text(const std::vector<TimeToEvent>& t) {
  const ReachedFraction f = reached_fraction(t);
  return fmt::format("{}/{} ({} [{}, {}])", f.reached, f.n, num(f.fraction, 2), num(f.low, 2), num(f.high, 2));
}

}  // namespace

Verdict time_verdict(const Context& ctx, Task task, const TrainingResults& runs, const TrainPoint& fast,
                     const TrainPoint& slow, double target, const std::string& id, std::string& table_md) {
  const std::vector<TimeToEvent> a = times_of(ctx, task, runs, fast, target), b = times_of(ctx, task, runs, slow, target);
  const LogRank test = log_rank(a, b);
  Verdict v{id, "Pre-LN without warmup reaches a fixed quality sooner than Post-LN with warmup",
            "section 4: Pre-LN's epoch 9 matches Post-LN's epoch 15 (ratio 0.6); BERT: about 40% sooner",
            fmt::format("Kaplan-Meier median steps to val loss {}, {} / {}", num(target, 3), arm_words(ctx, task, fast),
                        placement_label(slow.placement) + " warmup " + std::to_string(slow.warmup)),
            median_ratio(a, b), 0};
  v.estimate.p_value = test.p_value;
  v.decide_direction(1.0, Side::Below);
  v.task = task_name(task);
  v.schedule = arm_words(ctx, task, fast) + " vs " + arm_words(ctx, task, slow);
  v.note = fmt::format("ratio of Kaplan-Meier medians, percentile bootstrap over runs; runs that never reach the "
                       "target are censored at their length; log-rank p = {}; reached: {} vs {}",
                       num(test.p_value, 2), reached_text(a), reached_text(b));
  const auto unreached = [](const std::vector<TimeToEvent>& t) { return std::isinf(median_time(t).estimate); };
  if (unreached(b) && !unreached(a))
    v.note += "; fewer than half of Post-LN's runs reached the target, so its run length stands in for its "
              "median: the ratio is an upper bound";
  else if (unreached(a) && !unreached(b))
    v.note += "; fewer than half of Pre-LN's runs reached the target, so its run length stands in for its "
              "median: the ratio is a lower bound";
  else if (unreached(a))
    v.note += "; neither arm's median is reached: the ratio compares run lengths and cannot decide";
  for (const auto& [arm, times] : {std::pair{fast, a}, std::pair{slow, b}}) {
    const Interval m = median_time(times);
    table_md += fmt::format("| {} | {} | {} | {} | {} |\n", id, num(target, 3), arm_words(ctx, task, arm),
                            reached_text(times), interval_text(m, 4));
  }
  return v;
}

void append_time_to_quality(const Context& ctx, const TrainingResults& copy, Section& s) {
  const Grids& g = ctx.grids;
  if (g.copy_targets.empty()) return;
  std::string table = "| claim | target val loss | arm | reached (fraction [95% Wilson]) | KM median steps [95% CI] |\n"
                      "|---|---|---|---|---|\n";
  for (const std::string& lr : g.lrs) {
    const TrainPoint fast = g.section4_drop > 0 ? section4_arm(lr, g.section4_drop) : e3_arm("pre", lr, 1);
    const TrainPoint slow = e3_arm("post", lr, g.warmup_steps("long"));
    for (const double target : g.copy_targets) {
      Verdict v = time_verdict(ctx, Task::Copy, copy, fast, slow, target, fmt::format("E3d@{}.to{}", lr, target), table);
      s.verdicts.push_back(v);
    }
  }
  s.markdown += fmt::format("**Time to a quality (section 4).** Targets fixed before the run: validation loss {}. "
                            "Steps are the evaluation at which a run first reaches the target; a run that never "
                            "does is censored at its length. Kaplan-Meier medians with Brookmeyer-Crowley 95% "
                            "intervals; the verdict's interval is a bootstrap over runs of the ratio of medians, "
                            "and the log-rank p is in its note.\n\n",
                            fmt::format("{}", fmt::join(g.copy_targets, " and ")));
  s.markdown += table + "\n";
}

}  // namespace normlab::xiong
