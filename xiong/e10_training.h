// E10b and E10c (exploratory, issue 37): Xiong's warmup claims trained in the paper's own
// architectures, and their statistics and verdict rules on plain numbers, so that the rules can be
// tested on synthetic inputs (tests/xiong/e10_training_test.cpp) apart from any training.
//   E10b  the warmup grid (E3a, E3c) on the synthetic translation task, encoder-decoder
//         (e10_translation.cpp): final validation loss and BLEU per arm.
//   E10c  section 4's BERT claim in a masked-LM encoder (e10_bert.cpp): Pre-LN without warmup
//         reaches Post-LN-with-warmup's final validation loss in fewer steps.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "xiong/verdict.h"

namespace normlab::xiong {

using Curve = std::vector<std::pair<double, double>>;  // (step, validation loss)

// E3a's analogue: the paired difference of final validation losses, no warmup minus warmup, over
// seeds (a[i] and b[i] are the same seed). Reproduced when the 95% t interval lies above 0,
// contradicted below it. When no value of either arm is <= learn_below, neither arm learned and the
// verdict is inconclusive, whatever the interval.
Verdict needs_warmup_verdict(const std::vector<double>& none, const std::vector<double>& warm, double learn_below);

// E3c's analogue (non-inferiority): the paired difference Pre-LN none minus Post-LN warmup of final
// validation losses. Reproduced when the interval lies below `margin`, contradicted when it lies
// above it; inconclusive when neither arm learned (as above).
Verdict matches_verdict(const std::vector<double>& pre_none, const std::vector<double>& post_warm, double margin,
                        double learn_below);

// The first evaluated step whose loss is <= target (-1: never).
int64_t first_step_at_or_below(const Curve& curve, double target);

// E10c's statistic, paired by seed: seed i's target is Post-LN-with-warmup's final validation loss
// in that seed; post_steps[i] the first step at which that run's curve reached it, pre_steps[i] the
// first step at which the Pre-LN run of the same seed did (NaN: never, censored at `run_length`);
// ratio[i] = pre_steps / post_steps. `ratio` is the geometric mean with its log-ratio t interval,
// censored seeds entering at run_length / post_steps (a lower bound of their ratio).
struct Speedup {
  std::vector<double> targets, post_steps, pre_steps, ratios;
  int censored = 0;
  Interval ratio;
};
Speedup speedup(const std::vector<Curve>& post_warm, const std::vector<double>& post_final,
                const std::vector<Curve>& pre_none, int64_t run_length);

// Pre-LN reaches it sooner: reproduced when the ratio's interval lies below 1, contradicted when
// above 1; a reproduced verdict with censored Pre-LN seeds becomes inconclusive (their ratios are
// only lower bounds). The note says whether the paper's ratio (500k / 700k updates) is inside.
Verdict speedup_verdict(const Speedup& s, int64_t steps);

// The paper's BERT numbers: Post-LN reaches validation loss 1.69 at 700k updates, Pre-LN at 500k.
constexpr double kPaperBertRatio = 500.0 / 700.0;

}  // namespace normlab::xiong
