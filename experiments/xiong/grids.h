// The grids of `normlab reproduce xiong`, full and --quick, in one place: which depths, seeds,
// learning rates and warmups each experiment measures, and which TOML file under
// experiments/xiong/ holds each base configuration. The report prints these grids verbatim.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "experiments/sweep.h"
#include "experiments/xiong/probes.h"

namespace normlab::xiong {

// One training run of the suite. Every run of a training sweep sets the same keys, so runs shared
// by several experiments (E3's grid and E4's lr sweep) are trained once.
struct TrainPoint {
  std::string placement = "post";   // model.norm_placement
  std::string norm_type = "layernorm";
  int64_t layers = 12;              // model.n_layers
  std::string lr = "1e-3";          // optim.lr, as written in names and overrides
  int64_t warmup = 1;               // schedule.warmup_steps; 1 = no warmup (the paper's T_warmup = 1)
  int seed = 1;                     // train.seed and model.seed

  double lr_value() const;
  // "post-layernorm-L12-lr1e-3-w1-s1": the run directory's name.
  std::string name() const;
  SweepPoint sweep_point() const;
  bool operator==(const TrainPoint& o) const { return name() == o.name(); }
};

struct WarmupLevel {
  std::string label;  // "none" | "short" | "long"
  int64_t steps;      // schedule.warmup_steps
};

struct Grids {
  bool quick = false;

  // ---- init-time probes (E1, E2, E6's E1): base model in theorem1.toml ----
  std::string probe_config = "theorem1.toml";
  std::vector<std::string> probe_overrides;  // applied to the base model (quick: narrower)
  std::vector<int64_t> e1_depths;
  int e1_seeds = 3;
  ProbeBatch e1_probe;
  std::vector<int64_t> e2_depths;
  int e2_seeds = 3;
  ProbeBatch e2_probe;

  // ---- E5a amplification: base model in amplification.toml ----
  std::string amp_config = "amplification.toml";
  std::vector<int64_t> amp_depths;
  int amp_seeds = 3;
  double amp_lr = 5e-5;
  ProbeBatch amp_probe;

  // ---- E6 step time ----
  int timing_warmup = 3, timing_repeats = 15;

  // ---- training on the copy task (E3, E4, E5b, E6): base config in copy_config ----
  std::string copy_config;
  int64_t copy_layers = 12;
  std::vector<std::string> lrs;  // E3
  std::vector<WarmupLevel> warmups;
  std::vector<int> seeds;
  std::vector<std::string> lr_sweep;   // E4 (two orders of magnitude)
  std::vector<int> lr_sweep_seeds;
  std::vector<std::string> deepnorm_lrs;  // E5b: deepnorm and post at these lrs, no warmup
  std::vector<std::string> sandwich_lrs;  // E5c: sandwich, no warmup and long warmup
  std::vector<std::string> rms_lrs;       // E6 slice: rmsnorm, both placements, no / long warmup
  std::vector<int> slice_seeds;           // seeds of the E5b, E5c and E6 runs

  // ---- the text-corpus variant of E3 (full suite only; empty text_config = skipped) ----
  std::string text_config;
  int64_t text_layers = 6;
  std::vector<std::string> text_lrs;
  std::vector<int> text_seeds;

  int64_t warmup_steps(const std::string& label) const;  // throws for an unknown label
};

Grids make_grids(bool quick);

// The grid as text for the report: one "key: values" line per setting.
std::vector<std::string> describe_grids(const Grids& grids);

}  // namespace normlab::xiong
