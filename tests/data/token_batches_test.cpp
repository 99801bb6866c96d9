// Batches by token count (data/token_batches.h): every pair once, no batch over max_tokens, the
// bound met exactly, length order, the padding share, and the per-epoch order.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/random.h"
#include "data/token_batches.h"
#include "data_test_util.h"

namespace normlab {
namespace {

using test::error_of;

TokenPair pair_of(size_t source, size_t target) {
  return {std::vector<int32_t>(source, 1), std::vector<int32_t>(target, 2)};
}

int64_t size_of(const TokenPair& p) {
  return static_cast<int64_t>(std::max(p.source.size(), p.target.size())) + 1;
}

TEST(TokenBatches, EveryPairOnceAndNoBatchOverTheBound) {
  Generator gen(5);
  std::vector<TokenPair> pairs;
  for (int i = 0; i < 500; ++i) pairs.push_back(pair_of(1 + gen.below(40), 1 + gen.below(50)));
  const TokenBatchPlan plan = plan_token_batches(pairs, 300, 7);
  std::multiset<int64_t> seen;
  int64_t previous_longest = 0;
  for (const auto& batch : plan.batches) {
    int64_t longest = 0;
    for (const int64_t i : batch) {
      seen.insert(i);
      longest = std::max(longest, size_of(pairs[i]));
    }
    EXPECT_LE(static_cast<int64_t>(batch.size()) * longest, 300);
    // Sorted by source length: a batch's longest source is at most the next batch's shortest.
    EXPECT_GE(static_cast<int64_t>(pairs[batch.front()].source.size()), previous_longest);
    previous_longest = static_cast<int64_t>(pairs[batch.back()].source.size());
  }
  ASSERT_EQ(seen.size(), pairs.size());
  for (int64_t i = 0; i < 500; ++i) EXPECT_EQ(seen.count(i), 1u) << i;
  // The same seed, the same plan; another seed orders ties otherwise.
  EXPECT_EQ(plan_token_batches(pairs, 300, 7).batches, plan.batches);
  EXPECT_NE(plan_token_batches(pairs, 300, 8).batches, plan.batches);
}

TEST(TokenBatches, TheBoundIsMetExactlyAndPaddingCounted) {
  // Twelve pairs of 3 + 1 = 4 tokens a side: max_tokens 12 takes exactly 3 a batch.
  std::vector<TokenPair> pairs(12, pair_of(3, 2));
  const TokenBatchPlan plan = plan_token_batches(pairs, 12, 1);
  ASSERT_EQ(plan.batches.size(), 4u);
  for (const auto& batch : plan.batches) EXPECT_EQ(batch.size(), 3u);
  // Real: 12 * (4 + 3); padded: 4 batches of 3 * (4 + 3): no padding.
  EXPECT_EQ(plan.real_tokens, 84);
  EXPECT_EQ(plan.padded_tokens, 84);
  EXPECT_DOUBLE_EQ(plan.padding_share(), 0.0);
  // Two pairs in one batch, sources 1 and 3, targets 5 and 1: S = 4, T = 6, padded 2 * 10 = 20,
  // real (2 + 6) + (4 + 2) = 14, padding 6 / 20.
  const std::vector<TokenPair> two = {pair_of(1, 5), pair_of(3, 1)};
  const TokenBatchPlan mixed = plan_token_batches(two, 12, 1);
  ASSERT_EQ(mixed.batches.size(), 1u);
  EXPECT_EQ(mixed.real_tokens, 14);
  EXPECT_EQ(mixed.padded_tokens, 20);
  EXPECT_DOUBLE_EQ(mixed.padding_share(), 0.3);
}

TEST(TokenBatches, APairLargerThanTheBoundIsAnError) {
  const std::vector<TokenPair> pairs = {pair_of(2, 2), pair_of(20, 3)};
  EXPECT_NE(error_of([&] { plan_token_batches(pairs, 10, 1); })
                .find("pair 1 needs 21 tokens (source + EOS or BOS + target), more than max_tokens = 10"),
            std::string::npos);
  EXPECT_NE(error_of([&] { plan_token_batches(pairs, 0, 1); }).find("max_tokens must be >= 1"), std::string::npos);
}

TEST(TokenBatches, EachEpochVisitsEveryBatchInItsOwnOrder) {
  const std::vector<int64_t> first = epoch_batch_order(50, 3, 0), second = epoch_batch_order(50, 3, 1);
  std::vector<int64_t> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 50; ++i) EXPECT_EQ(sorted[i], i);
  EXPECT_NE(first, second);
  EXPECT_EQ(first, epoch_batch_order(50, 3, 0));
  EXPECT_NE(first, epoch_batch_order(50, 4, 0));
}

}  // namespace
}  // namespace normlab
