// E3 on real language: character-level language modelling on the built-in corpus (or any
// data.source file in text_config) with section 3.2's grid (placement x lr_max x warmup {none, short,
// long}, Adam (0.9, 0.98)) and section 4's Pre-LN arm. Validation loss in nats and bits per
// character; time to the quality Post-LN with warmup reaches at 60% of its run (the paper's
// epoch 9 vs 15), with the statistics of e3_time.cpp.
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/config.h"
#include "xiong/arms.h"
#include "xiong/e3_common.h"

namespace normlab::xiong {

namespace {

Verdict text_difference(const Context& ctx, std::string id, std::string claim, std::string paper, std::string quantity,
                        const TrainingResults& text, const TrainPoint& a, const TrainPoint& b, int64_t steps) {
  Verdict v{std::move(id), std::move(claim), std::move(paper), std::move(quantity),
            final_difference(ctx.grids, Task::Text, text, a, b), steps};
  v.task = "text";
  v.schedule = arm_words(ctx, Task::Text, a) + " vs " + arm_words(ctx, Task::Text, b);
  return v;
}

// The mean over seeds of Post-LN-with-warmup's validation loss at `fraction` of its run.
double target_loss(const Context& ctx, const TrainingResults& text, const TrainPoint& post_long) {
  std::vector<double> v = text.per_seed(post_long, ctx.grids.text_seeds, [&](const RunOutcome& r) {
    return r.val_at_fraction(ctx.grids.text_target_fraction);
  });
  return mean_interval(v).estimate;
}

}  // namespace

std::vector<TrainPoint> e3_text_arms(const Grids& g) {
  std::vector<TrainPoint> arms;
  if (g.text_config.empty()) return arms;
  for (const std::string p : {"post", "pre"})
    for (const WarmupLevel& w : g.warmups)
      for (const std::string& lr : g.text_lrs) arms.push_back(e3_arm(p, lr, w.steps));
  if (g.section4_drop > 0)
    for (const std::string& lr : g.text_lrs) arms.push_back(section4_arm(lr, g.section4_drop));
  return arms;
}

std::vector<TrainPoint> e3_text_points(const Grids& g) { return with_seeds(e3_text_arms(g), g.text_seeds); }

void append_e3_text(const Context& ctx, const TrainingResults& text, Section& s) {
  const Grids& g = ctx.grids;
  const RunConfig tc = load_config(ctx.config_path(g.text_config));
  const Baseline base = text_baseline(ctx);
  const int64_t none = g.warmup_steps("none"), lng = g.warmup_steps("long");
  std::string& md = s.markdown;
  md += fmt::format("### The text task\n\n{}: character-level language model on {} (d {}, L {}, context {}, batch {}, "
                    "sinusoidal positions), {} steps, seeds {{{}}}. Validation loss in nats per character (bits per "
                    "character = nats / ln 2 in the last column of the verdicts' notes). {}\n\n",
                    g.text_config, tc.data.source == "default" ? "the built-in corpus" : tc.data.source,
                    tc.model.d_model, tc.model.n_layers, tc.train.context, tc.train.batch_size, tc.train.steps,
                    fmt::join(g.text_seeds, ", "), base.describe());
  std::string times = "| claim | target val loss | arm | reached (fraction [95% Wilson]) | KM median steps [95% CI] |\n"
                      "|---|---|---|---|---|\n";
  for (const std::string& lr : g.text_lrs) {
    std::vector<TrainPoint> arms;
    for (const TrainPoint& a : e3_text_arms(g))
      if (a.lr == lr) arms.push_back(a);
    const TrainPoint post_long = e3_arm("post", lr, lng), pre_none = e3_arm("pre", lr, none);
    const double target = target_loss(ctx, text, post_long);
    md += fmt::format("**lr_max {}** (time-to-quality target: {} nats = {} bits per character, Post-LN long's mean "
                      "loss at {}% of its run)\n\n", lr, num(target, 4), num(target / std::log(2.0), 4),
                      g.text_target_fraction * 100);
    md += arm_table(ctx, Task::Text, text, arms, base, target) + "\n";
    md += curves_figure(ctx, Task::Text, text, arms, base, "e3_text_lr" + lr, "text task: validation loss, lr_max " + lr) + "\n";
    Verdict a = text_difference(ctx, "E3a.text@" + lr, "Text: Post-LN needs warmup (lr_max " + lr + ")",
                                "IWSLT14: BLEU 8.45 without warmup vs ~34 with", "final val loss, Post-LN none - long (nats/char)",
                                text, e3_arm("post", lr, none), post_long, tc.train.steps);
    a.decide_direction(0.0, Side::Above);
    s.verdicts.push_back(a);
    Verdict c = text_difference(ctx, "E3c.text@" + lr, "Text: Pre-LN without warmup reaches Post-LN-with-warmup's quality (lr_max " + lr + ")",
                                "section 4: the same BLEU", "final val loss, Pre-LN none - Post-LN long (nats/char)", text,
                                pre_none, post_long, tc.train.steps);
    c.decide_direction(g.equivalence_margin, Side::Below);
    c.note = fmt::format("non-inferiority margin {} nats, fixed before the run", g.equivalence_margin);
    s.verdicts.push_back(c);
    if (std::isfinite(target)) {
      const TrainPoint fast = g.section4_drop > 0 ? section4_arm(lr, g.section4_drop) : pre_none;
      s.verdicts.push_back(time_verdict(ctx, Task::Text, text, fast, post_long, target, "E3d.text@" + lr, times));
    }
  }
  md += "**Time to a quality on text.**\n\n" + times + "\n";
}

}  // namespace normlab::xiong
