// Training by epochs over batches of at most train.max_tokens tokens (fairseq's loop): the
// training pairs are planned into fixed batches once (data/token_batches.h), each epoch visits
// every batch once in an order drawn from (train.seed, epoch), and step s (0-based) trains on
// batch order(s / n)[s % n], n = batches_per_epoch(). A resumed run needs only its step.
// Validation covers the whole validation split, batched the same way.
#pragma once
#include <cstdint>
#include <vector>

#include "config/run_config.h"
#include "data/seq2seq.h"
#include "data/token_batches.h"

namespace normlab {

class EpochBatches {
 public:
  // Throws "[train] ..." unless `data` has a finite training split (a pairs file or a corpus) and
  // every pair fits train.context.
  EpochBatches(const PairDataset& data, const RunConfig& config);

  int64_t batches_per_epoch() const { return static_cast<int64_t>(plan_.batches.size()); }
  // The batch of step `step` (0-based).
  Batch training_batch(int64_t step) const;
  // Whether update `update` (1-based) is the last of an epoch.
  bool ends_epoch(int64_t update) const { return update % batches_per_epoch() == 0; }
  int64_t epoch_of_update(int64_t update) const { return (update - 1) / batches_per_epoch() + 1; }
  // The whole validation split in batches of at most train.max_tokens tokens, in length order.
  const std::vector<Batch>& validation_batches() const { return validation_; }
  const TokenBatchPlan& plan() const { return plan_; }
  // Mean source + target positions of a training batch (for tokens per second).
  int64_t mean_tokens_per_batch() const { return plan_.real_tokens / batches_per_epoch(); }

 private:
  Batch pack(std::span<const TokenPair> pairs, const std::vector<int64_t>& rows) const;

  const PairDataset& data_;
  int64_t context_;
  uint64_t seed_;
  TokenBatchPlan plan_;
  std::vector<Batch> validation_;
};

}  // namespace normlab
