// E9: why Post-LN needs warmup (exploratory). The dynamics log (train/dynamics.h) of Post-LN
// without warmup, Post-LN with warmup and Pre-LN without warmup side by side, and interventions on
// Post-LN without warmup, each asked two things: does it rescue training (learned, by Fisher's
// exact test against Post-LN without warmup), and which logged quantity does it move first. The
// explanations' predictions are then checked against those numbers by the rules in
// `explanations` below.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/config.h"
#include "stats/exact_tests.h"
#include "stats/stats.h"
#include "xiong/arms.h"
#include "xiong/e9_dynamics.h"
#include "xiong/experiments.h"
#include "xiong/outcomes.h"
#include "xiong/registered_analysis.h"

namespace normlab::xiong {

namespace {

struct Arm {
  std::string label;        // the tables' name
  std::string tag;          // run-name suffix; "" for the three references
  std::string placement = "post";
  bool warmup = false;      // the long warmup
  std::string optimizer = "adam";
  std::vector<std::pair<std::string, std::string>> extra;
};

const std::vector<Arm>& references() {
  static const std::vector<Arm> arms = {{"Post-LN, no warmup", ""},
                                        {"Post-LN, warmup", "", "post", true},
                                        {"Pre-LN, no warmup", "", "pre"}};
  return arms;
}

// Each on Post-LN without warmup, unless it changes the placement or the warmup itself.
const std::vector<Arm>& interventions() {
  static const std::vector<Arm> arms = {
      {"clip the global norm at 1", "clip", "post", false, "adam", {{"optim.grad_clip", "1"}}},
      {"Adam beta2 0.999 (base 0.98)", "beta2", "post", false, "adam", {{"optim.beta2", "0.999"}}},
      {"Adam eps 1e-6 (base 1e-8)", "eps", "post", false, "adam", {{"optim.eps", "1e-6"}}},
      {"RAdam", "radam", "post", false, "radam"},
      {"warmup of the top half only", "top", "post", true, "adam", {{"schedule.warmup_groups", "top_half"}}},
      {"warmup of the bottom half only", "bottom", "post", true, "adam", {{"schedule.warmup_groups", "bottom_half"}}},
      {"QK-LayerNorm", "qknorm", "post", false, "adam", {{"model.qk_norm", "true"}}},
      {"z-loss 1e-4", "zloss", "post", false, "adam", {{"model.z_loss_coef", "1e-4"}}},
      {"Admin initialization (omega-scaled shortcut)", "admin", "admin"},
      {"DeepNorm residual scaling", "deepnorm", "deepnorm"}};
  return arms;
}

TrainPoint point_of(const Grids& g, const Arm& a, int seed) {
  TrainPoint t{a.placement, "layernorm", a.optimizer, g.e9_lr, a.warmup ? g.warmup_steps("long") : 1, seed};
  t.steps = g.e9_steps;
  t.arm = a.tag;
  t.extra = a.extra;
  t.extra.emplace_back("log.dynamics_steps", std::to_string(g.e9_dynamics_steps));
  return t;
}

struct ArmData {
  const Arm* arm;
  std::vector<const RunOutcome*> runs;
  std::vector<double> quality;  // final_quality per run
  int learned = 0;
  std::vector<std::vector<std::vector<double>>> dynamics;  // [quantity][seed][update]
};

ArmData read_arm(const Context& ctx, const TrainingResults& runs, const Arm& a, const Baseline& baseline,
                 int64_t n_layers) {
  const Grids& g = ctx.grids;
  ArmData d{&a, runs.over_seeds(point_of(g, a, g.e9_seeds.front()), g.e9_seeds), {}, 0, {}};
  for (const RunOutcome* r : d.runs) {
    d.quality.push_back(final_quality(*r));
    d.learned += d.quality.back() <= baseline.learn_below;
  }
  for (const DynamicsQuantity& q : e9_quantities())
    d.dynamics.push_back(series_over_seeds(d.runs, q, n_layers, g.e9_dynamics_steps));
  return d;
}

// Rescued: more runs learned than Post-LN without warmup, Fisher's exact two-sided p < 0.05.
double rescue_p(const ArmData& arm, const ArmData& none) {
  return fisher_exact(arm.learned, static_cast<int>(arm.runs.size()), none.learned, static_cast<int>(none.runs.size()))
      .p_two_sided;
}
bool rescued(const ArmData& arm, const ArmData& none) {
  return !arm.runs.empty() && arm.learned > none.learned && rescue_p(arm, none) < 0.05;
}

// "output_change at update 3" for the quantities that part first from Post-LN without warmup.
std::string first_moved(const ArmData& arm, const ArmData& none, int64_t n_layers) {
  const auto quantities = e9_quantities();
  int64_t first = -1;
  std::vector<std::string> which;
  for (size_t q = 0; q < quantities.size(); ++q) {
    const int64_t t = first_parting(arm.dynamics[q], none.dynamics[q], quantities[q]);
    if (t < 0 || (first >= 0 && t > first)) continue;
    if (t < first || first < 0) which.clear();
    first = t;
    which.push_back(dynamics_column(quantities[q].column, n_layers));
  }
  return first < 0 ? "none parts" : fmt::format("{} at update {}", fmt::join(which, ", "), first);
}

std::string arm_table(const std::vector<ArmData>& arms, const ArmData& none, int64_t n_layers) {
  std::vector<std::vector<std::string>> rows;
  for (const ArmData& a : arms) {
    const bool is_none = &a == &none;
    rows.push_back({a.arm->label, fmt::format("{}/{}", a.learned, a.runs.size()),
                    is_none ? "-" : num(rescue_p(a, none), 2), is_none ? "-" : (rescued(a, none) ? "yes" : "no"),
                    mean_ci_text(a.quality), is_none ? "-" : first_moved(a, none, n_layers)});
  }
  return md_table({"arm", "learned", "Fisher p vs Post-LN none", "rescues", "final quality (nats) [95% CI]",
                   "first quantity to part from Post-LN none (95% t intervals over seeds disjoint)"}, rows);
}

std::string figures(const Context& ctx, const std::vector<ArmData>& refs, int64_t n_layers) {
  std::string md;
  const auto quantities = e9_quantities();
  for (size_t q = 0; q < quantities.size(); ++q) {
    Chart chart{.title = quantities[q].label, .xlabel = "update", .ylabel = dynamics_column(quantities[q].column, n_layers),
                .log_y = quantities[q].log_scale, .x_from_zero = true};
    for (size_t a = 0; a < refs.size(); ++a) {
      ChartSeries s = band_series(refs[a].dynamics[q], quantities[q]);
      s.title = refs[a].arm->label;
      s.color = color_of(refs[a].arm->placement);
      s.dash = refs[a].arm->warmup ? 2 : 1;
      chart.series.push_back(std::move(s));
    }
    md += figure(ctx, chart, fmt::format("e9_{}", q)) + "\n";
  }
  return md;
}

const ArmData& by_tag(const std::vector<ArmData>& arms, const std::string& tag) {
  for (const ArmData& a : arms)
    if (a.arm->tag == tag) return a;
  fail("reproduce", "E9: no arm '{}'", tag);
}

// The geometric mean over updates first..last of quantity q, per seed.
std::vector<double> window_means(const ArmData& a, size_t q, size_t first, size_t last) {
  std::vector<double> out;
  for (const auto& seed : a.dynamics[q]) {
    double sum = 0;
    int n = 0;
    for (size_t i = first - 1; i < std::min(last, seed.size()); ++i)
      if (std::isfinite(seed[i]) && seed[i] > 0) sum += std::log(seed[i]), ++n;
    out.push_back(n > 0 ? std::exp(sum / n) : NAN);
  }
  return out;
}

std::string explanations(const std::vector<ArmData>& refs, const std::vector<ArmData>& arms, int64_t steps,
                         int64_t run_steps) {
  auto verdict = [run_steps](bool supported, bool failed) { return explanation_verdict(supported, failed, run_steps); };
  const ArmData &none = refs[0], &warm = refs[1];
  auto r = [&](const std::string& tag) { return rescued(by_tag(arms, tag), none); };
  auto k = [&](const std::string& tag) {
    const ArmData& a = by_tag(arms, tag);
    return fmt::format("{} {}/{}", tag, a.learned, a.runs.size());
  };
  const size_t early = std::min<size_t>(10, static_cast<size_t>(steps));
  const Interval change = log_ratio(window_means(none, 0, 1, early), window_means(warm, 0, 1, early));
  const Interval logits = log_ratio(window_means(none, 2, early, static_cast<size_t>(steps)),
                                    window_means(warm, 2, early, static_cast<size_t>(steps)));
  const Interval output = log_ratio(window_means(none, 1, early, static_cast<size_t>(steps)),
                                    window_means(warm, 1, early, static_cast<size_t>(steps)));
  auto ratio = [](const Interval& i) { return fmt::format("{} [{}, {}]", num(i.estimate), num(i.low), num(i.high)); };
  std::vector<std::vector<std::string>> rows = {
      {"Xiong et al. 2020: large gradients near the output at init",
       "warming up the top half alone rescues, the bottom half alone does not", k("top") + ", " + k("bottom"),
       verdict(r("top") && !r("bottom"), !r("top"))},
      {"Liu et al. 2020 (Admin): amplified output change",
       fmt::format("without warmup the output changes more over updates 1-{}; Admin's rescaled shortcut rescues", early),
       fmt::format("ratio none/warmup {}; {}, {}", ratio(change), k("admin"), k("deepnorm")),
       verdict(change.low > 1 && r("admin"), change.high < 1 && !r("admin"))},
      {"Liu et al. 2019 (RAdam): the variance of Adam's early adaptive rate",
       "RAdam and a larger eps rescue", k("radam") + ", " + k("eps"), verdict(r("radam") && r("eps"), !r("radam") && !r("eps"))},
      {"Wortsman et al. 2023: attention-logit growth",
       fmt::format("without warmup the largest attention logit is larger over updates {}-{}; QK-LayerNorm rescues",
                   early, steps),
       fmt::format("ratio none/warmup {}; {}", ratio(logits), k("qknorm")),
       verdict(logits.low > 1 && r("qknorm"), logits.high < 1 && !r("qknorm"))},
      {"Wortsman et al. 2023: output-logit divergence",
       fmt::format("without warmup the output logits are larger over updates {}-{}; z-loss rescues", early, steps),
       fmt::format("ratio none/warmup {}; {}", ratio(output), k("zloss")),
       verdict(output.low > 1 && r("zloss"), output.high < 1 && !r("zloss"))}};
  return md_table({"explanation", "prediction", "measured (learned counts; ratios: geometric means, 95% log-ratio t "
                   "interval over seeds)", "verdict"}, rows);
}

}  // namespace

std::string explanation_verdict(bool supported, bool failed, int64_t run_steps) {
  if (supported) return "supported";
  if (!failed) return "mixed";
  return run_steps >= kE9ContradictionHorizon ? "contradicted" : "not sufficient at this strength and horizon";
}

std::vector<TrainPoint> e9_points(const Grids& g) {
  std::vector<TrainPoint> points;
  for (const auto* list : {&references(), &interventions()})
    for (const Arm& a : *list)
      for (const int seed : g.e9_seeds) points.push_back(point_of(g, a, seed));
  return points;
}

Section run_e9(const Context& ctx, const TrainingResults& runs) {
  const Grids& g = ctx.grids;
  const RunConfig base = load_config(ctx.config_path(g.e9_config));
  const Baseline baseline = copy_baseline(ctx.config_path(g.e9_config));
  const int64_t steps = g.e9_steps > 0 ? g.e9_steps : base.train.steps;
  std::vector<ArmData> refs, arms;
  for (const Arm& a : references()) refs.push_back(read_arm(ctx, runs, a, baseline, base.model.n_layers));
  for (const Arm& a : interventions()) arms.push_back(read_arm(ctx, runs, a, baseline, base.model.n_layers));
  std::vector<ArmData> all = refs;
  all.insert(all.end(), arms.begin(), arms.end());
  Section s{"E9", "Why Post-LN needs warmup: the dynamics over training, and interventions (exploratory)", "", {}};
  s.markdown += fmt::format(
      "**Protocol.** {}, Adam lr_max {}, {} steps, seeds {{{}}} (exploratory: not in the registered family). "
      "Every run logs dynamics.csv over its first {} updates. A run *learned* if its final quality (the mean "
      "validation loss over the last 20% of the run, as the registered claims') is at most {}, half of {} = {}. An "
      "intervention *rescues* Post-LN without warmup if more of its runs learned and Fisher's exact two-sided "
      "p < 0.05. The figures show the three references' geometric mean over seeds with a 95% t band "
      "(arithmetic for the attention logit). Total: {} runs, {:.0f} CPU-minutes.\n\n",
      g.e9_config, g.e9_lr, steps, fmt::join(g.e9_seeds, ", "), g.e9_dynamics_steps, num(baseline.learn_below),
      baseline.name, num(baseline.loss), runs.size(), runs.total_wall_s() / 60.0);
  s.markdown += arm_table(all, all[0], base.model.n_layers) + "\n";
  s.markdown += fmt::format("**The explanations' predictions against the measurements** (rules: supported when every "
                            "part of the prediction holds; when every part fails, contradicted only in runs of at least "
                            "{} steps, where Post-LN without warmup at the lower rate also learns, and otherwise not "
                            "sufficient at this strength and horizon; mixed otherwise):\n\n",
                            kE9ContradictionHorizon) +
                explanations(refs, arms, g.e9_dynamics_steps, steps) + "\n";
  s.markdown += figures(ctx, refs, base.model.n_layers);
  return s;
}

}  // namespace normlab::xiong
