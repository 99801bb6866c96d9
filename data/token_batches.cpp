#include "data/token_batches.h"

#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "core/random.h"

namespace normlab {

namespace {

constexpr const char* kOp = "batches";

int64_t source_positions(const TokenPair& p) { return static_cast<int64_t>(p.source.size()) + 1; }
int64_t target_positions(const TokenPair& p) { return static_cast<int64_t>(p.target.size()) + 1; }
int64_t size_of(const TokenPair& p) { return std::max(source_positions(p), target_positions(p)); }

// A permutation of 0 .. n-1 from `gen` (Fisher-Yates).
std::vector<int64_t> shuffled(int64_t n, Generator& gen) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(order[i], order[static_cast<int64_t>(gen.below(static_cast<uint64_t>(i + 1)))]);
  return order;
}

// B * S + B * T of one batch: its rows padded to the longest source and the longest target.
int64_t padded_positions(std::span<const TokenPair> pairs, const std::vector<int64_t>& batch) {
  int64_t s = 0, t = 0;
  for (const int64_t i : batch) {
    s = std::max(s, source_positions(pairs[i]));
    t = std::max(t, target_positions(pairs[i]));
  }
  return static_cast<int64_t>(batch.size()) * (s + t);
}

}  // namespace

double TokenBatchPlan::padding_share() const {
  return padded_tokens > 0 ? 1.0 - static_cast<double>(real_tokens) / static_cast<double>(padded_tokens) : 0.0;
}

TokenBatchPlan plan_token_batches(std::span<const TokenPair> pairs, int64_t max_tokens, uint64_t seed) {
  NL_CHECK(max_tokens >= 1, kOp, "max_tokens must be >= 1, got {}", max_tokens);
  Generator gen(seed);
  std::vector<int64_t> order = shuffled(static_cast<int64_t>(pairs.size()), gen);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const TokenPair &x = pairs[a], &y = pairs[b];
    return std::pair(x.source.size(), x.target.size()) < std::pair(y.source.size(), y.target.size());
  });
  TokenBatchPlan plan;
  std::vector<int64_t> batch;
  int64_t longest = 0;
  for (const int64_t i : order) {
    const int64_t n = size_of(pairs[i]);
    NL_CHECK(n <= max_tokens, kOp, "pair {} needs {} tokens (source + EOS or BOS + target), more than max_tokens = {}",
             i, n, max_tokens);
    if (!batch.empty() && static_cast<int64_t>(batch.size() + 1) * std::max(longest, n) > max_tokens) {
      plan.batches.push_back(std::move(batch));
      batch.clear();
      longest = 0;
    }
    batch.push_back(i);
    longest = std::max(longest, n);
    plan.real_tokens += source_positions(pairs[i]) + target_positions(pairs[i]);
  }
  if (!batch.empty()) plan.batches.push_back(std::move(batch));
  for (const auto& b : plan.batches) plan.padded_tokens += padded_positions(pairs, b);
  return plan;
}

std::vector<int64_t> epoch_batch_order(int64_t n_batches, uint64_t seed, int64_t epoch) {
  NL_CHECK(n_batches >= 1 && epoch >= 0, kOp, "needs n_batches >= 1 and epoch >= 0, got {} and {}", n_batches, epoch);
  Generator gen(seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(epoch) + 1);
  return shuffled(n_batches, gen);
}

}  // namespace normlab
