// Text data for language modelling: tokenizers, a text dataset with a train/val split and seeded
// random windows, a synthetic copy task, and the built-in default corpus.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/random.h"
#include "core/tensor.h"

namespace normlab {

struct DataConfig {
  // "default" (built-in corpus) | "copy" (synthetic) | a UTF-8 file path | sequence-to-sequence
  // (data/seq2seq.h): "pairs:PATH" (a TSV file of source<TAB>target lines) | "seq2seq_copy" |
  // "seq2seq_reverse" | "seq2seq_translate" (synthetic)
  std::string source = "default";
  // "char" (vocab from the training text) | "byte" (256) | "sentencepiece" (trained on the training
  // split of a pairs source, data/sentencepiece.h)
  std::string tokenizer = "char";
  double val_fraction = 0.1;
  // model.arch "encoder": the fraction of each sequence's positions a masked-LM batch predicts
  // (make_masked_lm_dataset; at least one per sequence).
  double mask_prob = 0.15;
  // copy task: `copy_length` random tokens from a vocabulary of `copy_vocab`, a separator, the same
  // tokens again; loss only on the copied half.
  int64_t copy_length = 16;
  int64_t copy_vocab = 64;
  // synthetic sequence-to-sequence tasks (seq2seq_*): source lengths are uniform in
  // [seq2seq_min_length, copy_length] over copy_vocab ordinary words.
  int64_t seq2seq_min_length = 4;
  // tokenizer "sentencepiece": the vocabulary size (the pieces, <unk> included) and the model type,
  // "bpe" | "unigram".
  int64_t sentencepiece_vocab = 8000;
  std::string sentencepiece_type = "bpe";
  // Not a config key: a run directory whose saved tokenizer (tokenizer.json and the model file it
  // names) a trained tokenizer ("sentencepiece") is loaded from instead of trained: set when a run is
  // resumed or sampled, so that it decodes with the model it was trained with. "" = train one.
  std::string saved_tokenizer_dir;
};

// A file a tokenizer keeps beside tokenizer.json in a run directory (its to_json() names it).
struct TokenizerFile {
  std::string name;   // a plain file name, e.g. "sentencepiece.model"
  std::string bytes;  // its content
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  virtual std::string kind() const = 0;  // "char" | "byte" | "sentencepiece"
  virtual int64_t vocab_size() const = 0;
  virtual std::vector<int32_t> encode(const std::string& text) const = 0;
  virtual std::string decode(const std::vector<int32_t>& ids) const = 0;
  // JSON text that load_tokenizer() reads back (saved with every run as tokenizer.json).
  virtual std::string to_json() const = 0;
  // The files to write beside tokenizer.json, before it (sentencepiece: its model); none for char
  // and byte.
  virtual std::vector<TokenizerFile> files() const { return {}; }
};

// "char" or "byte" from the text; "sentencepiece" is trained by a dataset on its training split
// (data/sentencepiece.h), so here it is an error saying so.
std::unique_ptr<Tokenizer> make_tokenizer(const std::string& kind, const std::string& training_text);
// The tokenizer of tokenizer.json's text. `run_dir` is the directory holding it and the files it
// names (sentencepiece's model, checked against the size and CRC-32 in the JSON); char and byte
// need none. Errors name the file.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& json_text, const std::filesystem::path& run_dir = {});

struct Batch {
  Tensor inputs;   // (B, T) int32
  Tensor targets;  // (B, T) int32; -1 = ignored position
  Tensor sources;  // (B, S) int32, sequence-to-sequence datasets only (undefined otherwise): source tokens then EOS, right-padded with PAD
  Tensor source_padding;  // (B, S) int32, 1 = PAD, 0 = token; undefined when sources is
};
// The special ids of a sequence-to-sequence dataset (data/seq2seq.h). They follow the ordinary
// vocabulary V0 (the tokenizer's or the task's): pad = V0, bos = V0 + 1, eos = V0 + 2, and the
// dataset's vocab_size() is V0 + 3.
struct PairTokens {
  int32_t pad, bos, eos;
};
// Uninitialised inputs and targets of (batch, context); throws "[op] batch * context = ... overflows".
Batch empty_batch(int64_t batch, int64_t context, const char* op);
// The batch's tensors (the undefined ones stay undefined) on `device`.
Batch batch_on(const Batch& batch, Device device);

// A source of batches. sample() draws from `gen` only, so restoring gen's state resumes the stream.
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t vocab_size() const = 0;
  virtual Batch sample(bool validation, int64_t batch, int64_t context, Generator& gen) const = 0;
  virtual const Tokenizer* tokenizer() const = 0;  // null for synthetic tasks
  // Sequence-to-sequence datasets (data/seq2seq.h) return their special ids; others nullopt.
  virtual std::optional<PairTokens> pair_tokens() const { return std::nullopt; }
};

// A language-modelling dataset over `text`: a tokenizer of `tokenizer_kind` built from the whole
// text (so validation never meets an unknown character), the token stream split into the first
// N - floor(N * val_fraction) tokens for training and the rest for validation. `source` names the
// text in errors (a path, "the default corpus").
std::unique_ptr<Dataset> make_text_dataset(const std::string& text, const std::string& tokenizer_kind,
                                           double val_fraction, const std::string& source);

// The synthetic copy task: symbols 0 .. copy_vocab-2, separator copy_vocab-1. Each sequence is
// x (copy_length random symbols), SEP, x; inputs = seq[:-1], targets = seq[1:] with the first
// copy_length targets set to -1, so exactly copy_length positions (the copy) count. sample()
// needs context == 2 * copy_length; validation draws from the same distribution.
std::unique_ptr<Dataset> make_copy_task(int64_t copy_length, int64_t copy_vocab);

// Builds the dataset named by config ("default", "copy", a path, or a sequence-to-sequence source:
// "pairs:PATH", "seq2seq_copy", "seq2seq_reverse", "seq2seq_translate"). Errors name the file.
std::unique_ptr<Dataset> make_dataset(const DataConfig& config);

// Masked-language-model batches (BERT) from any base dataset (data/masked_lm.cpp): the base's input
// windows, with k = max(1, round(mask_prob * T)) random positions per sequence selected; targets
// are the original tokens there and -1 elsewhere; a selected input becomes [MASK] (id = base vocab,
// so vocab_size() is the base's + 1) with probability 0.8, a random ordinary token 0.1, itself 0.1.
// Draws from `gen` only. The tokenizer is the base's (it has no [MASK]).
std::unique_ptr<Dataset> make_masked_lm_dataset(std::unique_ptr<Dataset> base, double mask_prob);
// make_dataset(config), wrapped in make_masked_lm_dataset(config.mask_prob) when masked_lm (the
// data of a model.arch = "encoder" run).
std::unique_ptr<Dataset> make_dataset(const DataConfig& config, bool masked_lm);

// The token streams a text dataset samples from: the tokenizer built from the whole text, the first
// N - floor(N * val_fraction) tokens for training, the rest for validation.
struct TokenStreams {
  std::vector<int32_t> train, val;
  int64_t vocab_size = 0;
};
TokenStreams split_text(const std::string& text, const std::string& tokenizer_kind, double val_fraction);
// The streams of config's text source (make_dataset's "default" or a path); the copy task has none
// (an error). The Markov baselines (data/markov.h) read these.
TokenStreams load_token_streams(const DataConfig& config);

// The built-in corpus: English text from Debian's `fortunes` package (/usr/share/games/fortunes),
// concatenated with the '%' separators removed. Throws naming the package if it is missing.
std::string default_corpus();

}  // namespace normlab
