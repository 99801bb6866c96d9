// E10c (exploratory, issue 37): section 4's BERT claim in a bidirectional encoder trained as a
// masked language model (grids.e10_mlm_config): Pre-LN without warmup reaches Post-LN-with-warmup's
// final validation loss in fewer steps (the paper: 500k against 700k updates). Paired by seed: each
// seed's target is its Post-LN-with-warmup run's final validation loss (xiong/e10_training.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/config.h"
#include "xiong/arms.h"
#include "xiong/e10_training.h"
#include "xiong/e3_common.h"
#include "xiong/experiments.h"
#include "xiong/outcomes.h"

namespace normlab::xiong {

namespace {

std::vector<TrainPoint> mlm_arms(const Grids& g) {
  return {e10_arm(g, "post", g.e10_mlm_lr, true, 1), e10_arm(g, "pre", g.e10_mlm_lr, false, 1)};
}

std::vector<Curve> curves(const TrainingResults& runs, const TrainPoint& arm, const std::vector<int>& seeds) {
  std::vector<Curve> out;
  TrainPoint p = arm;
  for (const int seed : seeds) {
    p.seed = seed;
    const RunOutcome* r = runs.find(p);
    const bool usable = r && r->status == RunStatus::Completed;  // a diverged run reaches nothing
    out.push_back(usable ? r->val_curve : Curve{});
  }
  return out;
}

std::string step_text(double v) { return std::isfinite(v) ? fmt::format("{}", static_cast<int64_t>(v)) : "never"; }

std::string seed_table(const Speedup& sp, const std::vector<int>& seeds) {
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < seeds.size(); ++i)
    rows.push_back({std::to_string(seeds[i]), num(sp.targets[i], 4), step_text(sp.post_steps[i]),
                    step_text(sp.pre_steps[i]), num(sp.ratios[i], 3)});
  return md_table({"seed", "target: Post-LN-with-warmup's final val loss", "Post-LN first at or below it (step)",
                   "Pre-LN first at or below it (step)", "ratio Pre / Post"}, rows);
}

// The secondary reading: each Pre-LN seed against the Post-LN arm's median final loss.
std::string median_target_text(const TrainingResults& runs, const std::vector<TrainPoint>& arms,
                               const std::vector<int>& seeds, int64_t steps) {
  const double median = median_of(runs.per_seed(arms[0], seeds, final_capped));
  std::vector<std::string> reached;
  for (const Curve& c : curves(runs, arms[1], seeds)) {
    const int64_t t = first_step_at_or_below(c, median);
    reached.push_back(t > 0 ? std::to_string(t) : "never");
  }
  return fmt::format("Against the Post-LN arm's median final validation loss, {}, the Pre-LN seeds first reach it at "
                     "steps {} of {}.\n\n", num(median, 4), fmt::join(reached, ", "), steps);
}

}  // namespace

std::vector<TrainPoint> e10c_points(const Grids& g) { return with_seeds(mlm_arms(g), g.e10_mlm_seeds); }

void append_e10c(const Context& ctx, const TrainingResults& runs, Section& s) {
  const Grids& g = ctx.grids;
  const std::string path = ctx.config_path(g.e10_mlm_config);
  const std::vector<TrainPoint> arms = mlm_arms(g);
  const RunConfig c = point_config(path, arms.front());  // the shared settings
  const Baseline base = copy_baseline(path);
  const int64_t steps = c.train.steps;
  s.markdown += fmt::format(
      "### E10c: section 4's BERT claim in a masked-LM encoder\n\n"
      "Encoder ({}: {} layers, d {}, {} heads, FFN {}, bidirectional, BERT's masking of {} of the positions) on "
      "the copy task's sequences ({} random symbols from {}, a separator, the same again: a masked symbol can be "
      "read from its twin, so the task needs attention across the sequence; the pilot on the character corpus "
      "stayed at the unigram level for both arms). {} steps of batch {} x {}, Adam (0.9, 0.98) at lr_max {} for "
      "both arms: Post-LN "
      "with {} warmup steps, Pre-LN without, the same inverse-square-root decay after t = {}. Seeds {{{}}} "
      "(pilot seed 100 excluded). Statistic: per seed, the first evaluated step (every {}) at which each arm's "
      "validation loss is at or below that seed's Post-LN-with-warmup final validation loss; the ratio Pre / "
      "Post, geometric mean [95% log-ratio t interval]. Runs: {}, {:.1f} CPU-minutes.\n\n",
      g.e10_mlm_config, c.model.n_layers, c.model.d_model, c.model.n_heads, c.model.d_ff, c.data.mask_prob,
      c.data.copy_length, c.data.copy_vocab, steps,
      c.train.batch_size, c.train.context, g.e10_mlm_lr, g.e10_warmup, g.e10_warmup, fmt::join(g.e10_mlm_seeds, ", "),
      c.log.eval_every, runs.size(), runs.total_wall_s() / 60.0);
  std::vector<std::vector<std::string>> rows;
  for (const TrainPoint& a : arms) {
    const ArmSummary sum = summarize(runs, a, g.e10_mlm_seeds, base);
    rows.push_back({e10_arm_label(a), a.lr, schedule_words(point_config(path, a).schedule), mean_ci_text(sum.capped, 4),
                    std::to_string(sum.diverged)});
  }
  s.markdown += md_table({"arm", "lr_max", "schedule (t = update)", "final val loss (masked LM)", "diverged"}, rows) + "\n";
  const Speedup sp = speedup(curves(runs, arms[0], g.e10_mlm_seeds),
                             runs.per_seed(arms[0], g.e10_mlm_seeds, final_capped),
                             curves(runs, arms[1], g.e10_mlm_seeds), steps);
  s.markdown += seed_table(sp, g.e10_mlm_seeds) + "\n" + median_target_text(runs, arms, g.e10_mlm_seeds, steps);
  s.markdown += e10_curves_figure(ctx, runs, arms, g.e10_mlm_seeds, base, "e10c_mlm",
                                  "encoder, masked LM: validation loss, Adam lr_max " + g.e10_mlm_lr) + "\n";
  Verdict v = speedup_verdict(sp, steps);
  v.id = "E10c";
  v.claim = "Encoder, masked LM: Pre-LN without warmup reaches Post-LN-with-warmup's validation loss in fewer steps";
  v.paper = "section 4, BERT: Pre-LN reaches validation loss 1.69 at 500k updates, Post-LN at 700k (40% faster)";
  v.quantity = "steps to each seed's Post-LN-with-warmup final val loss, Pre-LN none / Post-LN warmup";
  v.task = "mlm";
  v.schedule = fmt::format("{}: {} vs {}: {}, lr_max {}", e10_arm_label(arms[1]),
                           schedule_words(point_config(path, arms[1]).schedule), e10_arm_label(arms[0]),
                           schedule_words(point_config(path, arms[0]).schedule), g.e10_mlm_lr);
  s.verdicts.push_back(v);
}

}  // namespace normlab::xiong
