// What a training run's loss means: each task's trivial baseline (the copy task's chance level,
// the text corpus's unigram cross-entropy), "learned" defined against it, and summaries of an arm
// over seeds for the report's tables.
#pragma once
#include <string>
#include <vector>

#include "xiong/report.h"
#include "xiong/training.h"

namespace normlab::xiong {

struct Baseline {
  std::string name;         // "chance (ln 63)", "unigram cross-entropy"
  double loss = NAN;        // the trivial model's loss (nats per predicted token)
  double learn_below = NAN; // a run "learned" if its final validation loss is <= this
  double diverge_above = NAN;  // 1.5 ln V: a loss above this after step 100 is a divergence
  static constexpr int64_t kDivergenceAfter = 100;
  std::string describe() const;  // one sentence for the report
};

// Copy task: uniform over the copy_vocab - 1 symbols; learned = at most half of chance.
Baseline copy_baseline(const Context& ctx);
Baseline copy_baseline(const std::string& config_path);  // of any copy-task config
// The synthetic translation task (data.source "seq2seq_translate", E10b): uniform over the target's
// copy_vocab words and EOS; learned = at most half of it; diverged = above 1.5 ln(copy_vocab + 3).
Baseline translation_baseline(const std::string& config_path);
// Text corpus of text_config: the cross-entropy of its validation split under the training split's
// character frequencies (add-one smoothed); learned = below it (the model uses context).
Baseline text_baseline(const Context& ctx);
Baseline text_baseline(const std::string& config_path);
// The order-1 (bigram) and order-2 Markov models of text_config's text (data/markov.h: fitted on
// the training split, scored on the validation split), drawn beside the text task's curves.
std::vector<Baseline> text_markov_baselines(const Context& ctx);
// The order-k Markov models of any text config, for each k of `orders` (named "order-k Markov model").
std::vector<Baseline> markov_baselines(const std::string& config_path, const std::vector<int>& orders);
// The same for any text and tokenizer (tests).
double unigram_cross_entropy(const std::string& text, const std::string& tokenizer_kind, double val_fraction);

// Wortsman et al. 2023's learning-rate sensitivity of one setting: the mean over its lr sweep of
// capped[i] - min(capped), capped[i] = min(loss(lr_i), loss at init). NaN when any lr is missing.
double lr_sensitivity(const std::vector<double>& capped);
// The basin width of an lr sweep (issue 35 item 8): log10(largest lr) - log10(smallest lr) over the
// rates whose capped loss lies within `within` nats of the sweep's best (0 when only the best does),
// in decades. NaN when any loss is missing. lrs and capped pair up, any order.
double basin_width(const std::vector<double>& lrs, const std::vector<double>& capped, double within);

struct ArmSummary {
  int n = 0, learned = 0, diverged = 0;
  std::vector<double> capped;  // RunOutcome::capped_final per seed (NaN: missing)
  // "0.123 [0.101, 0.145] (learned 4/5)" plus ", diverged 1" when any did.
  std::string text(int digits = 3) const;
};
ArmSummary summarize(const TrainingResults& runs, const TrainPoint& point, const std::vector<int>& seeds,
                     const Baseline& baseline);

}  // namespace normlab::xiong
