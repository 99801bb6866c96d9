#include "data/markov.h"

#include <cmath>

#include "core/error.h"

namespace normlab {

MarkovModel::MarkovModel(const std::vector<int32_t>& train, int64_t vocab, int order)
    : vocab_(vocab), order_(order), histories_(order + 1), follows_(order + 1) {
  NL_CHECK(order >= 0, "markov", "order must be >= 0, got {}", order);
  NL_CHECK(vocab >= 1, "markov", "vocab must be >= 1, got {}", vocab);
  // (history key) * V + w < V^(order + 1) must fit in 63 bits
  double keys = std::pow(static_cast<double>(vocab), order + 1);
  NL_CHECK(keys < 9.2e18, "markov", "vocab^(order + 1) = {:.3g} does not fit in 63 bits (vocab {}, order {})",
           keys, vocab, order);
  const auto n = static_cast<int64_t>(train.size());
  for (int64_t pos = 0; pos < n; ++pos) {
    const int32_t w = train[pos];
    NL_CHECK(w >= 0 && w < vocab, "markov", "token {} at position {} is outside the vocabulary [0, {})", w, pos,
             vocab);
    for (int length = 0; length <= order && length <= pos; ++length) {
      const uint64_t h = history_key(train, pos, length);
      int64_t& count = follows_[length][h * static_cast<uint64_t>(vocab) + static_cast<uint64_t>(w)];
      History& hist = histories_[length][h];
      hist.total += 1;
      if (count++ == 0) hist.distinct += 1;
    }
  }
}

// The `length` tokens before `pos` as a number in base V (length 0: 0).
uint64_t MarkovModel::history_key(const std::vector<int32_t>& stream, int64_t pos, int length) const {
  uint64_t key = 0;
  for (int64_t i = pos - length; i < pos; ++i) key = key * static_cast<uint64_t>(vocab_) + static_cast<uint64_t>(stream[i]);
  return key;
}

double MarkovModel::probability(const std::vector<int32_t>& stream, int64_t pos, int32_t w) const {
  double p = 1.0 / static_cast<double>(vocab_);  // P_{-1}
  const int longest = static_cast<int>(std::min<int64_t>(order_, pos));
  for (int length = 0; length <= longest; ++length) {
    const uint64_t h = history_key(stream, pos, length);
    const auto hist = histories_[length].find(h);
    if (hist == histories_[length].end()) break;  // never seen: neither is any longer history
    const auto follow = follows_[length].find(h * static_cast<uint64_t>(vocab_) + static_cast<uint64_t>(w));
    const double c_hw = follow == follows_[length].end() ? 0.0 : static_cast<double>(follow->second);
    const auto total = static_cast<double>(hist->second.total), distinct = static_cast<double>(hist->second.distinct);
    p = (c_hw + distinct * p) / (total + distinct);
  }
  return p;
}

double MarkovModel::cross_entropy(const std::vector<int32_t>& stream) const {
  NL_CHECK(!stream.empty(), "markov", "cross_entropy of an empty stream");
  double nats = 0.0;
  const auto n = static_cast<int64_t>(stream.size());
  for (int64_t pos = 0; pos < n; ++pos) {
    NL_CHECK(stream[pos] >= 0 && stream[pos] < vocab_, "markov",
             "token {} at position {} is outside the vocabulary [0, {})", stream[pos], pos, vocab_);
    nats -= std::log(probability(stream, pos, stream[pos]));
  }
  return nats / static_cast<double>(n);
}

}  // namespace normlab
