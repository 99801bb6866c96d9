// E10b (exploratory, issue 37): the warmup grid of E3 (E3a: Post-LN needs warmup; E3c: Pre-LN
// without warmup matches Post-LN with it) in the paper's architecture, an encoder-decoder trained
// on the built-in synthetic translation task (grids.e10_translate_config), with the final greedy
// BLEU beside the validation loss. Every arm follows one schedule after the warmup arm's warmup
// (E3's primary design), and arms pair up by seed (same initialization, same data stream).
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/config.h"
#include "xiong/arms.h"
#include "xiong/e10_training.h"
#include "xiong/e3_common.h"
#include "xiong/experiments.h"
#include "xiong/outcomes.h"

namespace normlab::xiong {

TrainPoint e10_arm(const Grids& g, const std::string& placement, const std::string& lr, bool warmup, int seed) {
  TrainPoint p{placement, "layernorm", "adam", lr, warmup ? g.e10_warmup : 1, seed};
  p.decay_start = g.e10_warmup;
  p.steps = g.e10_steps;
  p.extra = g.e10_overrides;
  return p;
}

std::string e10_arm_label(const TrainPoint& p) {
  return fmt::format("{}, {}", placement_label(p.placement), p.warmup > 1 ? fmt::format("warmup {}", p.warmup)
                                                                          : std::string("no warmup"));
}

std::string e10_curves_figure(const Context& ctx, const TrainingResults& runs, const std::vector<TrainPoint>& arms,
                              const std::vector<int>& seeds, const Baseline& base, const std::string& stem,
                              const std::string& title) {
  Chart chart{.title = title, .xlabel = "step", .ylabel = "validation loss (mean over seeds, 95% band)",
              .log_y = true, .x_from_zero = true};
  double last_step = 0;
  for (const TrainPoint& a : arms) {
    const BandCurve curve = mean_validation_band(runs.over_seeds(a, seeds));
    if (curve.mean.empty()) continue;
    last_step = std::max(last_step, curve.mean.back().first);
    chart.series.push_back({.title = fmt::format("{} ({} seeds)", e10_arm_label(a), seeds.size()),
                            .points = curve.mean, .color = color_of(a.placement) + (a.warmup > 1 ? 2 : 0),
                            .dash = a.warmup > 1 ? 2 : 1, .band = curve.band});
  }
  if (chart.series.empty()) return "";
  ChartSeries line{.title = fmt::format("{} {}", base.name, num(base.loss, 3)), .color = 8, .dash = 3};
  line.points = {{0.0, base.loss}, {last_step, base.loss}};
  chart.series.push_back(line);
  return figure(ctx, chart, stem);
}

namespace {

std::vector<TrainPoint> arms_at(const Grids& g, const std::string& lr) {
  return {e10_arm(g, "post", lr, true, 1), e10_arm(g, "post", lr, false, 1), e10_arm(g, "pre", lr, false, 1)};
}

double bleu_of(const RunOutcome& r) { return r.status == RunStatus::Completed ? r.bleu : 0.0; }

std::string arm_rows(const Context& ctx, const TrainingResults& runs, const std::string& lr, const Baseline& base) {
  const Grids& g = ctx.grids;
  std::vector<std::vector<std::string>> rows;
  for (const TrainPoint& a : arms_at(g, lr)) {
    const ArmSummary s = summarize(runs, a, g.e10_seeds, base);
    const RunConfig c = point_config(ctx.config_path(g.e10_translate_config), a);
    rows.push_back({e10_arm_label(a), lr, schedule_words(c.schedule), num(cumulative_lr(c), 3),
                    mean_ci_text(runs.per_seed(a, g.e10_seeds, [](const RunOutcome& r) { return r.val_at_fraction(0.25); })),
                    mean_ci_text(s.capped), mean_ci_text(runs.per_seed(a, g.e10_seeds, bleu_of), 3),
                    fmt::format("{}/{}", s.learned, s.n), std::to_string(s.diverged)});
  }
  return md_table({"arm", "lr_max", "schedule (t = update)", "cumulative lr", "val loss at 25%", "final val loss",
                   "final BLEU (greedy, 200 pairs)", "learned", "diverged"}, rows);
}

void label(Verdict& v, const Context& ctx, std::string id, std::string claim, std::string paper, std::string quantity,
           const std::vector<TrainPoint>& compared, int64_t steps) {
  v.id = std::move(id);
  v.claim = std::move(claim);
  v.paper = std::move(paper);
  v.quantity = std::move(quantity);
  v.steps = steps;
  v.task = "translate";
  std::vector<std::string> words;
  for (const TrainPoint& a : compared)
    words.push_back(fmt::format("{}, lr_max {}: {}", e10_arm_label(a), a.lr,
                                schedule_words(point_config(ctx.config_path(ctx.grids.e10_translate_config), a).schedule)));
  v.schedule = fmt::format("{}", fmt::join(words, " vs "));
}

// BLEU of each compared arm, mean over seeds, for the verdict's note.
std::string bleu_note(const TrainingResults& runs, const std::vector<TrainPoint>& arms, const std::vector<int>& seeds) {
  std::vector<std::string> parts;
  for (const TrainPoint& a : arms)
    parts.push_back(fmt::format("{} BLEU {}", e10_arm_label(a), mean_ci_text(runs.per_seed(a, seeds, bleu_of), 3)));
  return fmt::format("{}", fmt::join(parts, ", "));
}

void append_verdicts(const Context& ctx, const TrainingResults& runs, const Baseline& base, int64_t steps,
                     Section& s) {
  const Grids& g = ctx.grids;
  for (const std::string& lr : g.e10_lrs) {
    const std::vector<TrainPoint> a = arms_at(g, lr);  // post warmup, post none, pre none
    auto finals = [&](const TrainPoint& p) { return runs.per_seed(p, g.e10_seeds, final_capped); };
    Verdict need = needs_warmup_verdict(finals(a[1]), finals(a[0]), base.learn_below);
    label(need, ctx, "E10b.warmup@" + lr, "Encoder-decoder, translation: Post-LN needs warmup (Adam, lr_max " + lr + ")",
          "IWSLT14: Post-LN without warmup BLEU 8.45 vs ~34 with 4000 warmup steps",
          "final val loss, Post-LN none - Post-LN warmup (nats)", {a[1], a[0]}, steps);
    need.note += (need.note.empty() ? "" : "; ") + bleu_note(runs, {a[1], a[0]}, g.e10_seeds);
    Verdict match = matches_verdict(finals(a[2]), finals(a[0]), g.e10_margin, base.learn_below);
    label(match, ctx, "E10b.match@" + lr,
          "Encoder-decoder, translation: Pre-LN without warmup matches Post-LN with warmup (lr_max " + lr + ")",
          "section 4: Pre-LN without warmup reaches Post-LN-with-warmup's BLEU",
          "final val loss, Pre-LN none - Post-LN warmup (nats)", {a[2], a[0]}, steps);
    match.note += "; " + bleu_note(runs, {a[2], a[0]}, g.e10_seeds);
    s.verdicts.insert(s.verdicts.end(), {need, match});
  }
}

}  // namespace

std::vector<TrainPoint> e10b_points(const Grids& g) {
  std::vector<TrainPoint> out;
  for (const std::string& lr : g.e10_lrs)
    for (const TrainPoint& p : with_seeds(arms_at(g, lr), g.e10_seeds)) out.push_back(p);
  return out;
}

void append_e10b(const Context& ctx, const TrainingResults& runs, Section& s) {
  const Grids& g = ctx.grids;
  const std::string path = ctx.config_path(g.e10_translate_config);
  const RunConfig c = point_config(path, arms_at(g, g.e10_lrs.front()).front());  // the shared settings
  const Baseline base = translation_baseline(path);
  const int64_t steps = c.train.steps;
  s.markdown += fmt::format(
      "### E10b: the warmup grid on synthetic translation\n\n"
      "Encoder-decoder ({}: {} + {} layers, d {}, {} heads, FFN {}, label smoothing {}), the built-in "
      "`seq2seq_translate` task ({} words, sources of {}-{} words), {} steps of batch {}, Adam (0.9, 0.98), seeds "
      "{{{}}} (pilot seed 100 excluded). Arms pair up by seed. Every arm runs lr_max to t = {} and the same "
      "inverse-square-root decay after it, so they differ only in the warmup. BLEU: greedy, the first {} "
      "validation pairs, sacreBLEU's 13a (0 for a diverged run). Cells: mean [95% t interval] over seeds. {} "
      "Runs: {}, {:.1f} CPU-minutes.\n\n",
      g.e10_translate_config, c.model.n_layers, c.model.n_layers, c.model.d_model, c.model.n_heads, c.model.d_ff,
      c.model.label_smoothing, c.data.copy_vocab, c.data.seq2seq_min_length, c.data.copy_length, steps,
      c.train.batch_size, fmt::join(g.e10_seeds, ", "), g.e10_warmup, c.log.bleu_pairs, base.describe(), runs.size(),
      runs.total_wall_s() / 60.0);
  for (const std::string& lr : g.e10_lrs) {
    s.markdown += fmt::format("**lr_max {}**\n\n", lr) + arm_rows(ctx, runs, lr, base) + "\n";
    s.markdown += e10_curves_figure(ctx, runs, arms_at(g, lr), g.e10_seeds, base, "e10b_translate_lr" + lr,
                                    "encoder-decoder, synthetic translation: validation loss, Adam lr_max " + lr) + "\n";
  }
  append_verdicts(ctx, runs, base, steps, s);
}

}  // namespace normlab::xiong
