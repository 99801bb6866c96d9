// E1: Theorem 1 (the last layer's FFN W2 gradient at init vs depth) and Lemma 2 (the scale of the
// residual stream), measured in this process on random tokens.
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "experiments/config.h"
#include "xiong/experiments.h"

namespace normlab::xiong {

namespace {

const std::vector<std::string> kPlacements = {"post", "pre"};

// Lemma 2's Post-LN value for an FFN with Xavier weights: h unit variance, a = W1 h has variance
// d sigma1^2, E relu(a)^2 = d sigma1^2 / 2, E y_i^2 = d_ff sigma2^2 d sigma1^2 / 2 with
// sigma^2 = 2 / (d + d_ff): ||h + y||^2 / d = 1 + d_ff d (2 / (d + d_ff))^2 / 2 (1.5 when d_ff = d).
double lemma2_post_prediction(const ModelConfig& m) {
  const double d = static_cast<double>(m.d_model), f = static_cast<double>(m.d_ff);
  return 1.0 + f * d * (2.0 / (d + f)) * (2.0 / (d + f)) / 2.0;
}

nlohmann::json measure(const Context& ctx, const ModelConfig& base, const ProbeBatch& probe) {
  const Grids& g = ctx.grids;
  nlohmann::json out;
  for (const std::string& placement : kPlacements) {
    nlohmann::json w2_last = nlohmann::json::array(), residual = nlohmann::json::array(),
                   x5 = nlohmann::json::array();
    for (int seed = 1; seed <= g.e1_seeds; ++seed) {
      std::vector<double> per_depth;
      for (const int64_t L : g.e1_depths) {
        const ModelConfig c = probe_model(base, placement, L, seed);
        const LayerGrads r = measure_layer_grads(c, probe, 1000 + static_cast<uint64_t>(seed));
        per_depth.push_back(r.w2_mean_norm.back());
        if (L == g.e1_depths.back()) {
          residual.push_back(r.residual_sq_per_d);
          x5.push_back(r.post_ffn_sum_sq_per_d);
        }
      }
      w2_last.push_back(per_depth);
    }
    out[placement] = {{"w2_last", w2_last}, {"residual", residual}, {"x5", x5}};
  }
  return out;
}

std::vector<double> column_means(const nlohmann::json& rows) {
  std::vector<double> mean;
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) {
      if (mean.size() <= i) mean.push_back(0.0);
      mean[i] += row[i].get<double>() / static_cast<double>(rows.size());
    }
  return mean;
}

}  // namespace

ModelConfig probe_model(const Context& ctx, const std::vector<std::string>& extra) {
  std::vector<std::string> overrides = ctx.grids.probe_overrides;
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  return load_config(ctx.config_path(ctx.grids.probe_config), overrides).model;
}

nlohmann::json theorem1_probe(const Context& ctx, const std::string& norm_type) {
  const Grids& g = ctx.grids;
  const ModelConfig base = probe_model(ctx, {"model.norm_type=" + norm_type});
  // The theory's setting: FFN width d (Lemma 2's N(0, 1/d) weights) and unit-variance input; the
  // output projection untied so that rescaling the input embedding leaves the logits alone.
  ModelConfig theory = base;
  theory.d_ff = base.d_model;
  theory.tie_embeddings = false;
  ProbeBatch theory_probe = g.e1_probe;
  theory_probe.unit_variance_input = true;
  RunConfig key_config;
  key_config.model = base;
  const nlohmann::json key = {{"model", config_to_toml(key_config)}, {"depths", g.e1_depths},
                              {"seeds", g.e1_seeds}, {"batch", g.e1_probe.batch},
                              {"context", g.e1_probe.context}, {"batches", g.e1_probe.batches}, {"version", 1}};
  return cached(ctx, "e1_" + norm_type, key, [&] {
    nlohmann::json value = measure(ctx, base, g.e1_probe);
    value["theory"] = measure(ctx, theory, theory_probe);
    value["depths"] = g.e1_depths;
    return value;
  });
}

Interval theorem1_exponent(const nlohmann::json& probe, const std::string& placement,
                           const std::vector<int64_t>& depths, bool theory) {
  const nlohmann::json& rows = (theory ? probe["theory"][placement] : probe[placement])["w2_last"];
  const std::vector<double> x(depths.begin(), depths.end());
  return bootstrap(static_cast<int>(rows.size()), [&](const std::vector<int>& seeds) {
    std::vector<double> mean(depths.size(), 0.0);
    for (const int s : seeds)
      for (size_t i = 0; i < depths.size(); ++i)
        mean[i] += rows[static_cast<size_t>(s)][i].get<double>() / static_cast<double>(seeds.size());
    return loglog_slope(x, mean);
  });
}

namespace {

// Table and figure of the last-layer W2 gradient norm vs L, with the fitted exponents.
std::string gradient_vs_depth(const Context& ctx, const nlohmann::json& probe) {
  const Grids& g = ctx.grids;
  std::vector<std::vector<std::string>> rows;
  Chart chart{.title = "Theorem 1: last-layer FFN W2 gradient norm at init", .xlabel = "layers L",
              .ylabel = "||dL/dW2||_F", .log_y = true, .log_x = true};
  for (const std::string& placement : kPlacements) {
    ChartSeries series{.title = placement_label(placement), .color = color_of(placement), .markers = true};
    std::vector<std::string> row = {placement_label(placement)};
    for (size_t i = 0; i < g.e1_depths.size(); ++i) {
      std::vector<double> v;
      for (const auto& per_seed : probe[placement]["w2_last"]) v.push_back(per_seed[i].get<double>());
      const Interval m = mean_interval(v);
      row.push_back(interval_text(m));
      series.points.emplace_back(static_cast<double>(g.e1_depths[i]), m.estimate);
      series.y_err.push_back((m.high - m.low) / 2);
    }
    row.push_back(interval_text(theorem1_exponent(probe, placement, g.e1_depths), 2));
    rows.push_back(row);
    chart.series.push_back(series);
  }
  if (chart.series.size() == 2 && chart.series.back().points.size() > 1) {  // L^-1/2 through Pre-LN's first point
    ChartSeries ref{.title = "L^-1/2 (reference)", .color = 8, .dashed = true};
    const auto [x0, y0] = chart.series.back().points.front();
    for (const int64_t L : g.e1_depths)
      ref.points.emplace_back(static_cast<double>(L), y0 * std::sqrt(x0 / static_cast<double>(L)));
    chart.series.push_back(ref);
  }
  std::vector<std::string> header = {"placement"};
  for (const int64_t L : g.e1_depths) header.push_back(fmt::format("L={}", L));
  header.push_back("fitted exponent");
  return md_table(header, rows) + "\n" + figure(ctx, chart, "e1_w2_grad_vs_depth") + "\n";
}

// Lemma 2 for Pre-LN: the residual stream's growth per block against the band [1 + l/2, 1 + 3l/2].
std::string lemma2_pre(const Context& ctx, const nlohmann::json& probe, Section& s) {
  const std::vector<double> theory = column_means(probe["theory"]["pre"]["residual"]);
  const std::vector<double> model = column_means(probe["pre"]["residual"]);
  Chart band{.title = fmt::format("Lemma 2: Pre-LN residual stream at init (L = {})", ctx.grids.e1_depths.back()),
             .xlabel = "blocks passed l", .ylabel = "||x_l||^2 / d"};
  ChartSeries th{.title = "Pre-LN, theory setting", .color = 2, .markers = true};
  ChartSeries df{.title = "Pre-LN, suite model", .color = 2, .dashed = true, .markers = true};
  ChartSeries lo{.title = "band 1 + l/2", .color = 8, .dashed = true}, hi{.title = "band 1 + 3l/2", .color = 8, .dashed = true};
  std::vector<std::vector<std::string>> rows;
  for (size_t l = 0; l < theory.size(); ++l) {
    const double x = static_cast<double>(l);
    th.points.emplace_back(x, theory[l]);
    if (l < model.size()) df.points.emplace_back(x, model[l]);
    lo.points.emplace_back(x, 1 + x / 2);
    hi.points.emplace_back(x, 1 + 1.5 * x);
    if (l == 1 || l == theory.size() / 2 || l + 1 == theory.size())
      rows.push_back({std::to_string(l), fmt::format("[{}, {}]", num(1 + x / 2), num(1 + 1.5 * x)), num(theory[l]),
                      l < model.size() ? num(model[l]) : "-"});
  }
  band.series = {th, df, lo, hi};
  const nlohmann::json& per_seed = probe["theory"]["pre"]["residual"];
  Verdict v{"E1c", "Lemma 2, Pre-LN: (1 + l/2) d <= E||x_l||^2 <= (1 + 3l/2) d", "growth between 0.5 and 1.5 per block",
            "growth of ||x_l||^2/d per block (least-squares slope, theory setting)",
            bootstrap(static_cast<int>(per_seed.size()), [&](const std::vector<int>& seeds) {
              nlohmann::json pick = nlohmann::json::array();
              for (const int i : seeds) pick.push_back(per_seed[static_cast<size_t>(i)]);
              const std::vector<double> m = column_means(pick);
              std::vector<double> idx;
              for (size_t l = 0; l < m.size(); ++l) idx.push_back(static_cast<double>(l));
              return linear_slope(idx, m);
            })};
  v.decide_equivalence(1.0, 0.5);
  s.verdicts.push_back(v);
  return md_table({"l", "band", "theory setting", "suite model"}, rows) + "\n" +
         figure(ctx, band, "e1_lemma2_pre_residual") + "\n";
}

// Lemma 2 for Post-LN: ||x_{l,5}||^2 / d = 1.5, one value per seed (mean over layers).
std::string lemma2_post(const nlohmann::json& probe, const ModelConfig& base, Section& s) {
  auto per_seed = [](const nlohmann::json& seeds) {
    std::vector<double> out;
    for (const auto& seed : seeds) {
      const std::vector<double> v = seed.get<std::vector<double>>();
      double sum = 0;
      for (const double x : v) sum += x;
      out.push_back(v.empty() ? NAN : sum / static_cast<double>(v.size()));
    }
    return out;
  };
  const std::vector<double> theory = per_seed(probe["theory"]["post"]["x5"]), model = per_seed(probe["post"]["x5"]);
  Verdict v{"E1d", "Lemma 2, Post-LN: E||x_{l,5}||^2 = 1.5 d", "1.5 d", "||x_{l,5}||^2 / d (theory setting)",
            mean_interval(theory)};
  v.decide_equivalence(1.5, 0.1);
  s.verdicts.push_back(v);
  return fmt::format("Post-LN ||x_{{l,5}}||^2/d, mean over layers per seed: theory setting {} (lemma: 1.5), suite "
                     "model {} (the lemma's argument with Xavier d_ff = {}: {}).\n\n",
                     mean_ci_text(theory), mean_ci_text(model), base.d_ff, num(lemma2_post_prediction(base)));
}

}  // namespace

Section run_e1(const Context& ctx) {
  const Grids& g = ctx.grids;
  const nlohmann::json probe = theorem1_probe(ctx, "layernorm");
  const ModelConfig base = probe_model(ctx);
  Section s{"E1", "Theorem 1: the last layer's gradient at initialization vs depth", "", {}};
  std::string& md = s.markdown;
  md += fmt::format("Model ({}): {}-dimensional decoder-only LM, {} heads, ReLU FFN of width {}, Xavier init, token "
                    "embeddings {}, tied output, vocabulary {}; random tokens. Measured: ||dLoss/dW2||_F of the last "
                    "layer's FFN (mean over {} batches of {} x {} tokens) for {} seeds. Cells: mean [95% t-interval] "
                    "over seeds; exponents: least-squares slope of log(norm) on log(L) of the seed mean, with a "
                    "bootstrap interval over seeds.\n\n",
                    g.probe_config, base.d_model, base.n_heads, base.d_ff,
                    base.embedding_scale == EmbeddingScale::SqrtD ? "times sqrt(d) (fairseq)" : "unscaled", base.vocab_size,
                    g.e1_probe.batches, g.e1_probe.batch, g.e1_probe.context, g.e1_seeds);
  md += gradient_vs_depth(ctx, probe);
  Verdict post{"E1a", "Post-LN: last-layer W2 gradient independent of L", "O(d sqrt(ln d)): exponent 0",
               "fitted exponent of L, Post-LN", theorem1_exponent(probe, "post", g.e1_depths)};
  post.decide_equivalence(0.0, 0.25);
  post.note = "margin: half-way to the Pre-LN law's -0.5";
  Verdict pre{"E1b", "Pre-LN: last-layer W2 gradient shrinks like 1/sqrt(L)", "O(d sqrt(ln d / L)): exponent -0.5",
              "fitted exponent of L, Pre-LN", theorem1_exponent(probe, "pre", g.e1_depths)};
  pre.decide_equivalence(-0.5, 0.25);
  pre.note = "margin: half-way to flat (0) and to -1";
  s.verdicts.push_back(post);
  s.verdicts.push_back(pre);

  md += "**Lemma 2.** Pre-LN: ||x_l||^2/d of the stream after l blocks should lie in [1 + l/2, 1 + 3l/2] "
        "(unit-variance input). Post-LN: ||x_{l,5}||^2/d = 1.5 for x_{l,5} = h + FFN(h), h the LayerNorm output "
        "(measured with each layer's initial FFN weights on LayerNorm-normalized random inputs). The lemma assumes "
        "FFN width d with N(0, 1/d) weights and unit-variance input (\"theory setting\": d_ff = d, embeddings "
        "rescaled to unit variance, untied output); the suite's model is shown next to it.\n\n";
  md += lemma2_pre(ctx, probe, s);
  md += lemma2_post(probe, base, s);
  md += fmt::format("In the theory setting the fitted exponents are Post-LN {}, Pre-LN {}.\n",
                    interval_text(theorem1_exponent(probe, "post", g.e1_depths, true), 2),
                    interval_text(theorem1_exponent(probe, "pre", g.e1_depths, true), 2));
  return s;
}

}  // namespace normlab::xiong
