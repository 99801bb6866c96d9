// Beam search over any next-token scorer (fairseq's search, simplified to one source sentence).
//
// A hypothesis is a token prefix (BOS excluded, EOS included once it finishes) with the sum of its
// tokens' log-probabilities. Each step every live hypothesis is extended by every token; the
// 2 k best extensions (k = beam size; at most k of them end in EOS, so k others remain) are read
// in order of score until k are live:
//   - an extension ending in EOS finishes its hypothesis (while fewer than k have finished);
//   - any other extension becomes a live hypothesis of the next step.
// A finished hypothesis never grows again. Search stops when k hypotheses have finished, or after
// max_length tokens, when the live hypotheses are finished by force (EOS appended, its
// log-probability counted). The answer is the finished hypothesis with the best
//   score / length^length_penalty      (length counts the EOS; fairseq's lenpen, default 1),
// ties broken by order of finishing. k = 1 is greedy decoding: the argmax token each step.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

namespace normlab {

struct Hypothesis {
  std::vector<int32_t> tokens;  // without BOS; ends with EOS when finished
  double log_prob = 0.0;        // sum of the tokens' log-probabilities
  double score = 0.0;           // log_prob / length^length_penalty
};

struct BeamOptions {
  int64_t beam_size = 5;
  int64_t max_length = 200;  // tokens generated, EOS included
  double length_penalty = 1.0;
  int32_t eos = 0;
};

// Next-token log-probabilities for each prefix: prefixes[i] (tokens so far, BOS excluded) ->
// result[i] (V values, log-softmax of the model's logits at the prefix's last position). The
// prefixes of one call all have step - 1 tokens, so a model can score them as one batch.
using NextTokenScorer =
    std::function<std::vector<std::vector<double>>(const std::vector<std::vector<int32_t>>& prefixes)>;

// The finished hypotheses, best first (at most beam_size). Throws "[beam_search] ..." on a beam
// size < 1, a max_length < 1, an EOS outside the scorer's vocabulary, or a scorer that returns
// the wrong number of rows or rows of different lengths.
std::vector<Hypothesis> beam_search(const NextTokenScorer& scorer, const BeamOptions& options);

}  // namespace normlab
