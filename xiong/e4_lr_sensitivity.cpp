// E4: learning-rate sensitivity (Wortsman et al. 2023): the final loss over an lr sweep, per
// placement and warmup. For each setting and seed, S = mean over the swept lrs of
// [min(loss(lr), loss at init) - that setting's best over the sweep] (lr_sensitivity in
// outcomes.h; a diverged run counts as its loss at init). Lower S = less sensitive. S is computed
// per seed, so settings compare seed by seed.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/config.h"
#include "xiong/experiments.h"
#include "xiong/outcomes.h"

namespace normlab::xiong {

namespace {

struct Setting {
  std::string placement, warmup;
  std::string label() const {
    return fmt::format("{}, {}", placement_label(placement), warmup == "none" ? "no warmup" : "warmup <= 5% of the run");
  }
};
// "warm": grids.e4_warmup, at most 5% of the run (v3 used the long warmup, 20% of it).
const std::vector<Setting> kSettings = {{"post", "none"}, {"post", "warm"}, {"pre", "none"}, {"pre", "warm"}};

TrainPoint point_of(const Grids& g, const Setting& s, const std::string& lr) {
  return {s.placement, "layernorm", "adam", lr, s.warmup == "none" ? g.warmup_steps("none") : g.e4_warmup, 1};
}

// The basin width per seed of each setting (outcomes.h: rates within 0.1 nats of the best).
std::vector<std::vector<double>> basins(const std::vector<std::vector<std::vector<double>>>& c,
                                        const std::vector<std::string>& lrs, size_t seeds) {
  std::vector<double> rates;
  for (const std::string& lr : lrs) rates.push_back(std::strtod(lr.c_str(), nullptr));
  std::vector<std::vector<double>> out(c.size(), std::vector<double>(seeds, NAN));
  for (size_t s = 0; s < c.size(); ++s)
    for (size_t k = 0; k < seeds; ++k) {
      std::vector<double> losses;
      for (const auto& lr : c[s]) losses.push_back(lr[k]);
      out[s][k] = basin_width(rates, losses, 0.1);
    }
  return out;
}

// capped[setting][lr][seed]
using Capped = std::vector<std::vector<std::vector<double>>>;

Capped capped_losses(const Grids& g, const TrainingResults& copy) {
  Capped c;
  for (const Setting& s : kSettings) {
    c.emplace_back();
    for (const std::string& lr : g.all_lrs())
      c.back().push_back(copy.per_seed(point_of(g, s, lr), g.seeds, [](const RunOutcome& r) { return r.capped_final(); }));
  }
  return c;
}

// S per seed for each setting: each setting's own best over its lr sweep.
std::vector<std::vector<double>> sensitivity(const Capped& c, size_t seeds) {
  std::vector<std::vector<double>> out(c.size(), std::vector<double>(seeds, NAN));
  for (size_t s = 0; s < c.size(); ++s)
    for (size_t k = 0; k < seeds; ++k) {
      std::vector<double> over_lrs;
      for (const auto& lr : c[s]) over_lrs.push_back(lr[k]);
      out[s][k] = lr_sensitivity(over_lrs);
    }
  return out;
}

// What the warmup's share of the run does at the two lowest rates: each placement's mean final
// loss without warmup and with it.
std::string low_rates(const Grids& g, const Capped& c) {
  const std::vector<std::string> lrs = g.all_lrs();
  std::string out = fmt::format("**The low rates.** Warmup takes {} of the run's updates at a fraction of lr_max.", g.e4_warmup);
  for (size_t i = 0; i < std::min<size_t>(2, lrs.size()); ++i)
    out += fmt::format(" At lr {}: Post-LN {} without warmup, {} with it; Pre-LN {} and {}.", lrs[i],
                       num(mean_interval(c[0][i]).estimate), num(mean_interval(c[1][i]).estimate),
                       num(mean_interval(c[2][i]).estimate), num(mean_interval(c[3][i]).estimate));
  return out + "\n";
}

std::string sweep_table_and_figure(const Context& ctx, const Capped& c, const std::vector<std::vector<double>>& S,
                                   const Baseline& base) {
  const Grids& g = ctx.grids;
  const std::vector<std::string> lrs = g.all_lrs();
  Chart chart{.title = "Final validation loss vs learning rate (copy task)", .xlabel = "lr_max",
              .ylabel = "final validation loss (capped, mean over seeds)", .log_y = true, .log_x = true};
  std::vector<std::vector<std::string>> rows;
  for (size_t s = 0; s < kSettings.size(); ++s) {
    ChartSeries series{.title = kSettings[s].label(), .color = color_of(kSettings[s].placement),
                       .dash = kSettings[s].warmup == "warm" ? 2 : 1, .markers = true};
    std::vector<std::string> row = {kSettings[s].label()};
    for (size_t i = 0; i < lrs.size(); ++i) {
      const Interval m = mean_interval(c[s][i]);
      int learned = 0;
      for (const double v : c[s][i]) learned += std::isfinite(v) && v <= base.learn_below;
      row.push_back(fmt::format("{} ({}/{})", num(m.estimate), learned, m.n));
      if (m.valid()) series.points.emplace_back(std::strtod(lrs[i].c_str(), nullptr), m.estimate);
    }
    row.push_back(mean_ci_text(S[s], 3));
    row.push_back(mean_ci_text(basins(c, lrs, g.seeds.size())[s], 2));
    rows.push_back(row);
    chart.series.push_back(series);
  }
  std::vector<std::string> header = {"placement, warmup"};
  for (const std::string& lr : lrs) header.push_back("lr " + lr);
  header.push_back("S [95% CI]");
  header.push_back("basin, decades [95% CI]");
  return md_table(header, rows) + "\n" + figure(ctx, chart, "e4_lr_sensitivity") + "\n" + low_rates(g, c) + "\n";
}

}  // namespace

std::vector<TrainPoint> e4_points(const Grids& g) {
  std::vector<TrainPoint> points;
  for (const Setting& s : kSettings)
    for (const std::string& lr : g.all_lrs())
      for (const int seed : g.seeds) {
        TrainPoint p = point_of(g, s, lr);
        p.seed = seed;
        points.push_back(p);
      }
  return points;
}

Section run_e4(const Context& ctx, const TrainingResults& copy) {
  const Grids& g = ctx.grids;
  const Baseline base = copy_baseline(ctx);
  const int64_t steps = load_config(ctx.config_path(g.copy_config)).train.steps;
  Section s{"E4", "Learning-rate sensitivity (Wortsman et al. 2023)", "", {}};
  const Capped c = capped_losses(g, copy);
  const std::vector<std::vector<double>> S = sensitivity(c, g.seeds.size());
  s.markdown += fmt::format(
      "Copy task, Adam, {} steps, lr in {{{}}} (log-spaced), warmup none and {} steps (at most 5% of the run), seeds "
      "{{{}}}. Cells: final validation loss (capped at the loss at init), mean over seeds (seeds that learned / "
      "seeds). Wortsman et al.'s sensitivity, per setting and seed: **S = mean over the lr sweep of "
      "(min(loss(lr), loss at init) - min over the sweep of the same)**, i.e. that setting's own best is "
      "subtracted, never a best of another setting: lower = less sensitive. {}\n\n",
      steps, fmt::join(g.all_lrs(), ", "), g.e4_warmup, fmt::join(g.seeds, ", "), base.describe());
  s.markdown += sweep_table_and_figure(ctx, c, S, base);
  for (const std::string w : {"none", "warm"}) {
    const size_t post = w == std::string("none") ? 0 : 1, pre = post + 2;
    Verdict v{"E4a." + std::string(w), "Pre-LN is less sensitive to the learning rate than Post-LN (" + kSettings[post].label().substr(9) + ")",
              "Wortsman et al. 2023: small models show the instabilities; compare by lr sensitivity",
              "S, Post-LN - Pre-LN (nats)", paired_difference(S[post], S[pre]), steps};
    v.decide_direction(0.0, Side::Above);
    s.verdicts.push_back(v);
  }
  Verdict warm{"E4b", "Warmup reduces Post-LN's learning-rate sensitivity",
               "Wortsman et al. 2023: longer warmup lowers lr sensitivity", "S, Post-LN none - Post-LN with warmup (nats)",
               paired_difference(S[0], S[1]), steps};
  warm.decide_direction(0.0, Side::Above);
  s.verdicts.push_back(warm);
  return s;
}

}  // namespace normlab::xiong
