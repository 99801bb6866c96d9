// E1: Theorem 1 (the last layer's FFN W2 gradient at init vs depth) and Lemma 2 (the scale of the
// residual stream), measured in this process on random tokens.
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/config.h"
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
  // version 2: the final LayerNorm's two factors (final_ln_*), and the theory setting's input
  // rescaling that accounts for a fixed sinusoidal table.
  const nlohmann::json key = {{"model", config_fingerprint_text(key_config)}, {"depths", g.e1_depths},
                              {"seeds", g.e1_seeds}, {"batch", g.e1_probe.batch},
                              {"context", g.e1_probe.context}, {"batches", g.e1_probe.batches}, {"version", 2}};
  return cached(ctx, "e1_" + norm_type, key, [&] {
    nlohmann::json value = measure_theorem1(base, g.e1_probe, g.e1_depths, g.e1_seeds);
    value["theory"] = measure_theorem1(theory, theory_probe, g.e1_depths, g.e1_seeds);
    return value;
  });
}

Interval theorem1_exponent(const nlohmann::json& probe, const std::string& placement,
                           const std::vector<int64_t>& depths, bool theory, int64_t fit_from) {
  const nlohmann::json& rows = (theory ? probe["theory"][placement] : probe[placement])[kW2Last];
  std::vector<std::vector<double>> values;
  for (const auto& row : rows) values.push_back(row.get<std::vector<double>>());
  return exponent_interval(values, depths, fit_from);
}

namespace {

// Per depth: the mean [95% t-interval] over seeds of rows [seed][depth].
std::vector<Interval> per_depth_intervals(const std::vector<std::vector<double>>& rows) {
  std::vector<Interval> out;
  for (size_t i = 0; i < (rows.empty() ? 0 : rows.front().size()); ++i) {
    std::vector<double> v;
    for (const auto& row : rows) v.push_back(row[i]);
    out.push_back(mean_interval(v));
  }
  return out;
}

// A table row of local slopes: the cell under L_i is the slope from L_{i-1} to L_i ("-" under the first).
std::vector<std::string> local_slope_cells(const std::vector<double>& slopes) {
  std::vector<std::string> cells = {"-"};
  for (const double v : slopes) cells.push_back(num(v, 2));
  return cells;
}

// Table and figure of the last-layer W2 gradient norm vs L, with the local slopes and the fitted
// exponents over L >= fit_from and over every depth.
std::string gradient_vs_depth(const Context& ctx, const nlohmann::json& probe) {
  const Grids& g = ctx.grids;
  std::vector<std::vector<std::string>> rows;
  Chart chart{.title = "Theorem 1: last-layer FFN W2 gradient norm at init", .xlabel = "layers L",
              .ylabel = "||dL/dW2||_F", .log_y = true, .log_x = true};
  for (const std::string& placement : kPlacements) {
    ChartSeries series{.title = placement_label(placement), .color = color_of(placement), .markers = true};
    std::vector<std::string> row = {placement_label(placement), "norm"};
    const std::vector<Interval> m = per_depth_intervals(seed_rows(probe, placement, kW2Last));
    for (size_t i = 0; i < m.size(); ++i) {
      row.push_back(interval_text(m[i]));
      series.points.emplace_back(static_cast<double>(g.e1_depths[i]), m[i].estimate);
      series.y_err.push_back((m[i].high - m[i].low) / 2);
    }
    row.push_back(interval_text(fitted_exponent(probe, placement, kW2Last, g.e1_fit_from), 2));
    row.push_back(interval_text(fitted_exponent(probe, placement, kW2Last, g.e1_depths.front()), 2));
    rows.push_back(row);
    std::vector<std::string> slopes = {placement_label(placement), "local slope"};
    for (const std::string& c : local_slope_cells(probe_local_slopes(probe, placement, kW2Last))) slopes.push_back(c);
    slopes.insert(slopes.end(), {"-", "-"});
    rows.push_back(slopes);
    chart.series.push_back(series);
  }
  if (chart.series.size() == 2 && chart.series.back().points.size() > 1) {  // L^-1/2 through Pre-LN's first point
    ChartSeries ref{.title = "L^-1/2 (reference)", .color = 8, .dash = 2};
    const auto [x0, y0] = chart.series.back().points.front();
    for (const int64_t L : g.e1_depths)
      ref.points.emplace_back(static_cast<double>(L), y0 * std::sqrt(x0 / static_cast<double>(L)));
    chart.series.push_back(ref);
  }
  std::vector<std::string> header = {"placement", "row"};
  for (const int64_t L : g.e1_depths) header.push_back(fmt::format("L={}", L));
  header.push_back(fmt::format("exponent, {}", fit_range_text(g.e1_depths, g.e1_fit_from)));
  header.push_back(fmt::format("exponent, {}", fit_range_text(g.e1_depths, g.e1_depths.front())));
  return md_table(header, rows) + "\n" + figure(ctx, chart, "e1_w2_grad_vs_depth") + "\n";
}

// The exponent Lemma 2's Pre-LN band predicts for ||x_L|| = sqrt((1 + c L) d) over the fit range.
double band_exponent(const std::vector<int64_t>& depths, int64_t fit_from, double c) {
  std::vector<double> x, y;
  for (const size_t i : fit_indices(depths, fit_from)) {
    x.push_back(static_cast<double>(depths[i]));
    y.push_back(std::sqrt(1.0 + c * x.back()));
  }
  return loglog_slope(x, y);
}

// rows a / rows b, seed by seed: the proof's product ||dLoss/dy|| / ||x|| (up to ||ReLU(h W1)|| sqrt(d)).
std::vector<std::vector<double>> ratio_rows(const std::vector<std::vector<double>>& a,
                                            const std::vector<std::vector<double>>& b) {
  std::vector<std::vector<double>> out = a;
  for (size_t s = 0; s < out.size(); ++s)
    for (size_t i = 0; i < out[s].size(); ++i) out[s][i] /= b[s][i];
  return out;
}

// The two factors Theorem 1's proof multiplies, at the last LayerNorm, per placement and depth.
std::string final_norm_factors_table(const Context& ctx, const nlohmann::json& probe) {
  const Grids& g = ctx.grids;
  const std::string pre_input = fmt::format("+0.5 (sqrt(L); Lemma 2's band sqrt(1 + cL), c in [1/2, 3/2]: {} .. {})",
                                            num(band_exponent(g.e1_depths, g.e1_fit_from, 0.5), 2),
                                            num(band_exponent(g.e1_depths, g.e1_fit_from, 1.5), 2));
  std::vector<std::vector<std::string>> rows;
  for (const std::string& placement : kPlacements) {
    const auto input = seed_rows(probe, placement, kFinalLnInput);
    const auto grad = seed_rows(probe, placement, kFinalLnOutputGrad);
    const std::string w2 = interval_text(fitted_exponent(probe, placement, kW2Last, g.e1_fit_from), 2);
    const struct { std::string what; std::vector<std::vector<double>> values; std::string theory; } lines[] = {
        {"||x||_F / sqrt(rows), LN input", input, placement == "pre" ? pre_input : "0 (Lemma 2: a fixed scale)"},
        {"||dLoss/dy||_F, LN output", grad, "0 (the head sees a unit-scale LN output)"},
        {"ratio grad / input (the proof's product)", ratio_rows(grad, input), "the W2 gradient's exponent, " + w2}};
    for (const auto& line : lines) {
      std::vector<std::string> row = {placement_label(placement), line.what};
      for (const Interval& m : per_depth_intervals(line.values)) row.push_back(num(m.estimate));
      row.push_back(interval_text(exponent_interval(line.values, g.e1_depths, g.e1_fit_from), 2));
      row.push_back(line.theory);
      rows.push_back(row);
    }
  }
  std::vector<std::string> header = {"placement", "factor"};
  for (const int64_t L : g.e1_depths) header.push_back(fmt::format("L={}", L));
  header.push_back(fmt::format("exponent, {}", fit_range_text(g.e1_depths, g.e1_fit_from)));
  header.push_back("theory's exponent");
  return md_table(header, rows) + "\n";
}

// Lemma 2 for Pre-LN: the residual stream's growth per block against the band [1 + l/2, 1 + 3l/2].
std::string lemma2_pre(const Context& ctx, const nlohmann::json& probe, Section& s) {
  const std::vector<double> theory = column_means(probe["theory"]["pre"]["residual"]);
  const std::vector<double> model = column_means(probe["pre"]["residual"]);
  Chart band{.title = fmt::format("Lemma 2: Pre-LN residual stream at init (L = {})", ctx.grids.e1_depths.back()),
             .xlabel = "blocks passed l", .ylabel = "||x_l||^2 / d"};
  ChartSeries th{.title = "Pre-LN, theory setting", .color = 2, .markers = true};
  ChartSeries df{.title = "Pre-LN, suite model", .color = 2, .dash = 2, .markers = true};
  ChartSeries lo{.title = "band 1 + l/2", .color = 8, .dash = 2}, hi{.title = "band 1 + 3l/2", .color = 8, .dash = 2};
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

namespace {

std::string e1_intro(const Context& ctx, const ModelConfig& base) {
  const Grids& g = ctx.grids;
  return fmt::format(
      "Model ({}): {}-dimensional decoder-only LM, {} heads, ReLU FFN of width {}, Xavier init, token embeddings {}, "
      "{} positions, tied output, vocabulary {}; random tokens. Measured: ||dLoss/dW2||_F of the last layer's FFN "
      "(mean over {} batches of {} x {} tokens) for {} seeds at L = {}. Cells: mean [95% t-interval] over seeds; "
      "local slope: the log-log slope of the seed mean from the previous depth to this one; exponents: "
      "least-squares slope of log(seed-mean norm) on log(L), with a bootstrap interval over seeds, fitted over {} "
      "(the verdicts) and over every depth (beside it). Theorem 1 bounds the norm from above, so E1b tests \"decays "
      "with L\" one-sided.\n\n",
      g.probe_config, base.d_model, base.n_heads, base.d_ff,
      base.embedding_scale == EmbeddingScale::SqrtD ? "times sqrt(d) (fairseq)" : "unscaled",
      enum_name(base.position_embedding), base.vocab_size, g.e1_probe.batches, g.e1_probe.batch, g.e1_probe.context,
      g.e1_seeds, fmt::join(g.e1_depths, ", "), fit_range_text(g.e1_depths, g.e1_fit_from));
}

// E1a and E1b, with their fits stated in the text.
std::string theorem1_verdicts(const Context& ctx, const nlohmann::json& probe, Section& s) {
  const Grids& g = ctx.grids;
  const Verdict post = e1a_verdict(probe, g.e1_fit_from), pre = e1b_verdict(probe, g.e1_fit_from);
  s.verdicts.push_back(post);
  s.verdicts.push_back(pre);
  return fmt::format("Fitted exponents over {}: Post-LN {}, Pre-LN {}; over every depth ({}): Post-LN {}, Pre-LN {}. "
                     "Pre-LN: {}.\n\n",
                     fit_range_text(g.e1_depths, g.e1_fit_from), interval_text(post.estimate, 2),
                     interval_text(pre.estimate, 2), fit_range_text(g.e1_depths, g.e1_depths.front()),
                     interval_text(fitted_exponent(probe, "post", kW2Last, g.e1_depths.front()), 2),
                     interval_text(fitted_exponent(probe, "pre", kW2Last, g.e1_depths.front()), 2),
                     steeper_than_half_note(pre.estimate));
}

std::string factors_text(const Context& ctx, const nlohmann::json& probe) {
  const Grids& g = ctx.grids;
  std::string md =
      "**The proof's two factors.** ||dLoss/dW2|| of the last FFN is about ||ReLU(h W1)|| ||dLoss/dy|| sqrt(d) / "
      "||x_row||, x the input and y the output of the last LayerNorm before the head: Pre-LN's final_norm; Post-LN "
      "has no final norm, so there it is the last block's norm2, the LayerNorm after the FFN residual (its input "
      "is h + FFN(h), Lemma 2's x_{L,5}). Input: ||x||_F / sqrt(rows) over the B*T rows (the root-mean-square row "
      "norm; its square / d is Lemma 2's ||x||^2 / d); output: ||dLoss/dy||_F of the whole batch; both means over "
      "batches, cells the mean over seeds. The ratio row is the proof's product up to ||ReLU(h W1)|| sqrt(d): its "
      "exponent should match the W2 gradient's.\n\n";
  md += final_norm_factors_table(ctx, probe);
  md += fmt::format("Theory setting, exponents over {}: Pre-LN input {}, output gradient {}; Post-LN input {}, "
                    "output gradient {}.\n\n",
                    fit_range_text(g.e1_depths, g.e1_fit_from),
                    interval_text(fitted_exponent(probe, "pre", kFinalLnInput, g.e1_fit_from, true), 2),
                    interval_text(fitted_exponent(probe, "pre", kFinalLnOutputGrad, g.e1_fit_from, true), 2),
                    interval_text(fitted_exponent(probe, "post", kFinalLnInput, g.e1_fit_from, true), 2),
                    interval_text(fitted_exponent(probe, "post", kFinalLnOutputGrad, g.e1_fit_from, true), 2));
  return md;
}

}  // namespace

Section run_e1(const Context& ctx) {
  const Grids& g = ctx.grids;
  const nlohmann::json probe = theorem1_probe(ctx, "layernorm");
  const ModelConfig base = probe_model(ctx);
  Section s{"E1", "Theorem 1: the last layer's gradient at initialization vs depth", "", {}};
  std::string& md = s.markdown;
  md += e1_intro(ctx, base);
  md += gradient_vs_depth(ctx, probe);
  md += theorem1_verdicts(ctx, probe, s);
  md += factors_text(ctx, probe);
  md += "**Lemma 2.** Pre-LN: ||x_l||^2/d of the stream after l blocks should lie in [1 + l/2, 1 + 3l/2] "
        "(unit-variance input). Post-LN: ||x_{l,5}||^2/d = 1.5 for x_{l,5} = h + FFN(h), h the LayerNorm output "
        "(measured with each layer's initial FFN weights on LayerNorm-normalized random inputs). The lemma assumes "
        "FFN width d with N(0, 1/d) weights and unit-variance input (\"theory setting\": d_ff = d, untied output, "
        "token embeddings rescaled so that tokens plus positions have mean square 1 per coordinate; a fixed "
        "sinusoidal table, mean square 1/2, is left as it is and the tokens get the other 1/2); the suite's model is "
        "shown next to it.\n\n";
  md += lemma2_pre(ctx, probe, s);
  md += lemma2_post(probe, base, s);
  md += fmt::format("In the theory setting the W2 gradient's fitted exponents over {} are Post-LN {}, Pre-LN {}.\n",
                    fit_range_text(g.e1_depths, g.e1_fit_from),
                    interval_text(fitted_exponent(probe, "post", kW2Last, g.e1_fit_from, true), 2),
                    interval_text(fitted_exponent(probe, "pre", kW2Last, g.e1_fit_from, true), 2));
  return s;
}

}  // namespace normlab::xiong
