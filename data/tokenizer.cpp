// Tokenizers.
//  * byte: ids 0..255 are the raw bytes of the text (any UTF-8 character is 1-4 tokens).
//  * char: one id per Unicode code point; the vocabulary is the sorted distinct code points of
//    the training text, so ids are stable for a given text. Encoding a character outside the
//    vocabulary is an error naming it and its position.
// Saved form (to_json / load_tokenizer):
//   {"kind": "byte"}
//   {"kind": "char", "code_points": [10, 32, 33, ...]}   (vocabulary as code point integers)
//  * sentencepiece: trained subwords, saved as a model file beside tokenizer.json (data/sentencepiece.h).
#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "data/dataset.h"
#include "data/sentencepiece.h"
#include "data/utf8.h"

namespace normlab {

namespace {

class ByteTokenizer final : public Tokenizer {
 public:
  std::string kind() const override { return "byte"; }
  int64_t vocab_size() const override { return 256; }
  std::vector<int32_t> encode(const std::string& text) const override {
    std::vector<int32_t> ids(text.size());
    for (size_t i = 0; i < text.size(); ++i) ids[i] = static_cast<unsigned char>(text[i]);
    return ids;
  }
  std::string decode(const std::vector<int32_t>& ids) const override {
    std::string out(ids.size(), '\0');
    for (size_t i = 0; i < ids.size(); ++i) {
      NL_CHECK(ids[i] >= 0 && ids[i] < 256, "tokenizer", "byte id {} at position {} is outside [0, 256)",
               ids[i], i);
      out[i] = static_cast<char>(ids[i]);
    }
    return out;
  }
  std::string to_json() const override { return "{\"kind\": \"byte\"}\n"; }
};

class CharTokenizer final : public Tokenizer {
 public:
  // vocab: distinct code points, sorted ascending.
  explicit CharTokenizer(std::vector<char32_t> vocab) : vocab_(std::move(vocab)) {
    NL_CHECK(!vocab_.empty(), "tokenizer", "a char vocabulary needs a non-empty training text");
  }

  std::string kind() const override { return "char"; }
  int64_t vocab_size() const override { return static_cast<int64_t>(vocab_.size()); }

  std::vector<int32_t> encode(const std::string& text) const override {
    const auto cps = utf8::decode(text, "tokenizer", "the text to encode");
    std::vector<int32_t> ids(cps.size());
    for (size_t i = 0; i < cps.size(); ++i) {
      const auto it = std::lower_bound(vocab_.begin(), vocab_.end(), cps[i]);
      if (it == vocab_.end() || *it != cps[i]) {
        fail("tokenizer", "character {} at position {} (code points from the start) is not in the "
             "vocabulary of {} characters", utf8::describe(cps[i]), i, vocab_.size());
      }
      ids[i] = static_cast<int32_t>(it - vocab_.begin());
    }
    return ids;
  }

  std::string decode(const std::vector<int32_t>& ids) const override {
    std::string out;
    out.reserve(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      NL_CHECK(ids[i] >= 0 && ids[i] < vocab_size(), "tokenizer",
               "char id {} at position {} is outside the vocabulary [0, {})", ids[i], i, vocab_size());
      utf8::append(out, vocab_[ids[i]]);
    }
    return out;
  }

  // By hand, to keep the bytes of earlier runs' tokenizer.json (nlohmann's compact dump has no
  // spaces); only integers and fixed keys, so nothing needs escaping. load_tokenizer parses it.
  std::string to_json() const override {
    std::string out = "{\"kind\": \"char\", \"code_points\": [";
    for (size_t i = 0; i < vocab_.size(); ++i) {
      if (i) out += ", ";
      out += std::to_string(static_cast<uint32_t>(vocab_[i]));
    }
    return out + "]}\n";
  }

 private:
  std::vector<char32_t> vocab_;
};

}  // namespace

std::unique_ptr<Tokenizer> make_tokenizer(const std::string& kind, const std::string& training_text) {
  if (kind == "byte") return std::make_unique<ByteTokenizer>();
  NL_CHECK(kind != "sentencepiece", "tokenizer",
           "data.tokenizer = \"sentencepiece\" is trained on the training split of sequence pairs "
           "(data.source = \"pairs:PATH\" or \"corpus:DIR\"); this data has none (use char or byte)");
  NL_CHECK(kind == "char", "tokenizer", "unknown tokenizer '{}' (expected char, byte, sentencepiece)", kind);
  std::vector<char32_t> vocab = utf8::decode(training_text, "tokenizer", "the training text");
  std::sort(vocab.begin(), vocab.end());
  vocab.erase(std::unique(vocab.begin(), vocab.end()), vocab.end());
  return std::make_unique<CharTokenizer>(std::move(vocab));
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& json_text, const std::filesystem::path& run_dir) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for a number past double
    fail("tokenizer", "tokenizer JSON does not parse: {}", e.what());
  }
  NL_CHECK(doc.is_object(), "tokenizer", "tokenizer JSON must be an object");
  const auto kind = doc.find("kind");
  NL_CHECK(kind != doc.end() && kind->is_string(), "tokenizer", "tokenizer JSON has no \"kind\" string");
  if (*kind == "byte") return std::make_unique<ByteTokenizer>();
  if (*kind == "sentencepiece") return load_sentencepiece(json_text, run_dir);
  NL_CHECK(*kind == "char", "tokenizer", "unknown tokenizer kind {} in JSON (expected char, byte, sentencepiece)",
           kind->dump());
  const auto cps = doc.find("code_points");
  NL_CHECK(cps != doc.end() && cps->is_array(), "tokenizer", "char tokenizer JSON has no \"code_points\" array");
  std::vector<char32_t> vocab;
  for (size_t i = 0; i < cps->size(); ++i) {
    const nlohmann::json& item = (*cps)[i];
    const double x = item.is_number() ? item.get<double>() : -1.0;
    const bool valid = x >= 0 && x <= 0x10FFFF && std::floor(x) == x && !(x >= 0xD800 && x <= 0xDFFF);
    NL_CHECK(valid, "tokenizer", "code_points[{}] is not a Unicode code point", i);
    vocab.push_back(static_cast<char32_t>(x));
    NL_CHECK(i == 0 || vocab[i] > vocab[i - 1], "tokenizer",
             "code_points must be strictly increasing; entry {} ({}) is not", i, static_cast<uint32_t>(vocab[i]));
  }
  return std::make_unique<CharTokenizer>(std::move(vocab));
}

}  // namespace normlab
