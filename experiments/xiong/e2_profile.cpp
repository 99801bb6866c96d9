// E2: the per-layer gradient profile at initialization (the paper's Figure 3(a,b)): W1, W2 and
// attention gradient norms per layer, as the mean of per-batch norms and as the norm of the
// batch-mean gradient ("the scale of the expected gradient").
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "experiments/config.h"
#include "experiments/xiong/experiments.h"

namespace normlab::xiong {

namespace {

const std::vector<std::string> kPlacements = {"post", "pre"};
const std::vector<std::string> kMeasures = {"w1_mean", "w1_nom", "w2_mean", "w2_nom", "attn"};

std::string label(const std::string& placement) { return placement == "post" ? "Post-LN" : "Pre-LN"; }

nlohmann::json measure(const Context& ctx) {
  const Grids& g = ctx.grids;
  const ModelConfig base = probe_model(ctx);
  nlohmann::json out;
  for (const int64_t L : g.e2_depths)
    for (const std::string& placement : kPlacements) {
      nlohmann::json seeds = nlohmann::json::array();
      for (int seed = 1; seed <= g.e2_seeds; ++seed) {
        ModelConfig c = base;
        c.norm_placement = placement;
        c.n_layers = L;
        c.seed = static_cast<uint64_t>(seed);
        const LayerGrads r = measure_layer_grads(c, g.e2_probe, 2000 + static_cast<uint64_t>(seed));
        seeds.push_back({{"w1_mean", r.w1_mean_norm}, {"w1_nom", r.w1_norm_of_mean}, {"w2_mean", r.w2_mean_norm},
                         {"w2_nom", r.w2_norm_of_mean}, {"attn", r.attn_mean_norm}});
      }
      out[fmt::format("L{}", L)][placement] = seeds;
    }
  return out;
}

// Per-seed ratio of the last layer's value to the first's.
Stats ratio(const nlohmann::json& seeds, const std::string& measure) {
  std::vector<double> r;
  for (const auto& s : seeds) {
    const auto v = s[measure].get<std::vector<double>>();
    if (!v.empty() && v.front() > 0) r.push_back(v.back() / v.front());
  }
  return stats_of(r);
}

std::vector<double> mean_over_seeds(const nlohmann::json& seeds, const std::string& measure) {
  std::vector<double> mean;
  for (const auto& s : seeds) {
    const auto v = s[measure].get<std::vector<double>>();
    mean.resize(v.size(), 0.0);
    for (size_t i = 0; i < v.size(); ++i) mean[i] += v[i] / static_cast<double>(seeds.size());
  }
  return mean;
}

// One figure: x = layer, Post-LN and Pre-LN, solid = norm of the batch-mean gradient, dashed =
// mean of per-batch norms (attention: mean of per-batch norms only).
std::string profile_figure(const Context& ctx, const nlohmann::json& at_depth, int64_t L, const std::string& what) {
  Chart chart{.title = fmt::format("Per-layer {} gradient norm at init, L = {}", what, L), .xlabel = "layer",
              .ylabel = "gradient Frobenius norm", .log_y = true, .integer_x = true};
  for (const std::string& placement : kPlacements) {
    const nlohmann::json& seeds = at_depth[placement];
    auto add = [&](const std::string& measure, const std::string& kind, bool dashed) {
      ChartSeries s{.title = label(placement) + kind, .color = color_of(placement), .dashed = dashed, .markers = true};
      const std::vector<double> v = mean_over_seeds(seeds, measure);
      for (size_t l = 0; l < v.size(); ++l) s.points.emplace_back(static_cast<double>(l + 1), v[l]);
      chart.series.push_back(s);
    };
    if (what == "attention") {
      add("attn", ", q/k/v/o", false);
    } else {
      const std::string w = what == "FFN W1" ? "w1" : "w2";
      add(w + "_nom", ", norm of batch-mean", false);
      add(w + "_mean", ", mean of per-batch norms", true);
    }
  }
  const std::string stem = fmt::format("e2_{}_L{}", what == "attention" ? "attn" : (what == "FFN W1" ? "w1" : "w2"), L);
  return figure(ctx, chart, stem);
}

}  // namespace

Section run_e2(const Context& ctx) {
  const Grids& g = ctx.grids;
  RunConfig key_config;
  key_config.model = probe_model(ctx);
  const nlohmann::json key = {{"model", config_to_toml(key_config)}, {"depths", g.e2_depths},
                              {"seeds", g.e2_seeds}, {"batch", g.e2_probe.batch},
                              {"context", g.e2_probe.context}, {"batches", g.e2_probe.batches}, {"version", 1}};
  const nlohmann::json data = cached(ctx, "e2_profile", key, [&] { return measure(ctx); });

  Section s{"E2", "Per-layer gradient profile at initialization (Figure 3(a,b))", "", {}};
  std::string& md = s.markdown;
  md += fmt::format("Same model as E1, L in {{{}}}, {} seeds x {} batches of {} x {} random tokens. \"norm of "
                    "batch-mean\" = ||mean over batches of the gradient||_F (the paper's expected gradient); \"mean "
                    "of norms\" = mean over batches of ||gradient||_F. Ratios: last layer / first layer, mean ± sd "
                    "over seeds.\n\n",
                    fmt::join(g.e2_depths, ", "), g.e2_seeds, g.e2_probe.batches, g.e2_probe.batch,
                    g.e2_probe.context);
  std::vector<std::vector<std::string>> rows;
  for (const int64_t L : g.e2_depths)
    for (const std::string& placement : kPlacements) {
      std::vector<std::string> row = {std::to_string(L), label(placement)};
      for (const std::string& m : kMeasures) row.push_back(pm(ratio(data[fmt::format("L{}", L)][placement], m), 2));
      rows.push_back(row);
    }
  md += md_table({"L", "placement", "W1 mean of norms", "W1 norm of mean", "W2 mean of norms", "W2 norm of mean",
                  "attention"}, rows) + "\n";
  for (const int64_t L : g.e2_depths) {
    const nlohmann::json& at = data[fmt::format("L{}", L)];
    md += profile_figure(ctx, at, L, "FFN W2") + profile_figure(ctx, at, L, "FFN W1") +
          profile_figure(ctx, at, L, "attention") + "\n";
  }

  const int64_t deepest = g.e2_depths.back();
  const nlohmann::json& at = data[fmt::format("L{}", deepest)];
  const Stats post_w1 = ratio(at["post"], "w1_nom"), post_w2 = ratio(at["post"], "w2_nom");
  const Stats pre_w1 = ratio(at["pre"], "w1_nom"), pre_w2 = ratio(at["pre"], "w2_nom");
  auto both = [](const Stats& a, const Stats& b, auto pred) { return pred(a.mean) && pred(b.mean); };
  auto either = [](const Stats& a, const Stats& b, auto pred) { return pred(a.mean) || pred(b.mean); };
  const auto grows = [](double r) { return r > 1.1; };
  const auto above_one = [](double r) { return r > 1.0; };
  const auto flat = [](double r) { return r >= 0.8 && r <= 1.25; };
  const auto falls = [](double r) { return r < 0.8; };
  const std::string measured_post = fmt::format("L {}: W1 {}, W2 {}", deepest, pm(post_w1, 2), pm(post_w2, 2));
  const std::string measured_pre = fmt::format("L {}: W1 {}, W2 {}", deepest, pm(pre_w1, 2), pm(pre_w2, 2));
  s.verdicts.push_back({"E2a", "Post-LN: the expected gradient grows with the layer index", "Figure 3(a): increasing",
                        measured_post + " (last/first, norm of batch-mean)",
                        "at the largest L: reproduced if both W1 and W2 ratios > 1.1; partially if either > 1.0",
                        outcome_of(both(post_w1, post_w2, grows), either(post_w1, post_w2, above_one))});
  s.verdicts.push_back({"E2b", "Pre-LN: the expected gradient is almost the same in every layer",
                        "Figure 3(b): flat", measured_pre + " (last/first, norm of batch-mean)",
                        "reproduced if both ratios are in [0.8, 1.25]; partially if either is",
                        outcome_of(both(pre_w1, pre_w2, flat), either(pre_w1, pre_w2, flat))});
  s.verdicts.push_back({"E2c", "Later finding (NormFormer, Mix-LN): Pre-LN gradients decrease toward the top",
                        "early layers larger", measured_pre + " (last/first, norm of batch-mean)",
                        "reproduced if both ratios < 0.8; partially if either is",
                        outcome_of(both(pre_w1, pre_w2, falls), either(pre_w1, pre_w2, falls))});
  return s;
}

}  // namespace normlab::xiong
