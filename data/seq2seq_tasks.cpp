// Synthetic sequence-to-sequence tasks (data.source = "seq2seq_copy" | "seq2seq_reverse" |
// "seq2seq_translate"), needing no download. Words are ids 0 .. V-1 (V = data.copy_vocab); a
// source has L words, L uniform in [data.seq2seq_min_length, data.copy_length], each uniform.
//   copy:      target = x_1 .. x_L
//   reverse:   target = x_L .. x_1
//   translate: a fixed word map m (a cyclic permutation of 0 .. V-1 shuffled by a fixed seed, so
//              no word maps to itself) and a fixed reordering: adjacent words swap in pairs, an
//              odd last word stays,
//                target = m(x_2) m(x_1) m(x_4) m(x_3) ... [m(x_L) when L is odd]
//              Learnable by a small Transformer (a lookup and an offset of +-1 that depends on the
//              position's parity), but a position-wise map (target_i from x_i alone) gets only the
//              odd last word and pairs of equal words right.
// Split: a source is a validation source iff a fixed hash of it is below val_fraction; training
// draws reject validation sources and validation draws training ones, so no pair is in both.
// Each draw takes the length, then the words, from `gen`.
#include <numeric>

#include "core/error.h"
#include "data/seq2seq.h"

namespace normlab {

namespace {

constexpr uint64_t kSplitSalt = 0x5EC25EC2DA7A5111ULL;  // the fixed train/validation split
constexpr uint64_t kWordMapSeed = 20261204;              // the translate task's word map
constexpr uint64_t kValidationSeed = 0xB1E0;             // validation_pairs()' fixed stream
constexpr int kMaxDraws = 10000;                          // per pair, before giving up on the split
constexpr int64_t kMaxTranslateVocab = int64_t{1} << 24;  // the word map is a table

const char* task_name(Seq2SeqTask task) {
  switch (task) {
    case Seq2SeqTask::Copy: return "seq2seq_copy";
    case Seq2SeqTask::Reverse: return "seq2seq_reverse";
    case Seq2SeqTask::Translate: return "seq2seq_translate";
  }
  return "seq2seq";
}

uint64_t mix64(uint64_t z) {  // SplitMix64's finalizer
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// A fixed hash of the source in [0, 1): which split the source belongs to.
double split_hash(const std::vector<int32_t>& source) {
  uint64_t h = mix64(kSplitSalt ^ source.size());
  for (const int32_t word : source) h = mix64(h ^ static_cast<uint32_t>(word));
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

// The translate task's word map: a random cyclic permutation of 0 .. vocab-1 (Sattolo's shuffle, a
// fixed seed), so no word translates to itself.
std::vector<int32_t> word_map(int64_t vocab) {
  std::vector<int32_t> map(static_cast<size_t>(vocab));
  std::iota(map.begin(), map.end(), 0);
  Generator gen(kWordMapSeed);
  for (int64_t i = vocab - 1; i > 0; --i) std::swap(map[i], map[gen.below(static_cast<uint64_t>(i))]);
  return map;
}

std::vector<int32_t> target_of(Seq2SeqTask task, const std::vector<int32_t>& source, const std::vector<int32_t>& map) {
  const size_t n = source.size();
  std::vector<int32_t> target(n);
  for (size_t i = 0; i < n; ++i) {
    switch (task) {
      case Seq2SeqTask::Copy: target[i] = source[i]; break;
      case Seq2SeqTask::Reverse: target[i] = source[n - 1 - i]; break;
      case Seq2SeqTask::Translate: target[i] = map[source[(i ^ 1) < n ? (i ^ 1) : i]]; break;  // pair swap
    }
  }
  return target;
}

class Seq2SeqTaskDataset final : public PairDataset {
 public:
  Seq2SeqTaskDataset(Seq2SeqTask task, int64_t min_length, int64_t max_length, int64_t vocab, double val_fraction)
      : task_(task), min_length_(min_length), max_length_(max_length), vocab_(vocab), val_fraction_(val_fraction),
        tokens_(pair_tokens_after(vocab, task_name(task))),
        map_(task == Seq2SeqTask::Translate ? word_map(vocab) : std::vector<int32_t>{}) {}

  int64_t vocab_size() const override { return vocab_ + 3; }
  const Tokenizer* tokenizer() const override { return nullptr; }
  std::optional<PairTokens> pair_tokens() const override { return tokens_; }

  Batch sample(bool validation, int64_t batch, int64_t context, Generator& gen) const override {
    NL_CHECK(batch >= 1, task_name(task_), "batch must be >= 1, got {}", batch);
    check_fits(context);
    std::vector<TokenPair> pairs(static_cast<size_t>(batch));
    for (TokenPair& pair : pairs) pair = draw(validation, gen);
    std::vector<const TokenPair*> rows;
    for (const TokenPair& pair : pairs) rows.push_back(&pair);
    return pack_pairs(rows, tokens_, context, [](size_t i) { return fmt::format("batch row {}", i); },
                      task_name(task_));
  }

  std::vector<TokenPair> validation_pairs(int64_t max_pairs) const override {
    NL_CHECK(max_pairs >= 0, task_name(task_), "max_pairs must be >= 0, got {}", max_pairs);
    Generator gen(kValidationSeed);
    std::vector<TokenPair> pairs;
    for (int64_t i = 0; i < max_pairs; ++i) pairs.push_back(draw(true, gen));
    return pairs;
  }

  void check_fits(int64_t context) const override {
    NL_CHECK(max_length_ + 1 <= context, task_name(task_),
             "sources and targets of up to data.copy_length = {} words + EOS/BOS need context >= {}, got {}",
             max_length_, max_length_ + 1, context);
  }

 private:
  // One pair of the split, drawing the length then the words from gen until the source's hash
  // puts it in the split.
  TokenPair draw(bool validation, Generator& gen) const {
    NL_CHECK(!validation || val_fraction_ > 0.0, task_name(task_),
             "no validation pairs: data.val_fraction is 0");
    for (int attempt = 0; attempt < kMaxDraws; ++attempt) {
      const auto span = static_cast<uint64_t>(max_length_ - min_length_ + 1);
      const auto length = min_length_ + static_cast<int64_t>(gen.below(span));
      std::vector<int32_t> source(static_cast<size_t>(length));
      for (int32_t& word : source) word = static_cast<int32_t>(gen.below(static_cast<uint64_t>(vocab_)));
      if ((split_hash(source) < val_fraction_) == validation) return {source, target_of(task_, source, map_)};
    }
    fail(task_name(task_), "no {} source in {} draws: too few distinct sources (copy_vocab {}, lengths {}..{}) for "
         "val_fraction {}", validation ? "validation" : "training", kMaxDraws, vocab_, min_length_, max_length_,
         val_fraction_);
  }

  Seq2SeqTask task_;
  int64_t min_length_, max_length_, vocab_;
  double val_fraction_;
  PairTokens tokens_;
  std::vector<int32_t> map_;
};

}  // namespace

std::vector<int32_t> seq2seq_target(Seq2SeqTask task, const std::vector<int32_t>& source, int64_t vocab) {
  NL_CHECK(vocab >= 2 && (task != Seq2SeqTask::Translate || vocab <= kMaxTranslateVocab), task_name(task),
           "vocab must be >= 2 (translate: <= {}), got {}", kMaxTranslateVocab, vocab);
  for (const int32_t word : source)
    NL_CHECK(word >= 0 && word < vocab, task_name(task), "word {} is outside the vocabulary [0, {})", word, vocab);
  return target_of(task, source, task == Seq2SeqTask::Translate ? word_map(vocab) : std::vector<int32_t>{});
}

std::unique_ptr<PairDataset> make_seq2seq_task(Seq2SeqTask task, int64_t min_length, int64_t max_length,
                                               int64_t vocab, double val_fraction) {
  const char* op = task_name(task);
  NL_CHECK(min_length >= 1, op, "data.seq2seq_min_length must be >= 1, got {}", min_length);
  NL_CHECK(max_length >= min_length, op,
           "data.copy_length ({}, the longest source) must be >= data.seq2seq_min_length ({})", max_length, min_length);
  NL_CHECK(vocab >= 2, op, "data.copy_vocab must be >= 2, got {}", vocab);
  NL_CHECK(task != Seq2SeqTask::Translate || vocab <= kMaxTranslateVocab, op,
           "data.copy_vocab must be <= {} (the word map is a table), got {}", kMaxTranslateVocab, vocab);
  NL_CHECK(val_fraction >= 0.0 && val_fraction < 1.0, op, "val_fraction must be in [0, 1), got {}", val_fraction);
  return std::make_unique<Seq2SeqTaskDataset>(task, min_length, max_length, vocab, val_fraction);
}

namespace {

bool is_pairs_source(const std::string& source) { return source.rfind("pairs:", 0) == 0; }
bool is_corpus_source(const std::string& source) { return source.rfind("corpus:", 0) == 0; }

std::optional<Seq2SeqTask> task_named(const std::string& source) {
  for (const Seq2SeqTask task : {Seq2SeqTask::Copy, Seq2SeqTask::Reverse, Seq2SeqTask::Translate})
    if (source == task_name(task)) return task;
  return std::nullopt;
}

}  // namespace

bool is_seq2seq_source(const std::string& source) {
  return is_pairs_source(source) || is_corpus_source(source) || task_named(source);
}

std::unique_ptr<Dataset> make_seq2seq_dataset(const DataConfig& config) {
  const std::string& source = config.source;
  if (is_pairs_source(source)) {
    const std::string path = source.substr(6);
    NL_CHECK(!path.empty(), "data", "data.source \"pairs:\" names no file (expected \"pairs:PATH\")");
    return make_pairs_dataset(path, config);
  }
  if (is_corpus_source(source)) {
    const std::string dir = source.substr(7);
    NL_CHECK(!dir.empty(), "data", "data.source \"corpus:\" names no folder (expected \"corpus:DIR\")");
    return make_corpus_dataset(dir, config);
  }
  const std::optional<Seq2SeqTask> task = task_named(source);
  if (!task) return nullptr;
  return make_seq2seq_task(*task, config.seq2seq_min_length, config.copy_length, config.copy_vocab,
                           config.val_fraction);
}

}  // namespace normlab
