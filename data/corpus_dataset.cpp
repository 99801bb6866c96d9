// data.source = "corpus:DIR": a translation corpus (data/translation_corpus.h) as a PairDataset.
// The tokenizer is built from the training split only (sentencepiece: both sides of every training
// pair; char: its characters, so a held-out character outside them is an error naming it); the
// validation split is what sample(true) draws from and what validation BLEU decodes, against the
// target and the second reference; the test split is eval_pairs(EvalSplit::Test).
#include <filesystem>

#include "core/error.h"
#include "data/sentencepiece.h"
#include "data/seq2seq.h"
#include "data/translation_corpus.h"

namespace normlab {

namespace {

constexpr const char* kOp = "corpus";

std::unique_ptr<Tokenizer> corpus_tokenizer(const std::vector<CorpusPair>& train, const DataConfig& config) {
  if (config.tokenizer == "sentencepiece") {
    std::vector<std::string> lines;
    for (const CorpusPair& p : train) {
      lines.push_back(p.source);
      lines.push_back(p.target);
    }
    return sentencepiece_for_dataset(config, lines);
  }
  std::string text;
  for (const CorpusPair& p : train) text += p.source + p.target;
  return make_tokenizer(config.tokenizer, text);
}

struct EncodedSplit {
  std::vector<TokenPair> pairs;
  std::vector<std::string> refs, seconds;  // verse references; second references (held-out splits)
};

class CorpusDataset final : public PairDataset {
 public:
  CorpusDataset(const std::string& dir, const DataConfig& config) : dir_(dir) {
    const TranslationCorpus corpus = load_translation_corpus(dir);
    tokenizer_ = corpus_tokenizer(corpus.train, config);
    tokens_ = pair_tokens_after(tokenizer_->vocab_size(), kOp);
    train_ = encode(corpus.train);
    valid_ = encode(corpus.valid);
    test_ = encode(corpus.test);
  }

  int64_t vocab_size() const override { return tokenizer_->vocab_size() + 3; }
  const Tokenizer* tokenizer() const override { return tokenizer_.get(); }
  std::optional<PairTokens> pair_tokens() const override { return tokens_; }
  std::span<const TokenPair> training_pairs() const override { return train_.pairs; }

  Batch sample(bool validation, int64_t batch, int64_t context, Generator& gen) const override {
    NL_CHECK(batch >= 1, kOp, "batch must be >= 1, got {}", batch);
    const EncodedSplit& split = validation ? valid_ : train_;
    NL_CHECK(!split.pairs.empty(), kOp, "{} has no {} pairs", dir_, validation ? "validation" : "training");
    std::vector<const TokenPair*> rows;
    std::vector<int64_t> picked;
    for (int64_t b = 0; b < batch; ++b) {
      picked.push_back(static_cast<int64_t>(gen.below(split.pairs.size())));
      rows.push_back(&split.pairs[picked.back()]);
    }
    return pack_pairs(rows, tokens_, context, [&](size_t i) { return where(split, picked[i]); }, kOp);
  }

  std::vector<TokenPair> validation_pairs(int64_t max_pairs) const override {
    return eval_pairs(EvalSplit::Validation, max_pairs);
  }

  std::vector<TokenPair> eval_pairs(EvalSplit split, int64_t max_pairs) const override {
    NL_CHECK(max_pairs >= 0, kOp, "max_pairs must be >= 0, got {}", max_pairs);
    const std::vector<TokenPair>& pairs = held_out(split).pairs;
    return {pairs.begin(), pairs.begin() + std::min<int64_t>(max_pairs, static_cast<int64_t>(pairs.size()))};
  }

  std::vector<std::vector<std::string>> eval_references(EvalSplit split, int64_t max_pairs) const override {
    std::vector<std::vector<std::string>> streams = PairDataset::eval_references(split, max_pairs);
    const EncodedSplit& held = held_out(split);
    streams.emplace_back(held.seconds.begin(), held.seconds.begin() + static_cast<int64_t>(streams[0].size()));
    return streams;
  }

  void check_fits(int64_t context) const override {
    for (const EncodedSplit* split : {&train_, &valid_, &test_})
      for (size_t i = 0; i < split->pairs.size(); ++i)
        check_pair_fits(split->pairs[i], context, [&] { return where(*split, static_cast<int64_t>(i)); }, kOp);
  }

 private:
  EncodedSplit encode(const std::vector<CorpusPair>& pairs) const {
    EncodedSplit out;
    for (const CorpusPair& p : pairs) {
      out.pairs.push_back({tokenizer_->encode(p.source), tokenizer_->encode(p.target)});
      out.refs.push_back(p.ref);
      out.seconds.push_back(p.second);
    }
    return out;
  }
  const EncodedSplit& held_out(EvalSplit split) const { return split == EvalSplit::Validation ? valid_ : test_; }
  // "corpus/valid.tsv:12 (Gen.1.1)"
  std::string where(const EncodedSplit& split, int64_t i) const {
    const char* name = &split == &train_ ? "train" : &split == &valid_ ? "valid" : "test";
    return fmt::format("{}:{} ({})", (std::filesystem::path(dir_) / (std::string(name) + ".tsv")).string(), i + 1,
                       split.refs[i]);
  }

  std::string dir_;
  std::unique_ptr<Tokenizer> tokenizer_;
  PairTokens tokens_{};
  EncodedSplit train_, valid_, test_;
};

}  // namespace

std::unique_ptr<PairDataset> make_corpus_dataset(const std::string& dir, const DataConfig& config) {
  return std::make_unique<CorpusDataset>(dir, config);
}

}  // namespace normlab
