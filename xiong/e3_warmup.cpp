// E3: the warmup study (the paper's Figure 2 and section 3.2) on the synthetic copy task: Post-LN
// and Pre-LN x lr_max x warmup x seeds with Adam (0.9, 0.98), in the primary design (every arm on
// one schedule after the longest warmup, so the arms differ only in warmup), fairseq's literal
// schedule as a second design, vanilla SGD and RAdam arms. Every verdict compares arms seed by seed
// (same initialization, same data stream). Time to a quality (section 4): e3_time.cpp; the text
// task: e3_text.cpp.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/config.h"
#include "xiong/e3_common.h"
#include "xiong/experiments.h"
#include "xiong/outcomes.h"

namespace normlab::xiong {

Verdict difference_verdict(const Context& ctx, std::string id, std::string claim, std::string paper,
                           std::string quantity, const TrainingResults& runs, const TrainPoint& a,
                           const TrainPoint& b, int64_t steps, double null_value, Side side) {
  Verdict v{std::move(id), std::move(claim), std::move(paper), std::move(quantity),
            final_difference(ctx.grids, Task::Copy, runs, a, b), steps};
  v.decide_direction(null_value, side);
  v.task = "copy";
  v.schedule = arm_words(ctx, Task::Copy, a) + " vs " + arm_words(ctx, Task::Copy, b);
  // Neither arm learned: a difference between two runs at chance says nothing about warmup.
  const Baseline base = copy_baseline(ctx);
  const ArmSummary sa = summarize(runs, a, seeds_of(ctx.grids, Task::Copy, a), base),
                   sb = summarize(runs, b, seeds_of(ctx.grids, Task::Copy, b), base);
  if (sa.n > 0 && sb.n > 0 && sa.learned == 0 && sb.learned == 0) {
    v.verdict = "inconclusive";
    v.note = fmt::format("neither arm learned (no run below {} nats in {} steps): the difference is between two "
                         "runs that stayed near {}, so it cannot show what warmup does",
                         num(base.learn_below, 3), steps, base.name);
  }
  return v;
}

namespace {

void append_warmup_verdicts(const Context& ctx, const TrainingResults& copy, int64_t steps, Section& s) {
  const Grids& g = ctx.grids;
  const int64_t none = g.warmup_steps("none"), shrt = g.warmup_steps("short"), lng = g.warmup_steps("long");
  const std::string paper = "IWSLT14: Post-LN without warmup BLEU 8.45 vs ~34 with 4000 warmup steps";
  for (const std::string& lr : g.lrs)
    s.verdicts.push_back(difference_verdict(ctx, "E3a@" + lr, "Post-LN needs warmup (Adam, lr_max " + lr + ")", paper,
                                            "final val loss, Post-LN none - long, same schedule after the warmup (nats)",
                                            copy, e3_arm("post", lr, none), e3_arm("post", lr, lng), steps, 0.0,
                                            Side::Above));
  if (g.literal_design)
    for (const std::string& lr : g.lrs)
      s.verdicts.push_back(difference_verdict(
          ctx, "E3a'@" + lr, "Post-LN needs warmup, fairseq's literal schedule (lr_max " + lr + ")", paper,
          "final val loss, Post-LN inverse_sqrt with T_warmup = 1 - Post-LN long (nats)", copy,
          literal_arm("post", lr), e3_arm("post", lr, lng), steps, 0.0, Side::Above));
  if (g.lrs.size() >= 2) {
    const std::string lo = g.lrs.front(), hi = g.lrs.back();
    auto penalty = [&](const std::string& lr) {
      const auto a = copy.per_seed(e3_arm("post", lr, shrt), g.seeds, final_capped);
      const auto b = copy.per_seed(e3_arm("post", lr, lng), g.seeds, final_capped);
      std::vector<double> d;
      for (size_t i = 0; i < a.size(); ++i) d.push_back(a[i] - b[i]);
      return d;
    };
    Verdict v{"E3b", "Post-LN: a short warmup fails at the larger lr_max (warmup x lr interaction)",
              "500 warmup steps: BLEU 31.16 at lr 5e-4, 2.77 at 1e-3",
              fmt::format("(short - long) at lr {} minus (short - long) at lr {} (nats)", hi, lo),
              paired_difference(penalty(hi), penalty(lo)), steps};
    v.decide_direction(0.0, Side::Above);
    v.task = "copy";
    v.schedule = "primary design: warmup " + std::to_string(shrt) + " vs " + std::to_string(lng) + ", same decay after";
    s.verdicts.push_back(v);
  }
  for (const std::string& lr : g.lrs) {
    Verdict v = difference_verdict(
        ctx, "E3c@" + lr, "Pre-LN without warmup reaches Post-LN-with-warmup's quality (lr_max " + lr + ")",
        "section 4: Pre-LN without warmup matches Post-LN with warmup (BLEU)",
        "final val loss, Pre-LN none - Post-LN long (nats)", copy, e3_arm("pre", lr, none), e3_arm("post", lr, lng),
        steps, g.equivalence_margin, Side::Below);
    v.note = fmt::format("non-inferiority margin {} nats, fixed before the run", g.equivalence_margin);
    s.verdicts.push_back(v);
  }
}

void append_optimizer_verdicts(const Context& ctx, const TrainingResults& copy, int64_t steps, Section& s) {
  const Grids& g = ctx.grids;
  const int64_t lng = g.warmup_steps("long");
  for (const std::string& lr : g.lrs)
    s.verdicts.push_back(difference_verdict(
        ctx, "E3f@" + lr, "RAdam rescues Post-LN without warmup (lr_max " + lr + ")",
        "section 3.2 / Liu et al. 2020: RAdam trains Post-LN without warmup",
        "final val loss, Post-LN Adam none - RAdam none (nats)", copy, e3_arm("post", lr, 1),
        e3_arm("post", lr, 1, "radam"), steps, 0.0, Side::Above));
  if (g.pre_radam) {
    Verdict v = difference_verdict(ctx, "E3g", "RAdam changes little for Pre-LN without warmup",
                                   "RAdam: little change for Pre-LN",
                                   "final val loss, Pre-LN RAdam none - Adam none (nats), lr " + g.slice_lr, copy,
                                   e3_arm("pre", g.slice_lr, 1, "radam"), e3_arm("pre", g.slice_lr, 1), steps, 0.0,
                                   Side::Above);
    v.decide_equivalence(0.0, g.equivalence_margin);
    s.verdicts.push_back(v);
  }
  for (const std::string& lr : g.sgd_lrs)
    s.verdicts.push_back(difference_verdict(
        ctx, "E3h@" + lr, "Warmup matters for SGD too (Post-LN, vanilla SGD, lr " + lr + ")",
        "Figure 2: SGD without warmup is also worse (BLEU just above zero in 15 epochs)",
        "final val loss, Post-LN SGD none - long (nats)", copy, e3_arm("post", lr, 1, "sgd"),
        e3_arm("post", lr, lng, "sgd"), steps, 0.0, Side::Above));
}

// The schedules of the designs, in words, with each warmup level.
std::string design_text(const Context& ctx) {
  const Grids& g = ctx.grids;
  std::string md = fmt::format(
      "**Design.** Primary: every arm follows the same schedule after t = {} (the longest warmup: "
      "`schedule.decay_start = {}` in {}), so the arms differ only in the warmup phase; before it the "
      "no-warmup arm runs at lr_max. ",
      g.warmup_steps("long"), g.warmup_steps("long"), g.copy_config);
  if (g.literal_design)
    md += "Second design (labelled *fairseq literal*): the paper's own `inverse_sqrt` per update with T_warmup = 1, "
          "which decays from the first update (lr_max / 10 by t = 100). ";
  return md + "The cumulative learning rate (the sum of lr over the run's updates) is in every table.\n\n";
}

}  // namespace

std::vector<TrainPoint> e3_points(const Grids& g) {
  std::vector<TrainPoint> points;
  auto add = [&](TrainPoint a) {
    for (const int seed : seeds_of(g, Task::Copy, a)) {
      a.seed = seed;
      points.push_back(a);
    }
  };
  for (const std::string p : {"post", "pre"})
    for (const WarmupLevel& w : g.warmups)
      for (const std::string& lr : g.lrs) add(e3_arm(p, lr, w.steps));
  if (g.literal_design)
    for (const std::string p : {"post", "pre"})
      for (const std::string& lr : g.lrs) add(literal_arm(p, lr));
  if (g.section4_drop > 0)
    for (const std::string& lr : g.lrs) add(section4_arm(lr, g.section4_drop));
  for (const std::string& lr : g.sgd_lrs) {
    add(e3_arm("post", lr, 1, "sgd"));
    add(e3_arm("post", lr, g.warmup_steps("long"), "sgd"));
  }
  for (const std::string& lr : g.lrs) add(e3_arm("post", lr, 1, "radam"));
  if (g.pre_radam) add(e3_arm("pre", g.slice_lr, 1, "radam"));
  return points;
}

Section run_e3(const Context& ctx, const TrainingResults& copy, const TrainingResults& text) {
  const Grids& g = ctx.grids;
  const RunConfig base_config = load_config(ctx.config_path(g.copy_config));
  NL_CHECK(base_config.schedule.decay_start == g.warmup_steps("long"), "reproduce",
           "{}: schedule.decay_start = {} must equal the longest warmup ({}) for the primary design",
           g.copy_config, base_config.schedule.decay_start, g.warmup_steps("long"));
  const Baseline base = copy_baseline(ctx);
  const int64_t steps = base_config.train.steps;
  const double target = g.copy_targets.empty() ? base.learn_below : g.copy_targets.front();
  Section s{"E3", "Warmup study (Figure 2, sections 3.2 and 4)", "", {}};
  std::string& md = s.markdown;
  md += fmt::format("Copy task ({}: d {}, L {}, {} heads, batch {}, sinusoidal positions), {} steps, seeds {{{}}} "
                    "({{{}}} for E3c's arms); Adam (0.9, 0.98), vanilla SGD and RAdam as stated per arm. Cells: mean "
                    "[95% t-interval] over seeds of the validation loss (a diverged run counts as its loss at init). "
                    "{}\n\n",
                    g.copy_config, base_config.model.d_model, base_config.model.n_layers, base_config.model.n_heads,
                    base_config.train.batch_size, steps, fmt::join(g.seeds, ", "), fmt::join(g.equivalence_seeds, ", "),
                    base.describe());
  md += design_text(ctx);
  for (const std::string& lr : g.lrs) {
    std::vector<TrainPoint> arms;
    for (const std::string p : {"post", "pre"})
      for (const WarmupLevel& w : g.warmups) arms.push_back(e3_arm(p, lr, w.steps));
    if (g.literal_design)
      for (const std::string p : {"post", "pre"}) arms.push_back(literal_arm(p, lr));
    if (g.section4_drop > 0) arms.push_back(section4_arm(lr, g.section4_drop));
    arms.push_back(e3_arm("post", lr, 1, "radam"));
    md += fmt::format("**lr_max {}**\n\n", lr) + arm_table(ctx, Task::Copy, copy, arms, base, target) + "\n";
    md += curves_figure(ctx, Task::Copy, copy, std::vector<TrainPoint>(arms.begin(), arms.begin() + 2 * g.warmups.size()), base,
                        "e3_copy_lr" + lr, "copy task: validation loss, Adam lr_max " + lr) + "\n";
    const std::vector<TrainPoint> designs(arms.begin() + 2 * g.warmups.size(), arms.end());
    std::vector<TrainPoint> compared = {e3_arm("post", lr, g.warmup_steps("none")), e3_arm("post", lr, g.warmup_steps("long")),
                                        e3_arm("pre", lr, g.warmup_steps("none"))};
    compared.insert(compared.end(), designs.begin(), designs.end());
    md += curves_figure(ctx, Task::Copy, copy, compared, base, "e3_copy_lr" + lr + "_designs",
                        "copy task: the designs and optimizers compared, lr_max " + lr) + "\n";
  }
  std::vector<TrainPoint> sgd_arms;
  for (const std::string& lr : g.sgd_lrs)
    for (const std::string w : {"none", "long"}) sgd_arms.push_back(e3_arm("post", lr, g.warmup_steps(w), "sgd"));
  if (g.pre_radam) sgd_arms.push_back(e3_arm("pre", g.slice_lr, 1, "radam"));
  if (!sgd_arms.empty()) {
    md += "**Vanilla SGD (momentum 0) and RAdam**\n\n" + arm_table(ctx, Task::Copy, copy, sgd_arms, base, target) + "\n";
    md += curves_figure(ctx, Task::Copy, copy, sgd_arms, base, "e3_copy_sgd", "copy task: vanilla SGD, Post-LN") + "\n";
  }
  append_warmup_verdicts(ctx, copy, steps, s);
  append_time_to_quality(ctx, copy, s);
  append_optimizer_verdicts(ctx, copy, steps, s);
  if (text.size() > 0) append_e3_text(ctx, text, s);
  return s;
}

}  // namespace normlab::xiong
