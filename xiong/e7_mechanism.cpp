// E7: the mechanism over training. (a) The per-layer FFN gradient profile (the paper's Figure 3)
// at initialization, in mid-warmup and after warmup, read from the E3 runs' grad_norms.csv; (b)
// Adam's relative update size ||dW|| / ||W|| per block over the first steps, with and without
// warmup (the size of the steps that the amplification of Liu et al. 2020 acts on).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/config.h"
#include "train/run_dir.h"
#include "xiong/experiments.h"

namespace normlab::xiong {

namespace {

TrainPoint arm(const std::string& placement, const std::string& lr, int64_t warmup) {
  return {placement, "layernorm", "adam", lr, warmup, 1};
}

// Per-layer gradient norms of `weight` ("ffn.w2.weight") at `step`, mean over the runs' seeds.
std::vector<double> layer_profile(const std::vector<const RunOutcome*>& runs, const std::string& weight,
                                  int64_t step, int64_t layers) {
  std::vector<double> sum(static_cast<size_t>(layers), 0.0);
  int n = 0;
  for (const RunOutcome* r : runs) {
    const CsvTable t = read_csv(std::filesystem::path(r->run_dir) / run_files::kGradNorms);
    const int step_col = t.column("step");
    for (const auto& row : t.rows) {
      if (step_col < 0 || static_cast<int64_t>(row[static_cast<size_t>(step_col)]) != step) continue;
      for (int64_t l = 0; l < layers; ++l) {
        const int c = t.column(fmt::format("blocks.{}.{}", l, weight));
        if (c >= 0) sum[static_cast<size_t>(l)] += row[static_cast<size_t>(c)];
      }
      ++n;
    }
  }
  for (double& v : sum) v = n > 0 ? v / n : NAN;
  return sum;
}

std::string profile_over_training(const Context& ctx, const TrainingResults& copy, const RunConfig& base) {
  const Grids& g = ctx.grids;
  const int64_t W = g.warmup_steps("long"), every = base.log.grad_norm_every;
  // Updates logged in grad_norms.csv (the first, multiples of grad_norm_every): init, mid-warmup,
  // after warmup.
  const std::vector<int64_t> steps = {1, (W / 2) / every * every, (W + every) / every * every};
  std::string md;
  std::vector<std::vector<std::string>> rows;
  for (const std::string p : {"post", "pre"})
    for (const std::string weight : {"ffn.w1.weight", "ffn.w2.weight"}) {
      Chart chart{.title = fmt::format("{} {} gradient norm per layer during training (warmup {}, lr {})",
                                       placement_label(p), weight, W, g.slice_lr),
                  .xlabel = "layer", .ylabel = "||grad||_F (mean over seeds)", .log_y = true, .integer_x = true};
      const auto runs = copy.over_seeds(arm(p, g.slice_lr, W), g.seeds);
      std::vector<std::string> row = {placement_label(p), weight};
      for (size_t i = 0; i < steps.size(); ++i) {
        const std::vector<double> v = layer_profile(runs, weight, steps[i], base.model.n_layers);
        ChartSeries s{.title = fmt::format("step {}", steps[i]), .color = static_cast<int>(i) + 1, .markers = true};
        for (size_t l = 0; l < v.size(); ++l) s.points.emplace_back(static_cast<double>(l + 1), v[l]);
        chart.series.push_back(s);
        row.push_back(v.empty() ? "-" : num(v.back() / v.front(), 3));
      }
      rows.push_back(row);
      md += figure(ctx, chart, fmt::format("e7_profile_{}_{}", p, weight.substr(4, 2)));
    }
  std::vector<std::string> header = {"placement", "weight"};
  for (const int64_t s : steps) header.push_back(fmt::format("last/first at step {}", s));
  return md + "\n" + md_table(header, rows) + "\n";
}

nlohmann::json measure_updates(const Context& ctx) {
  const Grids& g = ctx.grids;
  nlohmann::json out;
  for (const std::string p : {"post", "pre"})
    for (const std::string w : {"none", "long"}) {
      nlohmann::json seeds = nlohmann::json::array();
      for (int seed = 1; seed <= g.update_seeds; ++seed) {
        RunConfig c = load_config(ctx.config_path(g.copy_config),
                                  {"model.norm_placement=" + p, "optim.lr=" + g.slice_lr,
                                   fmt::format("schedule.warmup_steps={}", g.warmup_steps(w)),
                                   fmt::format("train.seed={}", seed), fmt::format("model.seed={}", seed)});
        seeds.push_back(block_update_ratios(c, g.update_steps));
      }
      out[p + "_" + w] = seeds;
    }
  return out;
}

std::string update_sizes(const Context& ctx) {
  const Grids& g = ctx.grids;
  const nlohmann::json key = {{"config", g.copy_config}, {"lr", g.slice_lr}, {"steps", g.update_steps},
                              {"seeds", g.update_seeds}, {"long", g.warmup_steps("long")}, {"version", 2}};
  const nlohmann::json data = cached(ctx, "e7_updates", key, [&] { return measure_updates(ctx); });
  Chart chart{.title = fmt::format("Adam's relative update of the first and last block (lr {})", g.slice_lr),
              .xlabel = "step", .ylabel = "||dW|| / ||W|| (mean over seeds)", .log_y = true};
  std::vector<std::vector<std::string>> rows;
  for (const std::string p : {"post", "pre"})
    for (const std::string w : {"none", "long"}) {
      const nlohmann::json& seeds = data[p + "_" + w];
      for (const bool last : {false, true}) {
        ChartSeries s{.title = fmt::format("{}, warmup {}, {} block", placement_label(p), w, last ? "last" : "first"),
                      .color = color_of(p), .dash = w == std::string("long") ? 2 : 1, .markers = last};
        std::vector<double> first10;
        for (int t = 0; t < g.update_steps; ++t) {
          double sum = 0;
          for (const auto& seed : seeds) sum += last ? seed[static_cast<size_t>(t)].back().get<double>()
                                                     : seed[static_cast<size_t>(t)].front().get<double>();
          s.points.emplace_back(static_cast<double>(t + 1), sum / static_cast<double>(seeds.size()));
        }
        for (const auto& seed : seeds) {
          double m = 0;
          const int n = std::min(10, g.update_steps);
          for (int t = 0; t < n; ++t) m += (last ? seed[static_cast<size_t>(t)].back() : seed[static_cast<size_t>(t)].front()).get<double>() / n;
          first10.push_back(m);
        }
        rows.push_back({placement_label(p), w, last ? "last" : "first", mean_ci_text(first10)});
        chart.series.push_back(s);
      }
    }
  return fmt::format("**(b) Adam's update size.** ||W_(t+1) - W_t||_F / ||W_t||_F over all parameters of a block, "
                     "for the first {} steps of the copy-task run (lr_max {}, the E3 schedules), {} seeds; the table "
                     "gives the mean over the first 10 steps, mean [95% t-interval] over seeds.\n\n",
                     g.update_steps, g.slice_lr, g.update_seeds) +
         md_table({"placement", "warmup", "block", "mean update size, steps 1-10"}, rows) + "\n" +
         figure(ctx, chart, "e7_update_size") + "\n";
}

}  // namespace

std::vector<TrainPoint> e7_points(const Grids& g) {
  std::vector<TrainPoint> points;
  for (const std::string p : {"post", "pre"})
    for (const int seed : g.seeds) {
      TrainPoint t = arm(p, g.slice_lr, g.warmup_steps("long"));
      t.seed = seed;
      points.push_back(t);
    }
  return points;
}

Section run_e7(const Context& ctx, const TrainingResults& copy) {
  const RunConfig base = load_config(ctx.config_path(ctx.grids.copy_config));
  Section s{"E7", "The mechanism over training: gradient profile and Adam's update size", "", {}};
  s.markdown += fmt::format("**(a) Figure 3 over training.** Per-layer gradient norm of the FFN weights (per "
                            "training batch, as logged in grad_norms.csv every {} steps) at initialization, in the "
                            "middle of the long warmup and after it, mean over seeds {{{}}}; the table gives the "
                            "last/first layer ratio.\n\n", base.log.grad_norm_every, fmt::join(ctx.grids.seeds, ", "));
  s.markdown += profile_over_training(ctx, copy, base);
  s.markdown += update_sizes(ctx);
  return s;
}

}  // namespace normlab::xiong
