// Sequence-to-sequence data for an encoder-decoder model: pairs (source, target) of token ids,
// batched as (see Batch in data/dataset.h)
//   sources        (B, S)  source tokens, EOS, PAD ...        S = longest source + 1 in the batch
//   source_padding (B, S)  1 where sources is PAD, else 0
//   inputs         (B, T)  BOS, target tokens, PAD ...        T = longest target + 1 in the batch
//   targets        (B, T)  target tokens, EOS, -1 ...         (-1: ignored by the loss)
// Special ids follow the ordinary vocabulary V0: PAD = V0, BOS = V0 + 1, EOS = V0 + 2; the
// dataset's vocab_size() is V0 + 3. S and T must be <= sample()'s context, else an error naming
// the pair (file and line for a pairs file).
//
// Sources (DataConfig::source):
//   "pairs:PATH"         a UTF-8 TSV file, one `source<TAB>target` pair per line (data/pairs_file.cpp)
//   "seq2seq_copy"       synthetic: target = source
//   "seq2seq_reverse"    synthetic: target = source reversed
//   "seq2seq_translate"  synthetic: a fixed word map and adjacent words swapped (data/seq2seq_tasks.cpp)
//   "corpus:DIR"         a translation corpus (data/translation_corpus.h, `normlab data bible`): its
//                        training, validation and test splits, the second reference beside each
//                        held-out target (data/corpus_dataset.cpp)
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace normlab {

enum class EvalSplit { Validation, Test };

// One pair of ordinary token ids, without BOS/EOS/PAD.
struct TokenPair {
  std::vector<int32_t> source, target;
};

// A sequence-to-sequence dataset: pair_tokens() is always set.
class PairDataset : public Dataset {
 public:
  // Up to max_pairs (>= 0) validation pairs, the same ones in the same order on every call, none of
  // them a training pair: a pairs file's validation lines in file order; a synthetic task's first
  // max_pairs from a fixed stream.
  virtual std::vector<TokenPair> validation_pairs(int64_t max_pairs) const = 0;
  // Throws, naming the first pair (file:line for a pairs file) whose source + EOS or BOS + target
  // is longer than `context`; sample() throws the same for a drawn pair. Call it before training.
  virtual void check_fits(int64_t context) const = 0;
  // Every training pair of a finite source (a pairs file, a corpus), for batches by token count
  // (data/token_batches.h); empty for the synthetic tasks, which draw pairs without end.
  virtual std::span<const TokenPair> training_pairs() const { return {}; }
  // The pairs of an evaluation split, as validation_pairs(max_pairs) for Validation; Test: a
  // corpus's test split, none elsewhere.
  virtual std::vector<TokenPair> eval_pairs(EvalSplit split, int64_t max_pairs) const;
  // The references of eval_pairs(split, max_pairs) as BLEU streams (corpus_bleu_score's layout):
  // stream 0 is each target's text (pair_text); a corpus adds its second reference as stream 1.
  virtual std::vector<std::vector<std::string>> eval_references(EvalSplit split, int64_t max_pairs) const;
};

// The PairDataset behind `data`, or null for other datasets.
const PairDataset* as_pair_dataset(const Dataset& data);

// Token ids as words "w12 w3 w0": how synthetic tasks (no tokenizer) are shown and scored by BLEU.
std::string render_ids(const std::vector<int32_t>& ids);
// The text of a reference or generated target: ids up to the first EOS, with PAD and BOS dropped,
// decoded by data's tokenizer, or render_ids() when it has none (synthetic tasks).
std::string pair_text(const PairDataset& data, const std::vector<int32_t>& ids);

// The inverse of pair_text for a user's text: data's tokenizer, or words "w12 w3" for a synthetic
// task (an unknown word is an error naming it).
std::vector<int32_t> pair_ids(const PairDataset& data, const std::string& text);
// Packs pairs into a batch as described above. `where(i)` names pair i in the error when it does
// not fit in `context` (e.g. "'pairs.tsv':12").
Batch pack_pairs(const std::vector<const TokenPair*>& pairs, const PairTokens& tokens, int64_t context,
                 const std::function<std::string(size_t)>& where, const char* op);
// Throws "[op] the pair at <where()> does not fit in context ..." unless source + EOS and BOS + target
// are both <= context.
void check_pair_fits(const TokenPair& pair, int64_t context, const std::function<std::string()>& where,
                     const char* op);
// The special ids after an ordinary vocabulary of `ordinary_vocab`; throws if they overflow int32.
PairTokens pair_tokens_after(int64_t ordinary_vocab, const char* op);

// A pairs file's dataset: tokenizer `tokenizer_kind` ("char": the vocabulary of both sides of
// every pair; "byte"), the last floor(N * val_fraction) pairs for validation. Each line is
// `source<TAB>target`; a line without a tab, with more than one, with an empty side or not valid
// UTF-8 is an error naming `path:line`. A final newline is optional; '\r' before it is dropped.
std::unique_ptr<PairDataset> make_pairs_dataset(const std::string& path, const std::string& tokenizer_kind,
                                                double val_fraction);
// The same from text already read; `name` stands for the path in errors.
std::unique_ptr<PairDataset> make_pairs_dataset_from_text(const std::string& text, const std::string& name,
                                                          const std::string& tokenizer_kind, double val_fraction);
// The same with config's tokenizer (data.tokenizer = "sentencepiece": trained on both sides of the
// training pairs only with config's options, or loaded from config.saved_tokenizer_dir) and
// config.val_fraction.
std::unique_ptr<PairDataset> make_pairs_dataset(const std::string& path, const DataConfig& config);
std::unique_ptr<PairDataset> make_pairs_dataset_from_text(const std::string& text, const std::string& name,
                                                          const DataConfig& config);

enum class Seq2SeqTask { Copy, Reverse, Translate };
// A synthetic task over `vocab` ordinary words (ids 0 .. vocab-1): sources of uniform length in
// [min_length, max_length] with uniform words; a source is a validation source iff a fixed hash of
// it falls below val_fraction, so training and validation never share a pair.
std::unique_ptr<PairDataset> make_seq2seq_task(Seq2SeqTask task, int64_t min_length, int64_t max_length,
                                               int64_t vocab, double val_fraction);
// The target of `source` under the task's rule (the reference the model must learn).
std::vector<int32_t> seq2seq_target(Seq2SeqTask task, const std::vector<int32_t>& source, int64_t vocab);

// A translation corpus's dataset (data.source = "corpus:DIR"): the tokenizer (sentencepiece: trained
// on both sides of the training split only) encodes the three splits; sample() draws from training
// or validation as a pairs file's dataset does; eval_pairs(Test) is the test split.
std::unique_ptr<PairDataset> make_corpus_dataset(const std::string& dir, const DataConfig& config);

// Whether `source` (DataConfig::source) names sequence-to-sequence data: "pairs:...", "corpus:..." or a task.
bool is_seq2seq_source(const std::string& source);
// The sequence-to-sequence dataset of config.source, or null when it names none.
std::unique_ptr<Dataset> make_seq2seq_dataset(const DataConfig& config);

}  // namespace normlab
