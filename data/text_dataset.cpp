// TextDataset: a token stream split into train (first part) and validation (last part); a batch
// is B windows of T + 1 consecutive tokens at starts drawn uniformly from the chosen split:
//   s_b = gen.below(n - T),  inputs[b] = split[s_b : s_b + T],  targets[b] = split[s_b + 1 : s_b + T + 1]
#include "core/error.h"
#include "data/dataset.h"

namespace normlab {

namespace {

class TextDataset final : public Dataset {
 public:
  TextDataset(std::unique_ptr<Tokenizer> tokenizer, std::vector<int32_t> train, std::vector<int32_t> val,
              std::string source)
      : tokenizer_(std::move(tokenizer)), train_(std::move(train)), val_(std::move(val)),
        source_(std::move(source)) {}

  int64_t vocab_size() const override { return tokenizer_->vocab_size(); }
  const Tokenizer* tokenizer() const override { return tokenizer_.get(); }

  Batch sample(bool validation, int64_t batch, int64_t context, Generator& gen) const override {
    NL_CHECK(batch >= 1 && context >= 1, "data", "batch and context must be >= 1, got batch {} and context {}",
             batch, context);
    const std::vector<int32_t>& split = validation ? val_ : train_;
    const int64_t n = static_cast<int64_t>(split.size());
    NL_CHECK(n > context, "data",
             "the {} split of {} has {} tokens, fewer than context + 1 = {} (train {} tokens, val {})",
             validation ? "validation" : "training", source_, n, static_cast<uint64_t>(context) + 1,
             train_.size(), val_.size());
    Batch out = empty_batch(batch, context, "data");
    int32_t* inputs = out.inputs.data<int32_t>();
    int32_t* targets = out.targets.data<int32_t>();
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t start = static_cast<int64_t>(gen.below(static_cast<uint64_t>(n - context)));
      for (int64_t t = 0; t < context; ++t) {
        inputs[b * context + t] = split[start + t];
        targets[b * context + t] = split[start + t + 1];
      }
    }
    return out;
  }

 private:
  std::unique_ptr<Tokenizer> tokenizer_;
  std::vector<int32_t> train_, val_;
  std::string source_;
};

}  // namespace

Batch empty_batch(int64_t batch, int64_t context, const char* op) {
  checked_mul(batch, context, op, "batch * context");
  return {Tensor::empty({batch, context}, DType::I32), Tensor::empty({batch, context}, DType::I32)};
}

Batch batch_on(const Batch& batch, Device device) {
  const auto on = [device](const Tensor& t) { return t.defined() ? t.to(device) : t; };
  return {on(batch.inputs), on(batch.targets), on(batch.sources), on(batch.source_padding)};
}

namespace {

// The split rule of make_text_dataset and split_text.
void split_tokens(std::vector<int32_t>& tokens, double val_fraction, std::vector<int32_t>& val) {
  NL_CHECK(val_fraction >= 0.0 && val_fraction < 1.0, "data", "val_fraction must be in [0, 1), got {}",
           val_fraction);
  const auto n = static_cast<int64_t>(tokens.size());
  const auto n_val = static_cast<int64_t>(static_cast<double>(n) * val_fraction);
  val.assign(tokens.begin() + (n - n_val), tokens.end());
  tokens.resize(n - n_val);
}

}  // namespace

TokenStreams split_text(const std::string& text, const std::string& tokenizer_kind, double val_fraction) {
  NL_CHECK(!text.empty(), "data", "the text is empty");
  const auto tokenizer = make_tokenizer(tokenizer_kind, text);
  TokenStreams out{tokenizer->encode(text), {}, tokenizer->vocab_size()};
  split_tokens(out.train, val_fraction, out.val);
  return out;
}

std::unique_ptr<Dataset> make_text_dataset(const std::string& text, const std::string& tokenizer_kind,
                                           double val_fraction, const std::string& source) {
  NL_CHECK(!text.empty(), "data", "{} is empty", source);
  auto tokenizer = make_tokenizer(tokenizer_kind, text);
  std::vector<int32_t> tokens = tokenizer->encode(text), val;
  split_tokens(tokens, val_fraction, val);
  return std::make_unique<TextDataset>(std::move(tokenizer), std::move(tokens), std::move(val), source);
}

}  // namespace normlab
