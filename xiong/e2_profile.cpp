// E2: the per-layer gradient profile at initialization (the paper's Figure 3(a,b)): W1, W2 and
// attention gradient norms per layer, as the mean of per-batch norms and as the norm of the
// batch-mean gradient ("the scale of the expected gradient").
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/config.h"
#include "xiong/experiments.h"

namespace normlab::xiong {

namespace {

const std::vector<std::string> kPlacements = {"post", "pre"};
// The probed stacks: each placement causal, and with bidirectional attention ("-bidir",
// model.arch = "encoder"): v3 explained Pre-LN's falling profile by "a
// decoder-only stack"; the bidirectional rows test that (issue 35).
const std::vector<std::string> kArms = {"post", "pre", "post-bidir", "pre-bidir"};
std::string placement_of(const std::string& arm) { return arm.substr(0, arm.find('-')); }
const std::vector<std::string> kMeasures = {"w1_mean", "w1_nom", "w2_mean", "w2_nom", "attn"};

nlohmann::json measure(const Context& ctx) {
  const Grids& g = ctx.grids;
  const ModelConfig base = probe_model(ctx);
  nlohmann::json out;
  for (const int64_t L : g.e2_depths)
    for (const std::string& arm : kArms) {
      nlohmann::json seeds = nlohmann::json::array();
      for (int seed = 1; seed <= g.e2_seeds; ++seed) {
        ModelConfig c = probe_model(base, placement_of(arm), L, seed);
        c.arch = arm == placement_of(arm) ? ModelArch::Decoder : ModelArch::Encoder;
        const LayerGrads r = measure_layer_grads(c, g.e2_probe, 2000 + static_cast<uint64_t>(seed));
        seeds.push_back({{"w1_mean", r.w1_mean_norm}, {"w1_nom", r.w1_norm_of_mean}, {"w2_mean", r.w2_mean_norm},
                         {"w2_nom", r.w2_norm_of_mean}, {"attn", r.attn_mean_norm}});
      }
      out[fmt::format("L{}", L)][arm] = seeds;
    }
  return out;
}

// Per seed: the last layer's value and the first layer's (for log_ratio).
std::pair<std::vector<double>, std::vector<double>> last_and_first(const nlohmann::json& seeds,
                                                                    const std::string& measure) {
  std::vector<double> last, first;
  for (const auto& s : seeds) {
    const auto v = s[measure].get<std::vector<double>>();
    last.push_back(v.empty() ? NAN : v.back());
    first.push_back(v.empty() ? NAN : v.front());
  }
  return {last, first};
}

Interval ratio(const nlohmann::json& seeds, const std::string& measure) {
  const auto [last, first] = last_and_first(seeds, measure);
  return log_ratio(last, first);
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
      ChartSeries s{.title = placement_label(placement) + kind, .color = color_of(placement), .dash = dashed ? 2 : 1, .markers = true};
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

namespace {

void add_profile_verdicts(const nlohmann::json& at, int64_t L, Section& s) {
  const std::string where = fmt::format("last / first layer at L = {}, norm of the batch-mean gradient", L);
  for (const std::string w : {"W1", "W2"}) {
    const std::string measure = w == std::string("W1") ? "w1_nom" : "w2_nom";
    Verdict grows{"E2a." + w, "Post-LN: the expected gradient grows with the layer index (" + w + ")",
                  "Figure 3(a): increasing", where + " (geometric mean over seeds)", ratio(at["post"], measure)};
    grows.decide_direction(1.0, Side::Above);
    Verdict flat{"E2b." + w, "Pre-LN: the expected gradient is almost the same in every layer (" + w + ")",
                 "Figure 3(b): flat", where, ratio(at["pre"], measure)};
    flat.decide_within(0.8, 1.25);
    Verdict falls{"E2c." + w, "Later work (NormFormer, Mix-LN): Pre-LN gradients fall toward the top (" + w + ")",
                  "early layers get larger gradients", where, ratio(at["pre"], measure)};
    falls.decide_direction(1.0, Side::Below);
    s.verdicts.insert(s.verdicts.end(), {grows, flat, falls});
  }
}

// Exploratory (v4): is Pre-LN's profile flat in a bidirectional stack of the same depth?
void add_bidirectional_verdicts(const nlohmann::json& at, int64_t L, Section& s) {
  const std::string where = fmt::format("last / first layer at L = {}, bidirectional attention, norm of the "
                                        "batch-mean gradient", L);
  for (const std::string w : {"W1", "W2"}) {
    const std::string measure = w == std::string("W1") ? "w1_nom" : "w2_nom";
    Verdict flat{"E2b.bidir." + w, "Pre-LN, bidirectional stack: the expected gradient is almost the same in every "
                 "layer (" + w + "); tests v3's 'decoder-only' explanation of E2b", "Figure 3(b) (an encoder-decoder)",
                 where, ratio(at["pre-bidir"], measure)};
    flat.decide_within(0.8, 1.25);
    s.verdicts.push_back(flat);
  }
}

}  // namespace

Section run_e2(const Context& ctx) {
  const Grids& g = ctx.grids;
  RunConfig key_config;
  key_config.model = probe_model(ctx);
  const nlohmann::json key = {{"model", config_fingerprint_text(key_config)}, {"depths", g.e2_depths},
                              {"seeds", g.e2_seeds}, {"batch", g.e2_probe.batch},
                              {"context", g.e2_probe.context}, {"batches", g.e2_probe.batches}, {"version", 3}};
  const nlohmann::json data = cached(ctx, "e2_profile", key, [&] { return measure(ctx); });

  Section s{"E2", "Per-layer gradient profile at initialization (Figure 3(a,b))", "", {}};
  std::string& md = s.markdown;
  md += fmt::format("Same model as E1, L in {{{}}}, {} seeds x {} batches of {} x {} random tokens. \"norm of "
                    "batch-mean\" = ||mean over batches of the gradient||_F (the paper's expected gradient); \"mean "
                    "of norms\" = mean over batches of ||gradient||_F. Cells: last layer / first layer, geometric mean "
                    "over seeds [95% t-interval of the log ratio].\n\n",
                    fmt::join(g.e2_depths, ", "), g.e2_seeds, g.e2_probe.batches, g.e2_probe.batch,
                    g.e2_probe.context);
  std::vector<std::vector<std::string>> rows;
  for (const int64_t L : g.e2_depths)
    for (const std::string& arm : kArms) {
      std::vector<std::string> row = {std::to_string(L),
                                      placement_label(placement_of(arm)) + (arm == placement_of(arm) ? "" : ", bidirectional")};
      for (const std::string& m : kMeasures) row.push_back(interval_text(ratio(data[fmt::format("L{}", L)][arm], m), 2));
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
  add_profile_verdicts(data[fmt::format("L{}", deepest)], deepest, s);
  const int64_t shallowest = g.e2_depths.front();
  add_bidirectional_verdicts(data[fmt::format("L{}", shallowest)], shallowest, s);
  return s;
}

}  // namespace normlab::xiong
