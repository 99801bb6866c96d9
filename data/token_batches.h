// Batches by token count, as fairseq's batch_by_size: the training pairs are ordered by length
// once (source length, then target length; ties in an order fixed by a seed), then cut greedily
// into batches whose B rows, padded to the longest row, hold at most max_tokens tokens:
//   a pair's size  n_i = max(|source_i| + 1, |target_i| + 1)   (source + EOS, BOS + target)
//   a batch        B * max_i n_i <= max_tokens
// so short pairs travel in many-row batches and long pairs in few-row ones, with little padding.
// The batches stay fixed for the whole run; each epoch visits all of them in an order drawn from
// (seed, epoch) (fairseq shuffles its batches per epoch too), so step s is batch
// order(s / n)[s % n] and a resumed run needs nothing but its step.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "data/seq2seq.h"

namespace normlab {

struct TokenBatchPlan {
  std::vector<std::vector<int64_t>> batches;  // indices into the pairs, each batch sorted by length
  int64_t real_tokens = 0;    // sum over pairs of (|source| + 1) + (|target| + 1)
  int64_t padded_tokens = 0;  // sum over batches of B * S + B * T (what the model computes)
  // The share of computed source and target positions that are padding: 1 - real / padded.
  double padding_share() const;
};

// Throws "[batches] ..." when max_tokens < 1 or when one pair alone is larger than max_tokens
// (naming the pair's index and size).
TokenBatchPlan plan_token_batches(std::span<const TokenPair> pairs, int64_t max_tokens, uint64_t seed);

// The order of the batches in epoch `epoch` (0-based): a permutation of 0 .. n_batches-1 drawn
// from (seed, epoch) alone.
std::vector<int64_t> epoch_batch_order(int64_t n_batches, uint64_t seed, int64_t epoch);

}  // namespace normlab
