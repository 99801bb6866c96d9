// E6: RMSNorm vs LayerNorm: Theorem 1 with RMSNorm, a slice of the warmup study with RMSNorm, and
// the measured step time of each norm (end to end, and the norm op alone).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "experiments/config.h"
#include "experiments/xiong/experiments.h"
#include "experiments/xiong/outcomes.h"

namespace normlab::xiong {

namespace {

// Median step times (ms) of equal models with LayerNorm and RMSNorm, and of the norm op alone.
nlohmann::json measure_timing(const Context& ctx) {
  const Grids& g = ctx.grids;
  const RunConfig rc = load_config(ctx.config_path(g.copy_config), {"model.n_layers=" + std::to_string(g.copy_layers)});
  ModelConfig ln = rc.model, rms = rc.model;
  ln.vocab_size = rms.vocab_size = rc.data.copy_vocab;
  ln.norm_type = "layernorm";
  rms.norm_type = "rmsnorm";
  ProbeBatch probe{rc.train.batch_size, rc.train.context, 1, false};
  nlohmann::json out;
  for (const std::string placement : {"pre", "post"}) {
    ln.norm_placement = rms.norm_placement = placement;
    const std::vector<double> ms = median_step_ms({ln, rms}, probe, g.timing_warmup, g.timing_repeats);
    out["step_ms"][placement] = {{"layernorm", ms[0]}, {"rmsnorm", ms[1]}};
  }
  const int64_t rows = rc.train.batch_size * rc.train.context;
  const std::vector<double> norm_ms =
      median_norm_ms(ln, {"layernorm", "rmsnorm"}, rows, 10 * g.timing_warmup, 20 * g.timing_repeats);
  out["norm_ms"] = {{"layernorm", norm_ms[0]}, {"rmsnorm", norm_ms[1]}, {"rows", rows}, {"dim", ln.d_model}};
  out["model"] = fmt::format("d {}, L {}, {} heads, FFN {}, batch {} x {}", ln.d_model, ln.n_layers, ln.n_heads,
                             ln.d_ff, rc.train.batch_size, rc.train.context);
  return out;
}

double speedup(double slow, double fast) { return slow / fast - 1.0; }

}  // namespace

std::vector<TrainPoint> e6_points(const Grids& g) {
  std::vector<TrainPoint> points;
  for (const std::string norm : {"rmsnorm", "layernorm"})
    for (const std::string p : {"post", "pre"})
      for (const std::string w : {"none", "long"})
        for (const std::string& lr : g.rms_lrs)
          for (const int seed : g.slice_seeds) points.push_back({p, norm, g.copy_layers, lr, g.warmup_steps(w), seed});
  return points;
}

Section run_e6(const Context& ctx, const TrainingResults& copy, bool train_part) {
  const Grids& g = ctx.grids;
  Section s{"E6", "RMSNorm vs LayerNorm", "", {}};
  std::string& md = s.markdown;

  // Theorem 1 with RMSNorm.
  const nlohmann::json ln = theorem1_probe(ctx, "layernorm"), rms = theorem1_probe(ctx, "rmsnorm");
  std::vector<std::vector<std::string>> rows;
  std::map<std::string, Stats> e;
  for (const std::string norm : {"layernorm", "rmsnorm"})
    for (const std::string p : {"post", "pre"}) {
      e[norm + p] = stats_of(theorem1_exponents(norm == std::string("layernorm") ? ln : rms, p, g.e1_depths));
      rows.push_back({norm, p, pm(e[norm + p], 2)});
    }
  md += "Theorem 1's fitted exponent of L (E1's grid) for each norm:\n\n" +
        md_table({"norm", "placement", "exponent"}, rows) + "\n";
  const Stats post = e["rmsnormpost"], pre = e["rmsnormpre"];
  s.verdicts.push_back({"E6a", "Theorem 1 holds with RMSNorm", "(not in the paper) exponents 0 and -0.5",
                        fmt::format("RMSNorm: Post-LN {}, Pre-LN {}", pm(post, 2), pm(pre, 2)),
                        "as E1a/E1b: reproduced if |Post| < 0.15 and Pre in [-0.7, -0.3]; partially if Pre < Post - 0.15",
                        outcome_of(std::abs(post.mean) < 0.15 && pre.mean >= -0.7 && pre.mean <= -0.3,
                                   pre.mean < post.mean - 0.15)});

  // Step time.
  const nlohmann::json timing = cached(ctx, "e6_timing",
                                       {{"config", g.copy_config}, {"layers", g.copy_layers},
                                        {"repeats", g.timing_repeats}, {"version", 1}},
                                       [&] { return measure_timing(ctx); });
  std::vector<std::vector<std::string>> trows;
  std::vector<double> step_speedups;
  for (const std::string p : {"pre", "post"}) {
    const double a = timing["step_ms"][p]["layernorm"], b = timing["step_ms"][p]["rmsnorm"];
    step_speedups.push_back(speedup(a, b));
    trows.push_back({"training step, " + p, num(a, 4), num(b, 4), fmt::format("{:+.1f}%", 100 * speedup(a, b))});
  }
  const double na = timing["norm_ms"]["layernorm"], nb = timing["norm_ms"]["rmsnorm"];
  trows.push_back({fmt::format("norm forward + backward, {} x {}", timing["norm_ms"]["rows"].get<int64_t>(),
                               timing["norm_ms"]["dim"].get<int64_t>()),
                   num(na, 4), num(nb, 4), fmt::format("{:+.1f}%", 100 * speedup(na, nb))});
  md += fmt::format("Median wall time per step, same process, alternating LayerNorm and RMSNorm models ({}):\n\n",
                    timing["model"].get<std::string>());
  md += md_table({"what", "LayerNorm ms", "RMSNorm ms", "RMSNorm faster by"}, trows) + "\n";
  const double step_mean = 0.5 * (step_speedups[0] + step_speedups[1]);
  s.verdicts.push_back({"E6b", "RMSNorm speeds up training end to end", "RMSNorm paper: 7%-64%",
                        fmt::format("{:+.1f}% (mean of pre and post)", 100 * step_mean),
                        "reproduced if >= 7%; partially if > 0", outcome_of(step_mean >= 0.07, step_mean > 0)});
  const double op = speedup(na, nb);
  s.verdicts.push_back({"E6c", "The RMSNorm op is faster than LayerNorm", "seed articles: 15-30%",
                        fmt::format("{:+.1f}%", 100 * op), "reproduced if >= 15%; partially if > 0",
                        outcome_of(op >= 0.15, op > 0)});
  if (!train_part) return s;

  // The warmup slice with RMSNorm, next to LayerNorm.
  const CopyThresholds th = copy_thresholds(ctx);
  std::vector<std::vector<std::string>> wrows;
  int agree = 0, cases = 0;
  for (const std::string& lr : g.rms_lrs)
    for (const std::string p : {"post", "pre"})
      for (const std::string w : {"none", "long"}) {
        const TrainPoint base{p, "layernorm", g.copy_layers, lr, g.warmup_steps(w), 1};
        TrainPoint r = base;
        r.norm_type = "rmsnorm";
        const GroupSummary a = summarize(copy.over_seeds(base, g.slice_seeds), th), b = summarize(copy.over_seeds(r, g.slice_seeds), th);
        wrows.push_back({lr, p, w, fmt::format("{} [learned {}]", a.final_text(), a.learned_text()),
                         fmt::format("{} [learned {}]", b.final_text(), b.learned_text())});
        ++cases;
        agree += a.majority_learned() == b.majority_learned() && a.majority_failed() == b.majority_failed();
      }
  md += fmt::format("Warmup slice on the copy task (L {}, seeds {{{}}}). {}\n\n", g.copy_layers,
                    fmt::join(g.slice_seeds, ", "), th.describe());
  md += md_table({"lr", "placement", "warmup", "LayerNorm", "RMSNorm"}, wrows) + "\n";
  s.verdicts.push_back({"E6d", "RMSNorm shows the same warmup behaviour as LayerNorm", "(not in the paper)",
                        fmt::format("same learned/failed outcome in {}/{} settings", agree, cases),
                        "reproduced if the majority outcome agrees in every setting; partially if in at least half",
                        outcome_of(agree == cases, 2 * agree >= cases)});
  return s;
}

}  // namespace normlab::xiong
