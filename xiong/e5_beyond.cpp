// E5: beyond the paper. (a) Liu et al. 2020 (Admin): the output change after one Adam step at
// init vs depth, Post-LN / Pre-LN / DeepNorm; (b) Wang et al. 2022 (DeepNet): DeepNorm trains where
// Post-LN fails at the same lr and depth; (c) sandwich (Peri-LN) placement on the copy task.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/config.h"
#include "xiong/experiments.h"
#include "xiong/outcomes.h"

namespace normlab::xiong {

namespace {

const std::vector<std::string> kAmpPlacements = {"post", "pre", "deepnorm"};

nlohmann::json measure_amplification(const Context& ctx, const RunConfig& base) {
  const Grids& g = ctx.grids;
  nlohmann::json out;
  for (const std::string& placement : kAmpPlacements) {
    nlohmann::json seeds = nlohmann::json::array();
    for (int seed = 1; seed <= g.amp_seeds; ++seed) {
      std::vector<double> per_depth;
      for (const int64_t L : g.amp_depths) {
        RunConfig c = base;
        c.model = probe_model(base.model, placement, L, seed);
        c.optim.lr = g.amp_lr;
        per_depth.push_back(output_change_after_one_step(c, g.amp_probe, 3000 + static_cast<uint64_t>(seed)));
      }
      seeds.push_back(per_depth);
    }
    out[placement] = seeds;
  }
  return out;
}

// Bootstrap over seeds of the log-log slope of the seed-mean output change vs depth.
Interval amplification_slope(const nlohmann::json& seeds, const std::vector<double>& depths) {
  return bootstrap(static_cast<int>(seeds.size()), [&](const std::vector<int>& pick) {
    std::vector<double> mean(depths.size(), 0.0);
    for (const int s : pick)
      for (size_t i = 0; i < depths.size(); ++i)
        mean[i] += seeds[static_cast<size_t>(s)][i].get<double>() / static_cast<double>(pick.size());
    return loglog_slope(depths, mean);
  });
}

void amplification_verdicts(const nlohmann::json& data, const std::vector<double>& x, Section& s) {
  Verdict post{"E5a", "Admin: Post-LN's output change grows like O(N) with depth", "O(N): log-log slope 1",
               "log-log slope of the output change vs L, Post-LN", amplification_slope(data["post"], x)};
  post.decide_equivalence(1.0, 0.5);
  post.note = "margin: half-way to flat (0) and to quadratic (2)";
  const nlohmann::json &a = data["post"], &b = data["pre"];
  Verdict slower{"E5a'", "Admin: Pre-LN's output change grows more slowly (O(log N))", "O(log N) vs O(N)",
                 "log-log slope, Post-LN - Pre-LN",
                 bootstrap(static_cast<int>(a.size()), [&](const std::vector<int>& pick) {
                   auto slope = [&](const nlohmann::json& seeds) {
                     std::vector<double> mean(x.size(), 0.0);
                     for (const int k : pick)
                       for (size_t i = 0; i < x.size(); ++i)
                         mean[i] += seeds[static_cast<size_t>(k)][i].get<double>() / static_cast<double>(pick.size());
                     return loglog_slope(x, mean);
                   };
                   return slope(a) - slope(b);
                 })};
  slower.decide_direction(0.0, Side::Above);
  std::vector<double> post_last, deep_last;
  for (const auto& seed : data["post"]) post_last.push_back(seed.back().get<double>());
  for (const auto& seed : data["deepnorm"]) deep_last.push_back(seed.back().get<double>());
  Verdict deep{"E5a''", "DeepNet: DeepNorm's update moves the output much less than Post-LN's",
               "bounded updates", fmt::format("output change, Post-LN / DeepNorm at L = {}", x.back()),
               log_ratio(post_last, deep_last)};
  deep.decide_direction(1.0, Side::Above);
  s.verdicts.insert(s.verdicts.end(), {post, slower, deep});
}

Section amplification(const Context& ctx, Section s) {
  const Grids& g = ctx.grids;
  const RunConfig run = load_config(ctx.config_path(g.amp_config));
  const ModelConfig& base = run.model;
  const nlohmann::json key = {{"config", config_fingerprint_text(run)}, {"depths", g.amp_depths},
                              {"seeds", g.amp_seeds}, {"lr", g.amp_lr}, {"batch", g.amp_probe.batch},
                              {"context", g.amp_probe.context}, {"version", 3}};
  const nlohmann::json data = cached(ctx, "e5_amplification", key, [&] { return measure_amplification(ctx, run); });
  s.markdown += fmt::format(
      "**(a) Amplification (Liu et al. 2020).** Relative change of the logits, ||F(x, W') - F(x, W)|| / ||F(x, W)||, "
      "after one training step ({} at lr {}, betas {}/{}) from initialization on one batch of {} x {} random tokens; "
      "d {}, FFN {}, {} heads, token embeddings {}; {} seeds. Cells: mean [95% t-interval]; slopes: bootstrap over "
      "seeds.\n\n",
      enum_name(run.optim.name), g.amp_lr, run.optim.beta1, run.optim.beta2, g.amp_probe.batch, g.amp_probe.context,
      base.d_model, base.d_ff, base.n_heads, base.embedding_scale == EmbeddingScale::SqrtD ? "times sqrt(d)" : "unscaled",
      g.amp_seeds);
  Chart chart{.title = "Output change after one Adam step at init", .xlabel = "layers L",
              .ylabel = "relative logit change", .log_y = true, .log_x = true};
  std::vector<std::vector<std::string>> rows;
  const std::vector<double> x(g.amp_depths.begin(), g.amp_depths.end());
  for (const std::string& p : kAmpPlacements) {
    ChartSeries series{.title = placement_label(p), .color = color_of(p), .markers = true};
    std::vector<std::string> row = {placement_label(p)};
    for (size_t i = 0; i < x.size(); ++i) {
      std::vector<double> v;
      for (const auto& seed : data[p]) v.push_back(seed[i].get<double>());
      const Interval m = mean_interval(v);
      row.push_back(interval_text(m));
      series.points.emplace_back(x[i], m.estimate);
    }
    row.push_back(interval_text(amplification_slope(data[p], x), 2));
    rows.push_back(row);
    chart.series.push_back(series);
  }
  std::vector<std::string> header = {"placement"};
  for (const int64_t L : g.amp_depths) header.push_back(fmt::format("L={}", L));
  header.push_back("log-log slope");
  s.markdown += md_table(header, rows) + "\n" + figure(ctx, chart, "e5_amplification") + "\n";
  amplification_verdicts(data, x, s);
  return s;
}

TrainPoint arm(const std::string& placement, const std::string& lr, int64_t warmup) {
  return {placement, "layernorm", "adam", lr, warmup, 1};
}

}  // namespace

std::vector<TrainPoint> e5_points(const Grids& g) {
  std::vector<TrainPoint> points;
  // DeepNorm and sandwich without warmup, next to E3's Post-LN and Pre-LN arms at the same lr.
  for (const std::string p : {"post", "pre", "deepnorm", "sandwich"})
    for (const int seed : g.seeds) {
      TrainPoint t = arm(p, g.slice_lr, g.warmup_steps("none"));
      t.seed = seed;
      points.push_back(t);
    }
  return points;
}

Section run_e5(const Context& ctx, const TrainingResults& copy, bool train_part) {
  Section s{"E5", "Beyond the paper: amplification, DeepNorm, sandwich", "", {}};
  s = amplification(ctx, s);
  if (!train_part) return s;
  const Grids& g = ctx.grids;
  const Baseline base = copy_baseline(ctx);
  const int64_t steps = load_config(ctx.config_path(g.copy_config)).train.steps;
  std::vector<std::vector<std::string>> rows;
  for (const std::string p : {"post", "deepnorm", "sandwich", "pre"})
    rows.push_back({placement_label(p), "none", summarize(copy, arm(p, g.slice_lr, g.warmup_steps("none")), g.seeds, base).text()});
  s.markdown += fmt::format("**(b) DeepNorm and (c) sandwich (Peri-LN) on the copy task** (lr_max {}, {} steps; "
                            "DeepNorm: alpha = (2L)^(1/4), beta = (8L)^(-1/4)). Final validation loss, mean [95% "
                            "t-interval]. {}\n\n", g.slice_lr, steps, base.describe());
  s.markdown += md_table({"placement", "warmup", "final val loss"}, rows) + "\n";
  auto finals = [&](const std::string& p, const std::string& w) {
    return copy.per_seed(arm(p, g.slice_lr, g.warmup_steps(w)), g.seeds, [](const RunOutcome& r) { return r.capped_final(); });
  };
  Verdict deep{"E5b", "DeepNorm trains better than Post-LN without warmup", "DeepNet: stable where Post-LN is not",
               "final val loss, Post-LN none - DeepNorm none (nats)",
               paired_difference(finals("post", "none"), finals("deepnorm", "none")), steps};
  deep.decide_direction(0.0, Side::Above);
  Verdict sandwich{"E5c", "Peri-LN (sandwich) trains without warmup like Pre-LN", "stable without warmup",
                   "final val loss, sandwich none - Pre-LN none (nats)",
                   paired_difference(finals("sandwich", "none"), finals("pre", "none")), steps};
  sandwich.decide_direction(0.05, Side::Below);
  sandwich.note = "non-inferiority margin 0.05 nats";
  s.verdicts.insert(s.verdicts.end(), {deep, sandwich});
  return s;
}

}  // namespace normlab::xiong
