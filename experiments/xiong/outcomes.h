// Classifying training runs on the copy task: "learned", "failed" (stayed near chance), diverged,
// and summaries over seeds. The thresholds are stated in the report next to every table.
#pragma once
#include <string>
#include <vector>

#include "experiments/xiong/report.h"
#include "experiments/xiong/training.h"

namespace normlab::xiong {

struct CopyThresholds {
  double chance = 0;       // ln(copy_vocab - 1): uniform over the symbols
  double fail_above = 0;   // capped final val loss >= this: failed (stayed near chance)
  double learn_below = 0;  // final val loss <= this: learned
  std::string describe() const;
};
// chance = ln(copy_vocab - 1) of the copy config; fail_above = chance - 0.3; learn_below = chance / 2.
CopyThresholds copy_thresholds(const Context& ctx);
// For a text corpus: relative to the mean loss at init of the runs (no chance level is known).
CopyThresholds text_thresholds(double initial_loss);

struct GroupSummary {
  int n = 0, learned = 0, failed = 0, diverged = 0;
  Stats capped;                      // RunOutcome::capped_final over seeds
  std::vector<int64_t> diverged_at;  // steps
  bool majority_learned() const { return n > 0 && 2 * learned > n; }
  bool majority_failed() const { return n > 0 && 2 * failed > n; }
  std::string final_text() const;     // "0.123 ± 0.004"
  std::string learned_text() const;   // "2/3"
  std::string diverged_text() const;  // "1/3 (step 45)" or "0/3"
};
GroupSummary summarize(const std::vector<const RunOutcome*>& runs, const CopyThresholds& th);

}  // namespace normlab::xiong
