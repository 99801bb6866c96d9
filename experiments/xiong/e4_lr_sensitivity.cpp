// E4: learning-rate sensitivity (Wortsman et al. 2023): the final loss over an lr sweep spanning
// two orders of magnitude, per placement and warmup, and their LR sensitivity
//   S = mean over the swept lrs of [ capped(lr) - min over lr' of capped(lr') ],
// capped = the final validation loss, no worse than the loss at init (diverged = loss at init).
// Wortsman's S takes the minimum per curve, so a setting that fails at every lr looks insensitive
// (S ~ 0); the verdicts therefore use S_all, the same mean excess over the best final loss of all
// four settings, next to the number of lrs at which a majority of seeds learned.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "experiments/xiong/experiments.h"
#include "experiments/xiong/outcomes.h"

namespace normlab::xiong {

namespace {

struct Curve {
  std::string placement, warmup;
  std::vector<Stats> per_lr;
  double sensitivity = NAN, sensitivity_all = NAN;
  int learned_lrs = 0;
};

}  // namespace

std::vector<TrainPoint> e4_points(const Grids& g) {
  std::vector<TrainPoint> points;
  for (const std::string p : {"post", "pre"})
    for (const std::string w : {"none", "long"})
      for (const std::string& lr : g.lr_sweep)
        for (const int seed : g.lr_sweep_seeds)
          points.push_back({p, "layernorm", g.copy_layers, lr, g.warmup_steps(w), seed});
  return points;
}

Section run_e4(const Context& ctx, const TrainingResults& copy) {
  const Grids& g = ctx.grids;
  const CopyThresholds th = copy_thresholds(ctx);
  Section s{"E4", "Learning-rate sensitivity (Wortsman et al. 2023)", "", {}};
  std::string& md = s.markdown;
  md += fmt::format("Copy task, L {}, lr in {{{}}}, seeds {{{}}}, warmup none (1) and long ({}). LR sensitivity S = "
                    "mean over lrs of (final loss - best final loss over lrs), final losses capped at the loss at "
                    "init (lower S = less sensitive). S_all: the same with the best final loss of all four settings as the "
                    "reference (a setting that fails at every lr has S ~ 0 but a large S_all). \"learned\": lrs at "
                    "which a majority of seeds learned (final loss <= {}).\n\n",
                    g.copy_layers, fmt::join(g.lr_sweep, ", "), fmt::join(g.lr_sweep_seeds, ", "),
                    g.warmup_steps("long"), num(th.learn_below));
  Chart chart{.title = fmt::format("Final validation loss vs learning rate (copy task, L {})", g.copy_layers),
              .xlabel = "lr_max", .ylabel = "final validation loss (capped)", .log_x = true};
  std::vector<Curve> curves;
  std::vector<std::vector<std::string>> rows;
  for (const std::string p : {"post", "pre"})
    for (const std::string w : {"none", "long"}) {
      Curve c{p, w, {}, NAN, NAN, 0};
      ChartSeries series{.title = fmt::format("{}, warmup {}", p == std::string("post") ? "Post-LN" : "Pre-LN", w),
                         .color = color_of(p), .dashed = std::string(w) == "long", .markers = true};
      std::vector<std::string> row = {series.title};
      for (const std::string& lr : g.lr_sweep) {
        const GroupSummary gs =
            summarize(copy.over_seeds({p, "layernorm", g.copy_layers, lr, g.warmup_steps(w), 1}, g.lr_sweep_seeds), th);
        c.per_lr.push_back(gs.capped);
        c.learned_lrs += gs.majority_learned();
        row.push_back(gs.final_text() + (gs.diverged ? " (div " + std::to_string(gs.diverged) + ")" : ""));
        series.points.emplace_back(std::strtod(lr.c_str(), nullptr), gs.capped.mean);
        series.y_err.push_back(gs.capped.sd);
      }
      double best = INFINITY, sum = 0;
      int n = 0;
      for (const Stats& st : c.per_lr)
        if (std::isfinite(st.mean)) best = std::min(best, st.mean);
      for (const Stats& st : c.per_lr)
        if (std::isfinite(st.mean)) {
          sum += st.mean - best;
          ++n;
        }
      c.sensitivity = n ? sum / n : NAN;
      rows.push_back(row);
      curves.push_back(c);
      chart.series.push_back(series);
    }
  double best_all = INFINITY;
  for (const Curve& c : curves)
    for (const Stats& st : c.per_lr)
      if (std::isfinite(st.mean)) best_all = std::min(best_all, st.mean);
  for (size_t i = 0; i < curves.size(); ++i) {
    double sum = 0;
    int n = 0;
    for (const Stats& st : curves[i].per_lr)
      if (std::isfinite(st.mean)) {
        sum += st.mean - best_all;
        ++n;
      }
    curves[i].sensitivity_all = n ? sum / n : NAN;
    rows[i].push_back(num(curves[i].sensitivity));
    rows[i].push_back(num(curves[i].sensitivity_all));
    rows[i].push_back(fmt::format("{}/{}", curves[i].learned_lrs, g.lr_sweep.size()));
  }
  std::vector<std::string> header = {"placement, warmup"};
  for (const std::string& lr : g.lr_sweep) header.push_back("lr " + lr);
  header.insert(header.end(), {"S (Wortsman)", "S_all", "learned"});
  md += md_table(header, rows) + "\n" + figure(ctx, chart, "e4_lr_sensitivity") + "\n";

  // curves: post none, post long, pre none, pre long.
  const Curve &post_none = curves[0], &post_long = curves[1], &pre_none = curves[2], &pre_long = curves[3];
  auto better = [](const Curve& a, const Curve& b) {  // a less lr-sensitive than b
    return a.sensitivity_all < b.sensitivity_all && a.learned_lrs >= b.learned_lrs;
  };
  s.verdicts.push_back({"E4a", "Pre-LN is less sensitive to the learning rate than Post-LN",
                        "Wortsman et al.: small models show the instabilities; compare by LR sensitivity",
                        fmt::format("S_all: Post-LN {} / {}, Pre-LN {} / {}; learned at {} / {} vs {} / {} lrs "
                                    "(no warmup / long warmup)",
                                    num(post_none.sensitivity_all), num(post_long.sensitivity_all),
                                    num(pre_none.sensitivity_all), num(pre_long.sensitivity_all), post_none.learned_lrs,
                                    post_long.learned_lrs, pre_none.learned_lrs, pre_long.learned_lrs),
                        "reproduced if Pre-LN has the lower S_all and learns at no fewer lrs, with and without "
                        "warmup; partially if in one of the two",
                        outcome_of(better(pre_none, post_none) && better(pre_long, post_long),
                                   better(pre_none, post_none) || better(pre_long, post_long))});
  s.verdicts.push_back({"E4b", "Warmup reduces Post-LN's learning-rate sensitivity",
                        "Wortsman et al.: longer warmup lowers LR sensitivity",
                        fmt::format("Post-LN S_all: no warmup {}, long warmup {}; learned at {} vs {} lrs",
                                    num(post_none.sensitivity_all), num(post_long.sensitivity_all),
                                    post_none.learned_lrs, post_long.learned_lrs),
                        "reproduced if S_all with long warmup is lower by >= 10% and it learns at no fewer lrs; "
                        "partially if S_all is lower",
                        outcome_of(post_long.sensitivity_all <= 0.9 * post_none.sensitivity_all &&
                                       post_long.learned_lrs >= post_none.learned_lrs,
                                   post_long.sensitivity_all < post_none.sensitivity_all)});
  return s;
}

}  // namespace normlab::xiong
