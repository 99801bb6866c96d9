// The grids of `normlab reproduce xiong`, full and --quick, in one place: which depths, seeds,
// learning rates, warmups and optimizers each experiment measures, and which TOML file under
// xiong/configs/ holds each base configuration. The report prints these grids verbatim.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sweep/sweep.h"
#include "xiong/probes.h"

namespace normlab::xiong {

// One training run of the suite. Every run of a sweep sets the same keys, so a run shared by
// several experiments (E3's grid, E4's lr sweep, the slices) is trained once.
struct TrainPoint {
  std::string placement = "post";   // model.norm_placement
  std::string norm_type = "layernorm";
  std::string optimizer = "adam";   // optim.name
  std::string lr = "1e-3";          // optim.lr, as written in names and overrides
  int64_t warmup = 1;               // schedule.warmup_steps; 1 = no warmup (the paper's T_warmup = 1)
  int seed = 1;                     // train.seed and model.seed
  std::string embedding_scale;      // model.embedding_scale; "" = the base config's (diagnostic arms)
  std::string precision;            // train.precision; "" = the base config's (fp32); E8's arms
  // schedule.decay_start: the inverse-sqrt decay starts after max(warmup, decay_start) steps. -1 =
  // the base config's, which is the suite's primary design: the longest warmup, for every arm, so
  // that arms differ only in the warmup phase. 0 = fairseq's literal schedule (decay from the end
  // of warmup); section 4's arm sets its drop step.
  int64_t decay_start = -1;
  std::string decay_factor;         // schedule.decay_factor ("" = 1): section 4's x0.1 drop at decay_start
  int64_t steps = 0;                // train.steps; 0 = the base config's (v4's SGD claims: their own horizon)
  // E9's arms: a label for the run name ("clip", "qknorm", ...) and the overrides it adds
  std::string arm;
  std::vector<std::pair<std::string, std::string>> extra;

  double lr_value() const;
  // "post-layernorm-adam-lr1e-3-w1-s1" (+ "-d<decay_start>", "-f<factor>", "-t<steps>", "-<arm>"
  // before the seed, "-emb<scale>", "-<precision>" after it, when set): the run directory's name.
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

  // ---- init-time probes (E1, E2, E6's E1): base model in probe_config ----
  std::string probe_config = "theorem1.toml";
  std::vector<std::string> probe_overrides;  // applied to the base model (quick: narrower)
  std::vector<int64_t> e1_depths;
  int64_t e1_fit_from = 6;  // Theorem 1's fits use the depths >= this (E1a also reports the fit over all)
  int e1_seeds = 8;
  ProbeBatch e1_probe;
  std::vector<int64_t> e2_depths;
  int e2_seeds = 8;
  ProbeBatch e2_probe;
  int torch_seeds = 2;  // seeds of E1/E2 recomputed by the PyTorch model (full suite, when torch is found)

  // ---- E5a amplification and the Adam update-size probe ----
  std::string amp_config = "amplification.toml";
  std::vector<int64_t> amp_depths;
  int amp_seeds = 8;
  double amp_lr = 5e-5;
  ProbeBatch amp_probe;
  int update_steps = 40;  // Adam steps of the update-size probe (copy task, lr slice_lr)
  int update_seeds = 8;

  // ---- E6 step time ----
  int timing_warmup = 3, timing_repeats = 21;

  // ---- training on the copy task (E3, E4, E5b-c, E6, E7, E8): base config in copy_config ----
  // The primary design: every arm runs schedule.decay_start = the longest warmup (the base config
  // says so, checked), so the warmup arms differ only before it.
  std::string copy_config;
  std::vector<std::string> lrs;        // E3: Adam lr_max
  std::vector<WarmupLevel> warmups;    // none, short, long
  std::vector<int> seeds;              // every training arm
  // E3c's arms (Pre-LN none, Post-LN long at each lr): enough seeds for the interval to decide the
  // non-inferiority margin (the pilot's paired spread; report.md prints the seeds each claim needed)
  std::vector<int> equivalence_seeds;
  double equivalence_margin = 0.1;     // nats, fixed before the run (docs/xiong/README.md says why)
  std::vector<std::string> sgd_lrs;    // E3h: vanilla SGD (momentum 0), Post-LN none and long
  std::vector<std::string> lr_sweep;   // E4: lrs besides E3's (>= 7 in all, log-spaced), warmup none and e4_warmup
  int64_t e4_warmup = 0;               // E4's warmup: at most 5% of the run (issue 35 item 8)
  std::string slice_lr;                // E5b DeepNorm, E5c sandwich, E6 RMSNorm slices, E7, E8, update probe
  bool literal_design = true;          // E3a': fairseq's literal inverse_sqrt (decay_start 0) without warmup
  int64_t section4_drop = 0;           // E3d: Pre-LN at lr_max, x0.1 at this step, then inverse sqrt (0 = off)
  std::vector<double> copy_targets;    // E3d: validation losses to reach, fixed before the run
  bool pre_radam = true;               // E3g: Pre-LN with RAdam without warmup

  // ---- E9: why Post-LN needs warmup (exploratory): dynamics logs and interventions ----
  std::string e9_config;               // the copy task of E9's sweep
  std::string e9_lr;                   // where Post-LN without warmup fails
  int64_t e9_steps = 0;                // train.steps (0 = the config's)
  int64_t e9_dynamics_steps = 0;       // log.dynamics_steps of every E9 run
  std::vector<int> e9_seeds;

  // ---- the text task (character-level LM; empty text_config = skipped) ----
  std::string text_config;
  std::vector<std::string> text_lrs;   // section 3.2's grid: placement x lr x warmup
  std::vector<int> text_seeds;
  double text_target_fraction = 0.6;   // E3d on text: the loss Post-LN with warmup reaches at 60% of its run

  // ---- E10b/c (exploratory): warmup in the paper's architectures (xiong/e10_training.h) ----
  std::string e10_translate_config = "seq2seq_e10.toml";  // encoder-decoder, synthetic translation
  std::string e10_mlm_config = "encoder_mlm_e10.toml";    // encoder, masked LM on the corpus
  std::vector<std::string> e10_lrs;    // E10b: Adam lr_max of the warmup grid
  std::string e10_mlm_lr;              // E10c: lr_max of both arms
  int64_t e10_warmup = 200;            // the warmup arm's warmup = every arm's decay_start
  int64_t e10_steps = 0;               // train.steps of every E10b/c run (0 = the configs')
  std::vector<std::pair<std::string, std::string>> e10_overrides;  // on every E10b/c run (quick: smaller)
  std::vector<int> e10_seeds;          // E10b's seeds (pilot seed 100 excluded)
  std::vector<int> e10_mlm_seeds;      // E10c's seeds
  double e10_margin = 0.1;             // E10b's non-inferiority margin (nats), fixed before the runs

  int64_t warmup_steps(const std::string& label) const;  // throws for an unknown label
  std::vector<std::string> all_lrs() const;              // lrs and lr_sweep, sorted by value
};

Grids make_grids(bool quick);

// The grid as text for the report: one "key: values" line per setting.
std::vector<std::string> describe_grids(const Grids& grids);

}  // namespace normlab::xiong
