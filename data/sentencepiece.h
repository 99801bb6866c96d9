// data.tokenizer = "sentencepiece": a subword tokenizer (Kudo & Richardson 2018) trained in memory
// with Debian's libsentencepiece on a dataset's training split only, source and target sides
// together (one joint vocabulary, as fairseq's IWSLT recipe), never on validation or test lines.
//
// Ids are SentencePiece's: <unk> = 0, then the pieces (vocab_size in all); the model has no <s>,
// </s> or <pad> (a sequence-to-sequence dataset puts its own PAD, BOS, EOS after the vocabulary).
// decode() gives detokenized text ("▁" back to spaces), what BLEU scores.
//
// Trainer options (train_sentencepiece), fixed so that the same lines give the same model bytes:
//   model_type bpe|unigram, vocab_size, character_coverage=1.0 (every character of the training
//   text is a piece: Spanish and English need no rare-character cut), normalization_rule_name=
//   identity (the text is compared with references as it is: no NFKC folding of "…" into "..."),
//   byte_fallback=false (a character absent from the training split becomes <unk>, which decodes as
//   " ⁇ "; byte pieces would take 256 ids of the vocabulary for characters the model never trains
//   on), num_threads=1, input_sentence_size=0 and shuffle_input_sentence=false (every line, in
//   order: no sampling, no thread-order sums), max_sentence_length = the longest line (none
//   skipped), bos_id=eos_id=-1. SentencePiece's log lines are silenced unless `verbose`.
//
// Saved in a run directory (the trainer writes files() before tokenizer.json):
//   sentencepiece.model  the model as SentencePiece serializes it (`spm_encode --model=` reads it)
//   tokenizer.json       {"kind": "sentencepiece", "file": "sentencepiece.model", "bytes": 1234,
//                         "crc32": "89abcdef", "vocab_size": 8000, "model_type": "bpe"}
// Loading checks the file's size and CRC-32 (core/digest.h) against tokenizer.json, so a swapped,
// truncated or missing model is an error naming the file, as is one SentencePiece cannot read.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace normlab {

inline constexpr const char* kSentencePieceFile = "sentencepiece.model";

struct SentencePieceOptions {
  int64_t vocab_size = 8000;       // pieces, <unk> included
  std::string model_type = "bpe";  // "bpe" | "unigram"
  bool verbose = false;            // SentencePiece's own log lines on stderr
};
// config.sentencepiece_vocab and config.sentencepiece_type.
SentencePieceOptions sentencepiece_options(const DataConfig& config);

// Trains a model on `training_lines` (each a sentence: for pairs, both sides of every training
// pair). Throws "[tokenizer] ..." with SentencePiece's reason (e.g. a vocabulary too large for the
// text) and the option to change.
std::unique_ptr<Tokenizer> train_sentencepiece(const std::vector<std::string>& training_lines,
                                               const SentencePieceOptions& options);

// A dataset's tokenizer for data.tokenizer = "sentencepiece": the one saved in
// config.saved_tokenizer_dir when set (a resumed or sampled run: the model it trained with; its
// vocabulary must be config.sentencepiece_vocab), else trained on `training_lines`.
std::unique_ptr<Tokenizer> sentencepiece_for_dataset(const DataConfig& config,
                                                     const std::vector<std::string>& training_lines);

// The model from its serialized bytes; `file` names them in errors.
std::unique_ptr<Tokenizer> sentencepiece_from_model(std::string model_bytes, int64_t expected_vocab,
                                                    const std::string& model_type, const std::string& file);

// load_tokenizer's "sentencepiece" case: tokenizer.json's text and the directory holding the model.
std::unique_ptr<Tokenizer> load_sentencepiece(const std::string& json_text, const std::filesystem::path& run_dir);

}  // namespace normlab
