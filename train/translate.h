// Decoding and BLEU for model.arch = "encoder_decoder" runs: beam search over the model
// (nn/beam_search.h; beam 1 is greedy decoding) and sacreBLEU's corpus BLEU of the validation
// pairs (data/bleu.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/bleu.h"
#include "data/chrf.h"
#include "data/seq2seq.h"
#include "nn/transformer.h"

namespace normlab {

struct DecodeOptions {
  int64_t beam_size = 5;
  // Tokens generated, EOS included; 0 = fairseq's max_len_a * |source| + max_len_b with a = 1.2,
  // b = 10 (decode_length_limit), both at most the model's context_length.
  int64_t max_length = 0;
  double length_penalty = 1.0;
};

// The most tokens decoding a source of `source_tokens` may generate (EOS included): `max_length` when
// > 0, else ceil(1.2 * source_tokens) + 10; never above context_length.
int64_t decode_length_limit(int64_t max_length, int64_t source_tokens, int64_t context_length);

// The best target for `source` (ordinary ids, without EOS): the model encodes source + EOS once
// (as the data feeds it) and beam search extends BOS + prefix through the decoder incrementally
// (TransformerLM::decode_step), all live hypotheses one batch, each step feeding one token per
// hypothesis on the cached state of the prefix it extends. Returns ordinary ids, the final EOS
// dropped. Runs without the tape and in eval mode (the model's mode is restored). Throws
// "[translate] ..." when source + EOS is longer than context_length or the model is not an
// encoder-decoder.
std::vector<int32_t> translate(TransformerLM& model, const std::vector<int32_t>& source, const PairTokens& tokens,
                               const DecodeOptions& options);

// Greedy decoding of many sources at once: the sources sorted by length and cut into batches of
// at most `max_tokens` padded source tokens (rows = max_tokens / longest source + EOS, at least 1),
// each batch encoded once (with its padding mask) and decoded incrementally, every row extended by
// its argmax token until it gives EOS or reaches its decode_length_limit, when it leaves the batch. Row i of the
// result is the translation of sources[i], EOS dropped: what translate() with beam 1 gives, up to
// the rounding of the padded batch's products. Eval mode, no tape.
std::vector<std::vector<int32_t>> translate_greedy(TransformerLM& model, const std::vector<std::vector<int32_t>>& sources,
                                                   const PairTokens& tokens, int64_t max_length, int64_t max_tokens);

// One split translated and scored against all its references: BLEU and chrF with sacreBLEU's
// signatures, and the texts.
struct SplitScore {
  BleuScore bleu;
  ChrfScore chrf;
  std::vector<std::string> sources, hypotheses;
  std::vector<std::vector<std::string>> references;  // streams, as corpus_bleu_score takes them
};

// The first max_pairs pairs of `split`, decoded greedily in batches (beam_size 1, translate_greedy)
// or by beam search one source at a time, and scored against data.eval_references(split).
SplitScore score_split(TransformerLM& model, const PairDataset& data, EvalSplit split, int64_t max_pairs,
                       const DecodeOptions& options);

}  // namespace normlab
