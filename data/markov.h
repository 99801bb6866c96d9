// Order-k Markov baselines for a language model: the validation loss an n-gram model of the training
// split reaches, so that a transformer's loss can be read against "what counting characters gives".
//
// Witten-Bell interpolation (Witten and Bell 1991; Chen and Goodman 1998, section 2.5), recursive
// from the uniform distribution: for a history h of j tokens and h' its last j - 1 tokens,
//   P_{-1}(w)   = 1 / V
//   P_j(w | h)  = (c(h, w) + N(h) P_{j-1}(w | h')) / (c(h) + N(h))    when c(h) > 0
//               = P_{j-1}(w | h')                                      when h was never seen
// with c(h, w) the count of h followed by w in the training stream, c(h) = sum_w c(h, w) and N(h) the
// number of distinct w that follow h. Every P_j sums to 1 over the vocabulary, and no token that the
// vocabulary holds gets probability 0. Tokens near the start of a stream use the shorter history
// they have.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace normlab {

class MarkovModel {
 public:
  // Counts every history of length 0 .. order in `train`. Token ids must lie in [0, vocab);
  // vocab^(order + 1) must fit in 63 bits. Errors start with "[markov]".
  MarkovModel(const std::vector<int32_t>& train, int64_t vocab, int order);

  int order() const { return order_; }
  // P(w | the `order` tokens before position `pos` of `stream`, or as many as there are).
  double probability(const std::vector<int32_t>& stream, int64_t pos, int32_t w) const;
  // Mean of -ln P(stream[i] | its history) over every position of `stream`, in nats per token.
  double cross_entropy(const std::vector<int32_t>& stream) const;

 private:
  struct History {
    int64_t total = 0;     // c(h)
    int64_t distinct = 0;  // N(h)
  };
  uint64_t history_key(const std::vector<int32_t>& stream, int64_t pos, int length) const;

  int64_t vocab_;
  int order_;
  std::vector<std::unordered_map<uint64_t, History>> histories_;  // [length] -> history key -> counts
  std::vector<std::unordered_map<uint64_t, int64_t>> follows_;    // [length] -> key * V + w -> c(h, w)
};

}  // namespace normlab
