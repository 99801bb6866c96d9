#include "xiong/e3_common.h"

#include <algorithm>

#include <fmt/format.h>

#include "xiong/arms.h"

namespace normlab::xiong {

const std::string& config_of(const Grids& g, Task task) { return task == Task::Copy ? g.copy_config : g.text_config; }
std::string task_name(Task task) { return task == Task::Copy ? "copy" : "text"; }

TrainPoint e3_arm(const std::string& placement, const std::string& lr, int64_t warmup, const std::string& optimizer) {
  return {placement, "layernorm", optimizer, lr, warmup, 1};
}

TrainPoint literal_arm(const std::string& placement, const std::string& lr) {
  TrainPoint p = e3_arm(placement, lr, 1);
  p.decay_start = 0;
  return p;
}

TrainPoint section4_arm(const std::string& lr, int64_t drop) {
  TrainPoint p = e3_arm("pre", lr, 1);
  p.decay_start = drop;
  p.decay_factor = "0.1";
  return p;
}

std::vector<int> seeds_of(const Grids& g, Task task, const TrainPoint& arm) {
  if (task == Task::Text) return g.text_seeds;
  const bool primary_adam = arm.optimizer == "adam" && arm.norm_type == "layernorm" && arm.decay_start < 0 &&
                            arm.decay_factor.empty() && arm.embedding_scale.empty() && arm.precision.empty();
  const bool listed = std::find(g.lrs.begin(), g.lrs.end(), arm.lr) != g.lrs.end();
  const bool pre_none = arm.placement == "pre" && arm.warmup == g.warmup_steps("none");
  const bool post_long = arm.placement == "post" && arm.warmup == g.warmup_steps("long");
  if (primary_adam && listed && (pre_none || post_long) && !g.equivalence_seeds.empty()) return g.equivalence_seeds;
  return g.seeds;
}

std::vector<int> common_seeds(const Grids& g, Task task, const TrainPoint& a, const TrainPoint& b) {
  const std::vector<int> sa = seeds_of(g, task, a), sb = seeds_of(g, task, b);
  std::vector<int> out;
  for (const int s : sa)
    if (std::find(sb.begin(), sb.end(), s) != sb.end()) out.push_back(s);
  return out;
}

double final_capped(const RunOutcome& r) { return r.capped_final(); }

Interval final_difference(const Grids& g, Task task, const TrainingResults& runs, const TrainPoint& a,
                          const TrainPoint& b) {
  const std::vector<int> seeds = common_seeds(g, task, a, b);
  return paired_difference(runs.per_seed(a, seeds, final_capped), runs.per_seed(b, seeds, final_capped));
}

std::string arm_words(const Context& ctx, Task task, const TrainPoint& arm) {
  const RunConfig c = point_config(ctx.config_path(config_of(ctx.grids, task)), arm);
  return fmt::format("{} {}, lr_max {}: {}", placement_label(arm.placement), arm.optimizer, arm.lr,
                     schedule_words(c.schedule));
}

std::string arm_table(const Context& ctx, Task task, const TrainingResults& runs,
                      const std::vector<TrainPoint>& arms, const Baseline& base, double target) {
  std::vector<std::vector<std::string>> rows;
  for (const TrainPoint& a : arms) {
    const std::vector<int> seeds = seeds_of(ctx.grids, task, a);
    const RunConfig c = point_config(ctx.config_path(config_of(ctx.grids, task)), a);
    const ArmSummary s = summarize(runs, a, seeds, base);
    auto at = [&](double f) {
      return mean_ci_text(runs.per_seed(a, seeds, [f](const RunOutcome& r) { return r.val_at_fraction(f); }), 3);
    };
    int reached = 0;
    for (const RunOutcome* r : runs.over_seeds(a, seeds)) reached += time_to(*r, target).reached;
    std::string who = placement_label(a.placement);
    if (a.norm_type != "layernorm") who += " " + a.norm_type;
    if (!a.precision.empty()) who += " " + a.precision;
    rows.push_back({who, a.optimizer, a.lr, std::to_string(a.warmup), schedule_words(c.schedule),
                    num(cumulative_lr(c), 3), at(0.25), at(0.5), mean_ci_text(s.capped, 3),
                    fmt::format("{}/{}", reached, s.n), fmt::format("{}/{}", s.learned, s.n), std::to_string(s.diverged)});
  }
  return md_table({"placement", "optimizer", "lr_max", "warmup W", "schedule (t = update)", "cumulative lr",
                   "val loss at 25%", "at 50%", "final (100%)", fmt::format("reached {}", num(target, 3)), "learned",
                   "diverged"}, rows);
}

std::string curves_figure(const Context& ctx, Task task, const TrainingResults& runs, const std::vector<TrainPoint>& arms,
                          const Baseline& base, const std::string& stem, const std::string& title) {
  // The copy task's losses span 4 to 0.001 (log axis); the text task's 3.4 to 1.8 (linear, with the
  // Markov baselines as lines, so that "learned more than character statistics" can be read off).
  Chart chart{.title = title, .xlabel = "step", .ylabel = "validation loss (mean over seeds, 95% band)",
              .log_y = task == Task::Copy, .x_from_zero = true};
  double last_step = 0;
  for (size_t i = 0; i < arms.size(); ++i) {
    const TrainPoint& a = arms[i];
    const auto seeds = seeds_of(ctx.grids, task, a);
    const BandCurve curve = mean_validation_band(runs.over_seeds(a, seeds));
    if (curve.mean.empty()) continue;
    last_step = std::max(last_step, curve.mean.back().first);
    std::string label = fmt::format("{} w{}", placement_label(a.placement), a.warmup);
    if (a.optimizer != "adam") label += " " + a.optimizer;
    if (a.decay_start == 0) label += " (fairseq literal)";
    if (!a.decay_factor.empty()) label += " (section 4)";
    chart.series.push_back({.title = fmt::format("{} ({} seeds)", label, seeds.size()), .points = curve.mean,
                            .color = static_cast<int>(i % 8) + 1, .dash = a.placement == "pre" ? 2 : 1,
                            .band = curve.band});
  }
  if (chart.series.empty()) return "";
  std::vector<Baseline> lines = {base};
  if (task == Task::Text)
    for (const Baseline& m : text_markov_baselines(ctx)) lines.push_back(m);
  for (size_t i = 0; i < lines.size(); ++i) {
    ChartSeries c{.title = fmt::format("{} {}", lines[i].name, num(lines[i].loss, 3)), .color = 8 - static_cast<int>(i),
                  .dash = 2};
    c.points = {{0.0, lines[i].loss}, {last_step, lines[i].loss}};
    chart.series.push_back(c);
  }
  return figure(ctx, chart, stem);
}

}  // namespace normlab::xiong

namespace normlab::xiong {

std::vector<ClaimArms> e3_claims(const Grids& g) {
  const int64_t none = g.warmup_steps("none"), shrt = g.warmup_steps("short"), lng = g.warmup_steps("long");
  std::vector<ClaimArms> out;
  for (const std::string& lr : g.lrs) {
    const TrainPoint post_long = e3_arm("post", lr, lng);
    const TrainPoint fast = g.section4_drop > 0 ? section4_arm(lr, g.section4_drop) : e3_arm("pre", lr, none);
    out.push_back({"E3a@" + lr, Task::Copy, {e3_arm("post", lr, none), post_long}});
    out.push_back({"E3a'@" + lr, Task::Copy, {literal_arm("post", lr), post_long}});
    out.push_back({"E3c@" + lr, Task::Copy, {e3_arm("pre", lr, none), post_long}});
    for (const double t : g.copy_targets) out.push_back({fmt::format("E3d@{}.to{}", lr, t), Task::Copy, {fast, post_long}});
    out.push_back({"E3f@" + lr, Task::Copy, {e3_arm("post", lr, none), e3_arm("post", lr, none, "radam")}});
  }
  std::vector<TrainPoint> interaction;
  for (const std::string& lr : g.lrs)
    for (const int64_t w : {shrt, lng}) interaction.push_back(e3_arm("post", lr, w));
  out.push_back({"E3b", Task::Copy, interaction});
  out.push_back({"E3g", Task::Copy, {e3_arm("pre", g.slice_lr, none, "radam"), e3_arm("pre", g.slice_lr, none)}});
  for (const std::string& lr : g.sgd_lrs)
    out.push_back({"E3h@" + lr, Task::Copy, {e3_arm("post", lr, none, "sgd"), e3_arm("post", lr, lng, "sgd")}});
  for (const std::string& lr : g.text_lrs) {
    const TrainPoint post_long = e3_arm("post", lr, lng);
    const TrainPoint fast = g.section4_drop > 0 ? section4_arm(lr, g.section4_drop) : e3_arm("pre", lr, none);
    out.push_back({"E3a.text@" + lr, Task::Text, {e3_arm("post", lr, none), post_long}});
    out.push_back({"E3c.text@" + lr, Task::Text, {e3_arm("pre", lr, none), post_long}});
    out.push_back({"E3d.text@" + lr, Task::Text, {fast, post_long}});
  }
  return out;
}

}  // namespace normlab::xiong
