#include "experiments/xiong/grids.h"

#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"

namespace normlab::xiong {

double TrainPoint::lr_value() const { return std::strtod(lr.c_str(), nullptr); }

std::string TrainPoint::name() const {
  return fmt::format("{}-{}-L{}-lr{}-w{}-s{}", placement, norm_type, layers, lr, warmup, seed);
}

SweepPoint TrainPoint::sweep_point() const {
  SweepPoint p;
  p.name = name();
  p.overrides = {{"model.norm_placement", placement},
                 {"model.norm_type", norm_type},
                 {"model.n_layers", std::to_string(layers)},
                 {"optim.lr", lr},
                 {"schedule.warmup_steps", std::to_string(warmup)},
                 {"seed", std::to_string(seed)}};
  return p;
}

int64_t Grids::warmup_steps(const std::string& label) const {
  for (const WarmupLevel& w : warmups)
    if (w.label == label) return w.steps;
  fail("reproduce", "no warmup level '{}' in the grid", label);
}

// Sizes (docs/xiong/README.md): one thread per run, copy task d 128, L 12, batch 16 x 32, 600 steps:
// 0.118 s/step, ~71 s per run; text L 12, context 64: 0.24 s/step, ~150 s; quick copy task d 64, L 6,
// 300 steps: 6-8 s per run when a core is free. Full: 60 copy + 4 text runs + ~3 min of probes, about
// 70-80 min with --jobs 2 on 2 cores; --quick: 24 runs, about 2-3 min.
Grids make_grids(bool quick) {
  Grids g;
  g.quick = quick;
  if (!quick) {
    g.e1_depths = {2, 4, 8, 16, 32, 48};
    g.e1_seeds = 3;
    g.e1_probe = {8, 64, 4, false};
    g.e2_depths = {6, 12};
    g.e2_seeds = 3;
    g.e2_probe = {8, 64, 8, false};
    g.amp_depths = {6, 12, 24, 48};
    g.amp_seeds = 3;
    g.amp_probe = {8, 64, 1, false};
    g.timing_warmup = 3;
    g.timing_repeats = 21;

    g.copy_config = "copy_task.toml";
    g.copy_layers = 12;
    g.lrs = {"5e-4", "1e-3", "2e-3"};
    g.warmups = {{"none", 1}, {"short", 60}, {"long", 300}};
    g.seeds = {1, 2};
    g.lr_sweep = {"1e-4", "2e-4", "5e-4", "1e-3", "2e-3", "5e-3", "1e-2"};
    g.lr_sweep_seeds = {1};
    g.deepnorm_lrs = {"1e-3"};
    g.sandwich_lrs = {"1e-3"};
    g.rms_lrs = {"1e-3"};
    g.slice_seeds = {1};

    g.text_config = "text_corpus.toml";
    g.text_layers = 12;
    g.text_lrs = {"1e-3"};
    g.text_seeds = {1};  // 4 runs
  } else {
    g.probe_overrides = {"model.d_model=64", "model.d_ff=256"};
    g.e1_depths = {2, 4, 8, 16};
    g.e1_seeds = 3;
    g.e1_probe = {4, 32, 3, false};
    g.e2_depths = {6};
    g.e2_seeds = 2;
    g.e2_probe = {4, 32, 4, false};
    g.amp_depths = {6, 12, 24};
    g.amp_seeds = 2;
    g.amp_probe = {4, 32, 1, false};
    g.timing_warmup = 2;
    g.timing_repeats = 7;

    g.copy_config = "copy_task_quick.toml";
    g.copy_layers = 6;
    g.lrs = {"5e-3"};
    g.warmups = {{"none", 1}, {"long", 100}};
    g.seeds = {1, 2};
    g.lr_sweep = {"5e-4", "5e-3", "5e-2"};
    g.lr_sweep_seeds = {1};
    g.deepnorm_lrs = {"5e-3"};
    g.sandwich_lrs = {"5e-3"};
    g.rms_lrs = {"5e-3"};
    g.slice_seeds = {1};
  }
  return g;
}

std::vector<std::string> describe_grids(const Grids& g) {
  auto depths = [](const std::vector<int64_t>& v) { return fmt::format("{}", fmt::join(v, ", ")); };
  std::vector<std::string> lines;
  lines.push_back(fmt::format("E1 init probe: {} with overrides [{}], L in {{{}}}, {} seeds x {} batches of "
                              "{} x {} random tokens",
                              g.probe_config, fmt::join(g.probe_overrides, " "), depths(g.e1_depths), g.e1_seeds,
                              g.e1_probe.batches, g.e1_probe.batch, g.e1_probe.context));
  lines.push_back(fmt::format("E2 per-layer profile: L in {{{}}}, {} seeds x {} batches", depths(g.e2_depths),
                              g.e2_seeds, g.e2_probe.batches));
  lines.push_back(fmt::format("E5a amplification: {}, L in {{{}}}, {} seeds, one Adam step of lr {}", g.amp_config,
                              depths(g.amp_depths), g.amp_seeds, g.amp_lr));
  std::vector<std::string> warm;
  for (const WarmupLevel& w : g.warmups) warm.push_back(fmt::format("{}={}", w.label, w.steps));
  lines.push_back(fmt::format("E3 copy task: {}, L {}, model.norm_placement in {{post, pre}}, optim.lr in {{{}}}, "
                              "schedule.warmup_steps in {{{}}} (1 = none), seed in {{{}}}",
                              g.copy_config, g.copy_layers, fmt::join(g.lrs, ", "), fmt::join(warm, ", "),
                              fmt::join(g.seeds, ", ")));
  lines.push_back(fmt::format("E4 lr sweep: optim.lr in {{{}}} x {{post, pre}} x warmup {{none, long}}, seed in {{{}}}",
                              fmt::join(g.lr_sweep, ", "), fmt::join(g.lr_sweep_seeds, ", ")));
  lines.push_back(fmt::format("E5b DeepNorm vs Post-LN: lr in {{{}}}, warmup none and long, seed in {{{}}}",
                              fmt::join(g.deepnorm_lrs, ", "), fmt::join(g.slice_seeds, ", ")));
  if (!g.sandwich_lrs.empty())
    lines.push_back(fmt::format("E5c sandwich: lr in {{{}}}, warmup none and long, seed in {{{}}}",
                                fmt::join(g.sandwich_lrs, ", "), fmt::join(g.slice_seeds, ", ")));
  lines.push_back(fmt::format("E6 RMSNorm slice: model.norm_type=rmsnorm, lr in {{{}}}, post and pre, warmup none "
                              "and long, seed in {{{}}}; step time: median of {} alternating steps after {} untimed",
                              fmt::join(g.rms_lrs, ", "), fmt::join(g.slice_seeds, ", "), g.timing_repeats, g.timing_warmup));
  if (!g.text_config.empty())
    lines.push_back(fmt::format("E3 text corpus: {}, L {}, lr in {{{}}}, warmup none and long, post and pre, seed "
                                "in {{{}}}",
                                g.text_config, g.text_layers, fmt::join(g.text_lrs, ", "),
                                fmt::join(g.text_seeds, ", ")));
  return lines;
}

}  // namespace normlab::xiong
