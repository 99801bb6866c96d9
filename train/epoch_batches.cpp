#include "train/epoch_batches.h"

#include <fmt/format.h>

#include "core/error.h"

namespace normlab {

EpochBatches::EpochBatches(const PairDataset& data, const RunConfig& config)
    : data_(data), context_(config.train.context), seed_(config.train.seed) {
  const std::span<const TokenPair> train = data.training_pairs();
  NL_CHECK(!train.empty(), "train",
           "train.max_tokens = {} batches a finite set of pairs (data.source = \"pairs:PATH\" or \"corpus:DIR\"); "
           "'{}' draws pairs without end: use train.batch_size",
           config.train.max_tokens, config.data.source);
  data.check_fits(context_);
  plan_ = plan_token_batches(train, config.train.max_tokens, seed_);
  const std::vector<TokenPair> valid = data.validation_pairs(INT64_MAX);
  if (!valid.empty()) {
    const TokenBatchPlan valid_plan = plan_token_batches(valid, config.train.max_tokens, seed_);
    for (const auto& rows : valid_plan.batches) validation_.push_back(pack(valid, rows));
  }
}

Batch EpochBatches::pack(std::span<const TokenPair> pairs, const std::vector<int64_t>& rows) const {
  std::vector<const TokenPair*> picked;
  for (const int64_t i : rows) picked.push_back(&pairs[i]);
  return pack_pairs(picked, *data_.pair_tokens(), context_,
                    [&](size_t i) { return fmt::format("training pair {}", rows[i]); }, "train");
}

Batch EpochBatches::training_batch(int64_t step) const {
  const int64_t n = batches_per_epoch();
  const std::vector<int64_t> order = epoch_batch_order(n, seed_, step / n);
  return pack(data_.training_pairs(), plan_.batches[order[step % n]]);
}

}  // namespace normlab
