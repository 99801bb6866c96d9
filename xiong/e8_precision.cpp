// E8 (not in the paper): Post-LN vs Pre-LN when the forward runs in bfloat16 or float16 (float32
// master weights, norm statistics, softmax and loss in float32; fp16 with dynamic loss scaling:
// docs/mixed_precision.md). Does Post-LN still need warmup, does Pre-LN still train without it, and
// how often does float16 overflow (skipped steps, divergence)? The float32 arms are E3's runs.
#include <fmt/format.h>

#include "config/config.h"
#include "xiong/experiments.h"
#include "xiong/outcomes.h"

namespace normlab::xiong {

namespace {

constexpr double kSameLossMargin = 0.1;  // nats: "trains as in float32"

TrainPoint arm(const std::string& placement, const std::string& lr, int64_t warmup, const std::string& precision) {
  TrainPoint p{placement, "layernorm", "adam", lr, warmup, 1};
  p.precision = precision;  // "" = float32 (E3's arm)
  return p;
}

double final_capped(const RunOutcome& r) { return r.capped_final(); }

// Mean skipped steps over the seeds' runs ("-" for bf16/fp32, which never skip).
std::string skipped_text(const TrainingResults& copy, const TrainPoint& point, const std::vector<int>& seeds) {
  if (point.precision != "fp16") return "-";
  double total = 0;
  int n = 0;
  for (const RunOutcome* r : copy.over_seeds(point, seeds)) {
    total += static_cast<double>(r->skipped_steps);
    ++n;
  }
  return n == 0 ? "-" : fmt::format("{:.1f}", total / n);
}

}  // namespace

std::vector<TrainPoint> e8_points(const Grids& g) {
  std::vector<TrainPoint> points;
  for (const std::string precision : {"bf16", "fp16"})
    for (const auto& [placement, warmup] : {std::pair{"post", "none"}, {"post", "long"}, {"pre", "none"}})
      for (const int seed : g.seeds) {
        TrainPoint p = arm(placement, g.slice_lr, g.warmup_steps(warmup), precision);
        p.seed = seed;
        points.push_back(p);
      }
  return points;
}

Section run_e8(const Context& ctx, const TrainingResults& copy) {
  const Grids& g = ctx.grids;
  const Baseline base = copy_baseline(ctx);
  const int64_t none = g.warmup_steps("none"), long_w = g.warmup_steps("long");
  const int64_t steps = load_config(ctx.config_path(g.copy_config)).train.steps;
  Section s{"E8", "Post-LN vs Pre-LN in bfloat16 and float16", "", {}};
  std::vector<std::vector<std::string>> rows;
  for (const std::string precision : {"", "bf16", "fp16"})
    for (const auto& [placement, warmup] : {std::pair{"post", none}, {"post", long_w}, {"pre", none}}) {
      const TrainPoint p = arm(placement, g.slice_lr, warmup, precision);
      rows.push_back({precision.empty() ? "fp32" : precision, placement, warmup == none ? "none" : "long",
                      summarize(copy, p, g.seeds, base).text(), skipped_text(copy, p, g.seeds)});
    }
  s.markdown += fmt::format(
      "Copy task, Adam, lr_max {}, {} seeds; the forward in 16 bits on float32 master weights (norm statistics, "
      "softmax and loss in float32), fp16 with dynamic loss scaling from 2^16. Final validation loss (capped at "
      "the loss at init), {} steps. {}\n\n", g.slice_lr, g.seeds.size(), steps, base.describe());
  s.markdown += md_table({"precision", "placement", "warmup", "final val loss [95% CI]", "fp16 skipped steps"}, rows) + "\n";
  auto finals = [&](const std::string& placement, int64_t warmup, const std::string& precision) {
    return copy.per_seed(arm(placement, g.slice_lr, warmup, precision), g.seeds, final_capped);
  };
  for (const std::string precision : {"bf16", "fp16"}) {
    Verdict warm{"E8a." + precision, fmt::format("Post-LN needs warmup in {} too", precision),
                 "(not in the paper) as E3a", fmt::format("final val loss, Post-LN {} none - long (nats)", precision),
                 paired_difference(finals("post", none, precision), finals("post", long_w, precision)), steps};
    warm.decide_direction(0.0, Side::Above);
    Verdict pre{"E8b." + precision, fmt::format("Pre-LN without warmup trains in {} as in float32", precision),
                "(not in the paper)", fmt::format("final val loss, Pre-LN no warmup, {} - fp32 (nats)", precision),
                paired_difference(finals("pre", none, precision), finals("pre", none, "")), steps};
    pre.decide_equivalence(0.0, kSameLossMargin);
    s.verdicts.insert(s.verdicts.end(), {warm, pre});
  }
  return s;
}

}  // namespace normlab::xiong
