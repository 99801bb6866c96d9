// Decoding and BLEU for model.arch = "encoder_decoder" runs: beam search over the model
// (nn/beam_search.h; beam 1 is greedy decoding) and sacreBLEU's corpus BLEU of the validation
// pairs (data/bleu.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/seq2seq.h"
#include "nn/transformer.h"

namespace normlab {

struct DecodeOptions {
  int64_t beam_size = 5;
  int64_t max_length = 0;  // tokens generated, EOS included; 0 = the model's context_length
  double length_penalty = 1.0;
};

// The best target for `source` (ordinary ids, without EOS): the model encodes source + EOS once
// (as the data feeds it) and beam search extends BOS + prefix through the decoder, all live
// hypotheses in one batch, recomputing the whole prefix each step (no key/value cache). Returns ordinary ids, the final EOS dropped. Runs without the tape
// and in eval mode (the model's mode is restored). Throws "[translate] ..." when source + EOS is
// longer than context_length or the model is not an encoder-decoder.
std::vector<int32_t> translate(TransformerLM& model, const std::vector<int32_t>& source, const PairTokens& tokens,
                               const DecodeOptions& options);

struct BleuReport {
  double bleu = 0.0;  // corpus BLEU, 0-100
  std::vector<std::string> sources, hypotheses, references;  // as data's text (pair_text)
};

// Corpus BLEU of translate() on the first `max_pairs` validation pairs of `data`.
BleuReport validation_bleu(TransformerLM& model, const PairDataset& data, int64_t max_pairs,
                           const DecodeOptions& options);

}  // namespace normlab
