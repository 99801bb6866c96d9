#include "xiong/grids.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"

namespace normlab::xiong {

double TrainPoint::lr_value() const { return std::strtod(lr.c_str(), nullptr); }

std::string TrainPoint::name() const {
  const std::string base = fmt::format("{}-{}-{}-lr{}-w{}-s{}", placement, norm_type, optimizer, lr, warmup, seed);
  const std::string scaled = embedding_scale.empty() ? base : base + "-emb" + embedding_scale;
  return precision.empty() ? scaled : scaled + "-" + precision;
}

SweepPoint TrainPoint::sweep_point() const {
  SweepPoint p;
  p.name = name();
  p.overrides = {{"model.norm_placement", placement},
                 {"model.norm_type", norm_type},
                 {"optim.name", optimizer},
                 {"optim.lr", lr},
                 {"schedule.warmup_steps", std::to_string(warmup)},
                 {"seed", std::to_string(seed)}};
  if (!embedding_scale.empty()) p.overrides.emplace_back("model.embedding_scale", embedding_scale);
  if (!precision.empty()) p.overrides.emplace_back("train.precision", precision);
  return p;
}

int64_t Grids::warmup_steps(const std::string& label) const {
  for (const WarmupLevel& w : warmups)
    if (w.label == label) return w.steps;
  fail("reproduce", "no warmup level '{}' in the grid", label);
}

std::vector<std::string> Grids::all_lrs() const {
  std::vector<std::string> out = lrs;
  for (const std::string& lr : lr_sweep)
    if (std::find(out.begin(), out.end(), lr) == out.end()) out.push_back(lr);
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    return std::strtod(a.c_str(), nullptr) < std::strtod(b.c_str(), nullptr);
  });
  return out;
}

namespace {

// Full suite (docs/xiong/README.md has the measured cost): init probes over 8 seeds; every training
// arm 5 seeds x 2000 steps of the copy task (copy_task.toml). Cut to fit 90 minutes on 2 cores:
// the text corpus (text_corpus.toml, run with --only E3 --text), Pre-LN with RAdam and E4's lrs
// beyond E3's (E4 reads E3's two lrs).
Grids full_grids() {
  Grids g;
  g.e1_depths = {2, 4, 8, 16, 32, 48};
  g.e1_probe = {8, 64, 4, false};
  g.e2_depths = {6, 12, 24};
  g.e2_probe = {8, 64, 8, false};
  g.amp_depths = {6, 12, 24, 48};
  g.amp_probe = {8, 64, 1, false};
  g.copy_config = "copy_task.toml";
  g.lrs = {"5e-4", "1e-3"};
  // An epoch is 100 steps (schedule.decay_every): short = 0.5 and long = 4 epochs, in proportion
  // to the paper's 500 and 4000 updates at about 1000 updates per IWSLT14 epoch.
  g.warmups = {{"none", 1}, {"short", 50}, {"long", 400}};
  g.seeds = {1, 2, 3, 4, 5};
  g.sgd_lr = "1e-1";
  g.lr_sweep = {};
  g.slice_lr = "1e-3";
  g.pre_radam = false;
  g.embedding_diagnostic = true;
  g.text_lr = "1e-3";
  return g;
}

// --quick (CI, about 2-3 minutes): narrow models, fewer depths and steps; same code paths.
Grids quick_grids() {
  Grids g;
  g.quick = true;
  g.probe_overrides = {"model.d_model=64", "model.d_ff=256"};
  g.e1_depths = {2, 4, 8, 16};
  g.e1_probe = {4, 32, 3, false};
  g.e2_depths = {6};
  g.e2_probe = {4, 32, 4, false};
  g.torch_seeds = 0;
  g.amp_depths = {6, 12, 24};
  g.amp_seeds = 4;
  g.amp_probe = {4, 32, 1, false};
  g.update_steps = 10;
  g.update_seeds = 3;
  g.timing_warmup = 2;
  g.timing_repeats = 7;
  g.copy_config = "copy_task_quick.toml";
  g.lrs = {"5e-3"};
  g.warmups = {{"none", 1}, {"short", 15}, {"long", 60}};
  g.seeds = {1, 2, 3};
  g.sgd_lr = "1e-1";
  g.lr_sweep = {"5e-4"};
  g.slice_lr = "5e-3";
  g.embedding_diagnostic = true;  // an arm that sets one more key than the grid: sweep.csv's columns
  return g;
}

}  // namespace

Grids make_grids(bool quick) { return quick ? quick_grids() : full_grids(); }

std::vector<std::string> describe_grids(const Grids& g) {
  auto list = [](const auto& v) { return fmt::format("{}", fmt::join(v, ", ")); };
  std::vector<std::string> warm;
  for (const WarmupLevel& w : g.warmups) warm.push_back(fmt::format("{}={}", w.label, w.steps));
  std::vector<std::string> lines = {
      fmt::format("E1 init probe: {} with overrides [{}], L in {{{}}}, {} seeds x {} batches of {} x {} random "
                  "tokens", g.probe_config, fmt::join(g.probe_overrides, " "), list(g.e1_depths), g.e1_seeds,
                  g.e1_probe.batches, g.e1_probe.batch, g.e1_probe.context),
      fmt::format("E2 per-layer profile: L in {{{}}}, {} seeds x {} batches", list(g.e2_depths), g.e2_seeds,
                  g.e2_probe.batches),
      fmt::format("E5a amplification: {}, L in {{{}}}, {} seeds, one Adam step of lr {}", g.amp_config,
                  list(g.amp_depths), g.amp_seeds, g.amp_lr),
      fmt::format("Adam update size: {} seeds x {} steps of {} at lr {}", g.update_seeds, g.update_steps,
                  g.copy_config, g.slice_lr),
      fmt::format("E3 copy task: {}, placement in {{post, pre}}, Adam lr in {{{}}}, schedule.warmup_steps in "
                  "{{{}}} (1 = none), seeds {{{}}}; Post-LN with SGD at lr {}, warmup none and long; RAdam "
                  "without warmup at every lr (Post-LN){}{}", g.copy_config, list(g.lrs), list(warm), list(g.seeds),
                  g.sgd_lr, g.pre_radam ? " and at " + g.slice_lr + " (Pre-LN)" : "",
                  g.embedding_diagnostic ? "; Pre-LN without warmup at " + g.slice_lr +
                                               " with unscaled embeddings (model.embedding_scale = \"none\")"
                                         : ""),
      fmt::format("E4 lr sweep: Adam lr in {{{}}} x {{post, pre}} x warmup {{none, long}}", list(g.all_lrs())),
      fmt::format("E5b DeepNorm and E5c sandwich without warmup, E6 RMSNorm Post-LN without and with the long "
                  "warmup: lr {}", g.slice_lr)};
  if (!g.text_config.empty())
    lines.push_back(fmt::format("E3 text corpus: {}, lr {}, Post-LN, warmup none and long", g.text_config,
                                g.text_lr));
  lines.push_back(fmt::format("Every training arm: seeds {{{}}}", list(g.seeds)));
  return lines;
}

}  // namespace normlab::xiong
