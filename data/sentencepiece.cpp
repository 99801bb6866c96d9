// The SentencePiece tokenizer: training, the saved form and loading (format and options in
// data/sentencepiece.h).
#include "data/sentencepiece.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/digest.h"
#include "core/error.h"
#include "core/files.h"

// Declared in SentencePiece's src/common.h, which Debian does not install; libsentencepiece exports
// both. The trainer prints its "Running command" line before it reads --minloglevel, so the level
// is set here first.
namespace sentencepiece::logging {
int GetMinLogLevel();
void SetMinLogLevel(int v);
}  // namespace sentencepiece::logging

namespace normlab {

namespace {

constexpr const char* kOp = "tokenizer";
// SentencePiece's levels: 0 INFO, 1 WARNING, 2 ERROR; its errors come back as a status.
constexpr int kQuietLogLevel = 2;

// The training lines as SentencePiece reads them, one sentence each, in order.
class LineIterator final : public sentencepiece::SentenceIterator {
 public:
  explicit LineIterator(const std::vector<std::string>& lines) : lines_(lines) {}
  bool done() const override { return next_ >= lines_.size(); }
  void Next() override { ++next_; }
  const std::string& value() const override { return lines_[next_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  const std::vector<std::string>& lines_;
  size_t next_ = 0;
};

// SentencePiece's log level for the scope of a training, restored after.
class LogLevelScope {
 public:
  explicit LogLevelScope(int level) : saved_(sentencepiece::logging::GetMinLogLevel()) {
    sentencepiece::logging::SetMinLogLevel(level);
  }
  ~LogLevelScope() { sentencepiece::logging::SetMinLogLevel(saved_); }
  LogLevelScope(const LogLevelScope&) = delete;
  LogLevelScope& operator=(const LogLevelScope&) = delete;

 private:
  int saved_;
};

void check_options(const SentencePieceOptions& options) {
  NL_CHECK(options.model_type == "bpe" || options.model_type == "unigram", kOp,
           "data.sentencepiece_type must be bpe or unigram, got '{}'", options.model_type);
  NL_CHECK(options.vocab_size >= 2 && options.vocab_size <= std::numeric_limits<int32_t>::max(), kOp,
           "data.sentencepiece_vocab must be in [2, 2^31), got {}", options.vocab_size);
}

class SentencePieceTokenizer final : public Tokenizer {
 public:
  SentencePieceTokenizer(std::string model, std::string model_type,
                         std::unique_ptr<sentencepiece::SentencePieceProcessor> processor)
      : model_(std::move(model)), model_type_(std::move(model_type)), processor_(std::move(processor)) {}

  std::string kind() const override { return "sentencepiece"; }
  int64_t vocab_size() const override { return processor_->GetPieceSize(); }

  std::vector<int32_t> encode(const std::string& text) const override {
    std::vector<int> ids;
    const auto status = processor_->Encode(text, &ids);
    NL_CHECK(status.ok(), kOp, "sentencepiece cannot encode the text: {}", status.ToString());
    return {ids.begin(), ids.end()};
  }

  std::string decode(const std::vector<int32_t>& ids) const override {
    for (size_t i = 0; i < ids.size(); ++i)
      NL_CHECK(ids[i] >= 0 && ids[i] < vocab_size(), kOp,
               "sentencepiece id {} at position {} is outside the vocabulary [0, {})", ids[i], i, vocab_size());
    std::string text;
    const auto status = processor_->Decode(std::vector<int>(ids.begin(), ids.end()), &text);
    NL_CHECK(status.ok(), kOp, "sentencepiece cannot decode the ids: {}", status.ToString());
    return text;
  }

  // By hand, in a fixed key order (nothing in it needs escaping: the file name and model type are
  // fixed words).
  std::string to_json() const override {
    const FileDigest digest = digest_of(model_);
    return fmt::format("{{\"kind\": \"sentencepiece\", \"file\": \"{}\", \"bytes\": {}, \"crc32\": \"{}\", "
                       "\"vocab_size\": {}, \"model_type\": \"{}\"}}\n",
                       kSentencePieceFile, digest.bytes, crc32_hex(digest.crc32), vocab_size(), model_type_);
  }

  std::vector<TokenizerFile> files() const override { return {{kSentencePieceFile, model_}}; }

 private:
  std::string model_;  // the serialized model, as saved
  std::string model_type_;
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
};

// The trainer's options (why each: data/sentencepiece.h).
std::unordered_map<std::string, std::string> trainer_arguments(const std::vector<std::string>& lines,
                                                               const SentencePieceOptions& options) {
  size_t longest = 0;
  for (const std::string& line : lines) longest = std::max(longest, line.size());
  return {{"model_type", options.model_type},
          {"vocab_size", std::to_string(options.vocab_size)},
          {"character_coverage", "1.0"},
          {"normalization_rule_name", "identity"},
          {"byte_fallback", "false"},
          {"num_threads", "1"},
          {"input_sentence_size", "0"},
          {"shuffle_input_sentence", "false"},
          {"max_sentence_length", std::to_string(std::max<size_t>(longest, 4192))},
          {"bos_id", "-1"},
          {"eos_id", "-1"},
          {"unk_id", "0"},
          {"pad_id", "-1"},
          {"minloglevel", std::to_string(options.verbose ? 0 : kQuietLogLevel)}};
}

// The text of field `key` of tokenizer.json (`where` names it in errors).
const nlohmann::json& field(const nlohmann::json& doc, const char* key, bool string, const std::string& where) {
  const auto it = doc.find(key);
  NL_CHECK(it != doc.end() && (string ? it->is_string() : it->is_number_unsigned()), kOp,
           "{}: sentencepiece tokenizer JSON has no \"{}\" {}", where, key, string ? "string" : "count");
  return *it;
}

// The model file's name as tokenizer.json gives it: a plain name in the run directory.
std::string model_file_name(const nlohmann::json& doc, const std::string& where) {
  const std::string name = field(doc, "file", true, where).get<std::string>();
  const bool plain = !name.empty() && name != "." && name != ".." &&
                     name.find_first_of(std::string("/\\\0", 3)) == std::string::npos;
  NL_CHECK(plain, kOp, "{}: \"file\" must name a file in the run directory, got \"{}\"", where, name);
  return name;
}

}  // namespace

SentencePieceOptions sentencepiece_options(const DataConfig& config) {
  SentencePieceOptions options;
  options.vocab_size = config.sentencepiece_vocab;
  options.model_type = config.sentencepiece_type;
  return options;
}

std::unique_ptr<Tokenizer> train_sentencepiece(const std::vector<std::string>& training_lines,
                                               const SentencePieceOptions& options) {
  check_options(options);
  const bool any_text = std::any_of(training_lines.begin(), training_lines.end(),
                                    [](const std::string& line) { return !line.empty(); });
  NL_CHECK(any_text, kOp, "sentencepiece needs training text; the training lines are empty");
  std::string model;
  {
    const LogLevelScope quiet(options.verbose ? 0 : kQuietLogLevel);
    LineIterator lines(training_lines);
    const auto status =
        sentencepiece::SentencePieceTrainer::Train(trainer_arguments(training_lines, options), &lines, &model);
    NL_CHECK(status.ok(), kOp,
             "sentencepiece training failed ({} lines, data.sentencepiece_type = \"{}\", "
             "data.sentencepiece_vocab = {}): {}",
             training_lines.size(), options.model_type, options.vocab_size, status.ToString());
  }
  return sentencepiece_from_model(std::move(model), options.vocab_size, options.model_type, "the trained model");
}

std::unique_ptr<Tokenizer> sentencepiece_from_model(std::string model_bytes, int64_t expected_vocab,
                                                    const std::string& model_type, const std::string& file) {
  auto processor = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const auto status = processor->LoadFromSerializedProto(model_bytes);
  NL_CHECK(status.ok(), kOp, "{} is not a SentencePiece model: {}", file, status.ToString());
  NL_CHECK(processor->GetPieceSize() == expected_vocab, kOp, "{} has {} pieces, expected {}", file,
           processor->GetPieceSize(), expected_vocab);
  NL_CHECK(processor->unk_id() == 0, kOp, "{}: <unk> is id {}, expected 0", file, processor->unk_id());
  return std::make_unique<SentencePieceTokenizer>(std::move(model_bytes), model_type, std::move(processor));
}

std::unique_ptr<Tokenizer> load_sentencepiece(const std::string& json_text, const std::filesystem::path& run_dir) {
  const std::string where = (run_dir / "tokenizer.json").string();
  NL_CHECK(!run_dir.empty(), kOp, "a sentencepiece tokenizer needs the run directory holding its model file");
  const nlohmann::json doc = nlohmann::json::parse(json_text, nullptr, false);
  NL_CHECK(doc.is_object(), kOp, "{}: not a JSON object", where);
  const std::filesystem::path path = run_dir / model_file_name(doc, where);
  const auto bytes = field(doc, "bytes", false, where).get<uint64_t>();
  const std::string crc = field(doc, "crc32", true, where).get<std::string>();
  const auto vocab = field(doc, "vocab_size", false, where).get<uint64_t>();
  const std::string model_type = field(doc, "model_type", true, where).get<std::string>();
  NL_CHECK(model_type == "bpe" || model_type == "unigram", kOp, "{}: \"model_type\" must be bpe or unigram, got \"{}\"",
           where, model_type);
  NL_CHECK(vocab <= static_cast<uint64_t>(std::numeric_limits<int32_t>::max()), kOp,
           "{}: \"vocab_size\" {} is too large", where, vocab);
  std::string model = read_whole_file(path, kOp);  // "[tokenizer] PATH: cannot open file"
  const FileDigest digest = digest_of(model);
  NL_CHECK(digest.bytes == bytes && crc32_hex(digest.crc32) == crc, kOp,
           "{} does not match {} ({} bytes, CRC-32 {}; tokenizer.json says {} bytes, CRC-32 {}): the model file "
           "was replaced or damaged",
           path.string(), where, digest.bytes, crc32_hex(digest.crc32), bytes, crc);
  return sentencepiece_from_model(std::move(model), static_cast<int64_t>(vocab), model_type, path.string());
}

std::unique_ptr<Tokenizer> sentencepiece_for_dataset(const DataConfig& config,
                                                     const std::vector<std::string>& training_lines) {
  const SentencePieceOptions options = sentencepiece_options(config);
  if (config.saved_tokenizer_dir.empty()) return train_sentencepiece(training_lines, options);
  const std::filesystem::path dir(config.saved_tokenizer_dir);
  const std::filesystem::path json_path = dir / "tokenizer.json";
  std::unique_ptr<Tokenizer> saved = load_tokenizer(read_whole_file(json_path, kOp), dir);
  NL_CHECK(saved->kind() == "sentencepiece", kOp, "{} holds a \"{}\" tokenizer; data.tokenizer is \"sentencepiece\"",
           json_path.string(), saved->kind());
  NL_CHECK(saved->vocab_size() == options.vocab_size, kOp,
           "{} holds a vocabulary of {}; data.sentencepiece_vocab is {}", json_path.string(), saved->vocab_size(),
           options.vocab_size);
  return saved;
}

}  // namespace normlab
