// A TSV file of sequence-to-sequence pairs (data.source = "pairs:PATH"):
//   source<TAB>target\n        one pair per line, UTF-8; '\r' before the newline is dropped
// A line without a tab, with more than one, with an empty side, or not valid UTF-8 is an error
// naming PATH:LINE. The last floor(N * val_fraction) pairs are the validation split, the rest (in
// file order) the training split. The tokenizer ("char": every character of both sides of all
// lines, so validation never meets an unknown one; "byte": 256; "sentencepiece": trained on both
// sides of the training lines only, or the run's saved model, data/sentencepiece.h) encodes each
// side. sample() draws B pair indices uniformly from the split with `gen`.
#include <algorithm>
#include <string_view>

#include "core/error.h"
#include "core/files.h"
#include "data/sentencepiece.h"
#include "data/seq2seq.h"
#include "data/utf8.h"

namespace normlab {

namespace {

constexpr const char* kOp = "pairs";

struct TextPair {
  std::string source, target;
  int64_t line = 0;  // 1-based line in the file
};

// One line's pair; throws naming name:line.
TextPair parse_line(std::string_view line, int64_t number, const std::string& name) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const std::string where = fmt::format("{}:{}", name, number);
  const std::string text(line);
  const int64_t bad = utf8::first_invalid(text);
  NL_CHECK(bad < 0, kOp, "{}: not valid UTF-8 (byte 0x{:02X} at column {})", where,
           bad < 0 ? 0 : static_cast<unsigned char>(text[bad]), bad + 1);
  const size_t tab = line.find('\t');
  NL_CHECK(tab != std::string_view::npos, kOp, "{}: no tab; expected source<TAB>target", where);
  NL_CHECK(line.find('\t', tab + 1) == std::string_view::npos, kOp,
           "{}: more than one tab; expected exactly one, source<TAB>target", where);
  TextPair pair{text.substr(0, tab), text.substr(tab + 1), number};
  NL_CHECK(!pair.source.empty(), kOp, "{}: the source (before the tab) is empty", where);
  NL_CHECK(!pair.target.empty(), kOp, "{}: the target (after the tab) is empty", where);
  return pair;
}

// The tokenizer of config.tokenizer; sentencepiece sees only the first n_train (training) pairs.
std::unique_ptr<Tokenizer> pairs_tokenizer(const std::vector<TextPair>& pairs, int64_t n_train,
                                           const DataConfig& config) {
  if (config.tokenizer == "sentencepiece") {
    std::vector<std::string> lines;  // joint: both sides of every training pair
    for (int64_t i = 0; i < n_train; ++i) {
      lines.push_back(pairs[i].source);
      lines.push_back(pairs[i].target);
    }
    return sentencepiece_for_dataset(config, lines);
  }
  std::string all_text;
  for (const TextPair& p : pairs) all_text += p.source + p.target;
  return make_tokenizer(config.tokenizer, all_text);
}

std::vector<TextPair> parse_pairs(const std::string& text, const std::string& name) {
  std::vector<TextPair> pairs;
  size_t start = 0;
  int64_t number = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    pairs.push_back(parse_line(std::string_view(text).substr(start, end - start), ++number, name));
    start = end + 1;
  }
  NL_CHECK(!pairs.empty(), kOp, "{} has no pairs", name);
  return pairs;
}

class PairsDataset final : public PairDataset {
 public:
  PairsDataset(std::unique_ptr<Tokenizer> tokenizer, std::vector<TokenPair> pairs, std::vector<int64_t> lines,
               int64_t n_train, std::string name)
      : tokenizer_(std::move(tokenizer)), pairs_(std::move(pairs)), lines_(std::move(lines)), n_train_(n_train),
        name_(std::move(name)), tokens_(pair_tokens_after(tokenizer_->vocab_size(), kOp)) {}

  int64_t vocab_size() const override { return tokenizer_->vocab_size() + 3; }
  const Tokenizer* tokenizer() const override { return tokenizer_.get(); }
  std::optional<PairTokens> pair_tokens() const override { return tokens_; }
  std::span<const TokenPair> training_pairs() const override {
    return {pairs_.data(), static_cast<size_t>(n_train_)};
  }

  Batch sample(bool validation, int64_t batch, int64_t context, Generator& gen) const override {
    NL_CHECK(batch >= 1, kOp, "batch must be >= 1, got {}", batch);
    const int64_t first = validation ? n_train_ : 0;
    const int64_t count = validation ? static_cast<int64_t>(pairs_.size()) - n_train_ : n_train_;
    NL_CHECK(count > 0, kOp, "{} has no {} pairs ({} lines, val_fraction leaves {} for training)", name_,
             validation ? "validation" : "training", pairs_.size(), n_train_);
    std::vector<int64_t> picked(static_cast<size_t>(batch));
    std::vector<const TokenPair*> rows(static_cast<size_t>(batch));
    for (int64_t b = 0; b < batch; ++b) {
      picked[b] = first + static_cast<int64_t>(gen.below(static_cast<uint64_t>(count)));
      rows[b] = &pairs_[picked[b]];
    }
    return pack_pairs(rows, tokens_, context, [&](size_t i) { return where(picked[i]); }, kOp);
  }

  std::vector<TokenPair> validation_pairs(int64_t max_pairs) const override {
    NL_CHECK(max_pairs >= 0, kOp, "max_pairs must be >= 0, got {}", max_pairs);
    const int64_t n_val = static_cast<int64_t>(pairs_.size()) - n_train_;
    const int64_t n = std::min(max_pairs, n_val);
    return {pairs_.begin() + n_train_, pairs_.begin() + n_train_ + n};
  }

  void check_fits(int64_t context) const override {
    for (size_t i = 0; i < pairs_.size(); ++i)
      check_pair_fits(pairs_[i], context, [&] { return where(static_cast<int64_t>(i)); }, kOp);
  }

 private:
  std::string where(int64_t pair) const { return fmt::format("{}:{}", name_, lines_[pair]); }

  std::unique_ptr<Tokenizer> tokenizer_;
  std::vector<TokenPair> pairs_;  // training pairs first, then validation
  std::vector<int64_t> lines_;    // each pair's line in the file
  int64_t n_train_;
  std::string name_;
  PairTokens tokens_;
};

}  // namespace

std::unique_ptr<PairDataset> make_pairs_dataset_from_text(const std::string& text, const std::string& name,
                                                          const DataConfig& config) {
  const double val_fraction = config.val_fraction;
  NL_CHECK(val_fraction >= 0.0 && val_fraction < 1.0, kOp, "val_fraction must be in [0, 1), got {}", val_fraction);
  const std::vector<TextPair> text_pairs = parse_pairs(text, name);
  const auto n = static_cast<int64_t>(text_pairs.size());
  const auto n_val = static_cast<int64_t>(static_cast<double>(n) * val_fraction);
  NL_CHECK(n - n_val >= 1, kOp, "{} leaves no training pairs ({} pairs, val_fraction {})", name, n, val_fraction);
  auto tokenizer = pairs_tokenizer(text_pairs, n - n_val, config);
  std::vector<TokenPair> pairs;
  std::vector<int64_t> lines;
  for (const TextPair& p : text_pairs) {
    pairs.push_back({tokenizer->encode(p.source), tokenizer->encode(p.target)});
    lines.push_back(p.line);
  }
  return std::make_unique<PairsDataset>(std::move(tokenizer), std::move(pairs), std::move(lines), n - n_val, name);
}

std::unique_ptr<PairDataset> make_pairs_dataset_from_text(const std::string& text, const std::string& name,
                                                          const std::string& tokenizer_kind, double val_fraction) {
  DataConfig config;
  config.tokenizer = tokenizer_kind;
  config.val_fraction = val_fraction;
  return make_pairs_dataset_from_text(text, name, config);
}

std::unique_ptr<PairDataset> make_pairs_dataset(const std::string& path, const DataConfig& config) {
  const std::string text = read_whole_file(path, "data");
  return make_pairs_dataset_from_text(text, path, config);
}

std::unique_ptr<PairDataset> make_pairs_dataset(const std::string& path, const std::string& tokenizer_kind,
                                                double val_fraction) {
  DataConfig config;
  config.tokenizer = tokenizer_kind;
  config.val_fraction = val_fraction;
  return make_pairs_dataset(path, config);
}

}  // namespace normlab
