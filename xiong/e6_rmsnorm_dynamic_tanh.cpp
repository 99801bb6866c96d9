// E6: RMSNorm vs LayerNorm: Theorem 1 with RMSNorm, the Post-LN warmup effect with RMSNorm, and the
// measured step time of each norm (end to end, and the norm op alone), timed side by side; and
// Dynamic Tanh (Zhu et al. 2025) against LayerNorm in both placements, with and without warmup.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/config.h"
#include "xiong/e3_common.h"
#include "xiong/experiments.h"
#include "xiong/outcomes.h"

namespace normlab::xiong {

namespace {

// Step and norm-op times (ms) of equal models with LayerNorm and RMSNorm, alternating samples.
nlohmann::json measure_timing(const Context& ctx) {
  const Grids& g = ctx.grids;
  const RunConfig rc = load_config(ctx.config_path(g.copy_config));
  ModelConfig ln = rc.model, rms = rc.model;
  ln.vocab_size = rms.vocab_size = rc.data.copy_vocab;
  ln.norm_type = NormType::LayerNorm;
  rms.norm_type = NormType::RmsNorm;
  ProbeBatch probe{rc.train.batch_size, rc.train.context, 1, false};
  nlohmann::json out;
  for (const std::string placement : {"pre", "post"}) {
    ln.norm_placement = rms.norm_placement = enum_value<NormPlacement>(placement, "E6");
    RunConfig ln_run = rc, rms_run = rc;
    ln_run.model = ln;
    rms_run.model = rms;
    const auto ms = step_ms_samples({ln_run, rms_run}, probe, g.timing_warmup, g.timing_repeats);
    out["step_ms"][placement] = {{"layernorm", ms[0]}, {"rmsnorm", ms[1]}};
  }
  const int64_t rows = rc.train.batch_size * rc.train.context;
  const auto norm_ms = norm_ms_samples(ln, {NormType::LayerNorm, NormType::RmsNorm}, rows, 10 * g.timing_warmup, 20 * g.timing_repeats);
  out["norm_ms"] = {{"layernorm", norm_ms[0]}, {"rmsnorm", norm_ms[1]}, {"rows", rows}, {"dim", ln.d_model}};
  out["model"] = fmt::format("d {}, L {}, {} heads, FFN {}, batch {} x {}", ln.d_model, ln.n_layers, ln.n_heads,
                             ln.d_ff, rc.train.batch_size, rc.train.context);
  return out;
}

// LayerNorm time / RMSNorm time: ratio of the medians, bootstrap over the side-by-side samples.
Interval time_ratio(const std::vector<double>& layernorm, const std::vector<double>& rmsnorm) {
  return bootstrap(static_cast<int>(std::min(layernorm.size(), rmsnorm.size())), [&](const std::vector<int>& pick) {
    std::vector<double> a, b;
    for (const int i : pick) {
      a.push_back(layernorm[static_cast<size_t>(i)]);
      b.push_back(rmsnorm[static_cast<size_t>(i)]);
    }
    return median_of(a) / median_of(b);
  });
}

std::string timing_part(const Context& ctx, Section& s) {
  const Grids& g = ctx.grids;
  const nlohmann::json t = cached(ctx, "e6_timing", {{"config", g.copy_config}, {"repeats", g.timing_repeats},
                                                      {"version", 3}}, [&] { return measure_timing(ctx); });
  std::vector<std::vector<std::string>> rows;
  auto row = [&](const std::string& what, const nlohmann::json& pair) -> Interval {
    const auto a = pair["layernorm"].get<std::vector<double>>(), b = pair["rmsnorm"].get<std::vector<double>>();
    const Interval r = time_ratio(a, b);
    rows.push_back({what, num(median_of(a), 4), num(median_of(b), 4), interval_text(r)});
    return r;
  };
  const Interval pre = row("training step, pre", t["step_ms"]["pre"]);
  row("training step, post", t["step_ms"]["post"]);
  const Interval op = row(fmt::format("norm forward + backward, {} x {}", t["norm_ms"]["rows"].get<int64_t>(),
                                      t["norm_ms"]["dim"].get<int64_t>()), t["norm_ms"]);
  Verdict step{"E6b", "RMSNorm speeds up training end to end", "RMSNorm paper: 7%-64% faster",
               "step time LayerNorm / RMSNorm, Pre-LN (ratio of medians)", pre};
  step.decide_direction(1.0, Side::Above);
  Verdict norm{"E6c", "The RMSNorm op is faster than LayerNorm", "seed articles: 15-30% faster",
               "norm forward + backward time, LayerNorm / RMSNorm (ratio of medians)", op};
  norm.decide_direction(1.0, Side::Above);
  s.verdicts.insert(s.verdicts.end(), {step, norm});
  return fmt::format("Median wall time, same process, alternating LayerNorm and RMSNorm models ({}); ratio: "
                     "LayerNorm time / RMSNorm time (> 1: RMSNorm faster), bootstrap over the side-by-side "
                     "samples:\n\n", t["model"].get<std::string>()) +
         md_table({"what", "LayerNorm ms", "RMSNorm ms", "ratio [95% CI]"}, rows) + "\n";
}

TrainPoint arm(const std::string& placement, const std::string& norm, const std::string& lr, int64_t warmup) {
  return {placement, norm, "adam", lr, warmup, 1};
}

}  // namespace

std::vector<TrainPoint> e6_points(const Grids& g) {
  std::vector<TrainPoint> points;
  const auto add = [&](const std::string& placement, const std::string& norm, int64_t warmup) {
    for (const int seed : g.seeds) {
      TrainPoint t = arm(placement, norm, g.slice_lr, warmup);
      t.seed = seed;
      points.push_back(t);
    }
  };
  // Post-LN with each norm, and Pre-LN with LayerNorm and Dynamic Tanh, without and with the long
  // warmup (LayerNorm's arms are E3's).
  for (const std::string norm : {"rmsnorm", "layernorm", "dyt"})
    for (const std::string w : {"none", "long"}) add("post", norm, g.warmup_steps(w));
  for (const std::string norm : {"layernorm", "dyt"})
    for (const std::string w : {"none", "long"}) add("pre", norm, g.warmup_steps(w));
  return points;
}

Section run_e6(const Context& ctx, const TrainingResults& copy, bool train_part) {
  const Grids& g = ctx.grids;
  Section s{"E6", "RMSNorm and Dynamic Tanh vs LayerNorm", "", {}};
  const nlohmann::json ln = theorem1_probe(ctx, "layernorm"), rms = theorem1_probe(ctx, "rmsnorm");
  std::vector<std::vector<std::string>> rows;
  for (const std::string norm : {"layernorm", "rmsnorm"})
    for (const std::string p : {"post", "pre"})
      rows.push_back({norm, p, interval_text(theorem1_exponent(norm == std::string("layernorm") ? ln : rms, p,
                                                               g.e1_depths, false, g.e1_fit_from), 2)});
  s.markdown += fmt::format("Theorem 1's fitted exponent of L over L >= {} (E1's grid and seeds, bootstrap interval) for "
                            "each norm:\n\n", g.e1_fit_from) +
                md_table({"norm", "placement", "exponent [95% CI]"}, rows) + "\n";
  const std::string range = fmt::format(" over L >= {}", g.e1_fit_from);
  Verdict post{"E6a.post", "Theorem 1 with RMSNorm: Post-LN flat", "(not in the paper) exponent 0",
               "fitted exponent of L" + range + ", RMSNorm Post-LN",
               theorem1_exponent(rms, "post", g.e1_depths, false, g.e1_fit_from)};
  post.decide_equivalence(0.0, 0.25);
  Verdict pre{"E6a.pre", "Theorem 1 with RMSNorm: Pre-LN decays with L (an upper bound, as E1b)",
              "(not in the paper) O(1/sqrt(L)) bound", "fitted exponent of L" + range + ", RMSNorm Pre-LN",
              theorem1_exponent(rms, "pre", g.e1_depths, false, g.e1_fit_from)};
  pre.decide_direction(-0.25, Side::Below);
  pre.criterion = "upper bound, one-sided: " + pre.criterion;
  s.verdicts.insert(s.verdicts.end(), {post, pre});
  s.markdown += timing_part(ctx, s);
  if (!train_part) return s;

  const Baseline base = copy_baseline(ctx);
  const int64_t steps = load_config(ctx.config_path(g.copy_config)).train.steps;
  std::vector<std::vector<std::string>> wrows;
  for (const auto& placement_warmup : {std::pair{"post", "none"}, std::pair{"post", "long"}, std::pair{"pre", "none"},
                                       std::pair{"pre", "long"}}) {
    const char* p = placement_warmup.first;  // a plain variable: clang 14 cannot capture a structured binding
    const char* w = placement_warmup.second;
    const int64_t W = g.warmup_steps(w);
    const auto cell = [&](const std::string& norm) { return summarize(copy, arm(p, norm, g.slice_lr, W), g.seeds, base).text(); };
    wrows.push_back({p, w, cell("layernorm"), std::string(p) == "post" ? cell("rmsnorm") : "-", cell("dyt")});
  }
  s.markdown += fmt::format("Warmup slice on the copy task (lr_max {}, {} steps), final validation loss; Dynamic Tanh "
                            "(`norm_type = \"dyt\"`, Zhu et al. 2025: tanh(alpha x) * weight + bias in place of each "
                            "norm, alpha a learnable scalar starting at 0.5). {}\n\n",
                            g.slice_lr, steps, base.describe());
  s.markdown += md_table({"placement", "warmup", "LayerNorm", "RMSNorm", "Dynamic Tanh"}, wrows) + "\n";
  // Paired by seed, capped, and inconclusive when neither arm learned: E3's rule (difference_verdict).
  const auto contrast = [&](std::string id, std::string claim, std::string paper, std::string quantity,
                            const TrainPoint& a, const TrainPoint& b, double null_value, Side side) {
    return difference_verdict(ctx, std::move(id), std::move(claim), std::move(paper), std::move(quantity), copy, a, b,
                              steps, null_value, side);
  };
  const auto at = [&](const std::string& p, const std::string& norm, const std::string& w) {
    return arm(p, norm, g.slice_lr, g.warmup_steps(w));
  };
  const Verdict warm = contrast("E6d", "Post-LN with RMSNorm needs warmup too", "(not in the paper) as E3a",
                                "final val loss, RMSNorm Post-LN none - long (nats)", at("post", "rmsnorm", "none"),
                                at("post", "rmsnorm", "long"), 0.0, Side::Above);
  Verdict dyt = contrast("E6e", "Dynamic Tanh matches LayerNorm (Pre-LN, with warmup as the paper trains)",
                         "Zhu et al. 2025: DyT matches or exceeds LayerNorm in Pre-LN Transformers (trained with warmup)",
                         "final val loss, Pre-LN DyT - Pre-LN LayerNorm, long warmup (nats)", at("pre", "dyt", "long"),
                         at("pre", "layernorm", "long"), g.equivalence_margin, Side::Below);
  dyt.criterion += fmt::format("; non-inferiority margin {} nats, E3c's", g.equivalence_margin);
  const Verdict dyt_warm = contrast("E6f", "Post-LN with Dynamic Tanh needs warmup too", "(not in the paper) as E3a",
                                    "final val loss, DyT Post-LN none - long (nats)", at("post", "dyt", "none"),
                                    at("post", "dyt", "long"), 0.0, Side::Above);
  const Verdict dyt_pre = contrast("E6g", "Pre-LN with Dynamic Tanh needs warmup, where Pre-LN with LayerNorm does not",
                                   "(not in the paper) Xiong et al.: Pre-LN's normalized last layer bounds the gradient",
                                   "final val loss, DyT Pre-LN none - long (nats)", at("pre", "dyt", "none"),
                                   at("pre", "dyt", "long"), 0.0, Side::Above);
  s.verdicts.insert(s.verdicts.end(), {warm, dyt, dyt_warm, dyt_pre});
  return s;
}

}  // namespace normlab::xiong
