// Paired bootstrap resampling of corpus BLEU (Koehn 2004; sacreBLEU's --paired-bs): is system A
// better than system B on this test set, and by how much? Each resample draws n segment indices
// with replacement (Generator::below(n), in order, from `seed`) and scores both systems on the same
// draw from their per-segment statistics (data/bleu.h), so the difference keeps the pairing.
#pragma once
#include <cstdint>
#include <vector>

#include "data/bleu.h"

namespace normlab {

struct PairedBootstrap {
  double bleu_a = 0.0, bleu_b = 0.0;  // on the whole set
  double difference = 0.0;            // bleu_a - bleu_b on the whole set
  double low = 0.0, high = 0.0;       // percentile 95% interval of the resampled differences
  double share_not_better = 0.0;      // share of resamples where A's BLEU <= B's (a one-sided p-value)
  int64_t resamples = 0;
  uint64_t seed = 0;
};

// a[i], b[i]: segment i's statistics for the two systems against the same references (n_refs of
// them). The interval is nearest-rank: the ceil(0.025 R)-th and ceil(0.975 R)-th of the sorted R
// differences. Throws "[bleu] ..." when a and b differ in length or are empty, or resamples < 1.
PairedBootstrap paired_bootstrap_bleu(const std::vector<BleuStats>& a, const std::vector<BleuStats>& b,
                                      int64_t n_refs, int64_t resamples, uint64_t seed);

}  // namespace normlab
