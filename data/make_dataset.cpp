// make_dataset: "default" (the fortunes corpus), "copy" (the synthetic copy task), a path to a
// UTF-8 text file, or a sequence-to-sequence source (data/seq2seq.h: "pairs:PATH", "seq2seq_copy",
// "seq2seq_reverse", "seq2seq_translate"). Errors name the file.
#include <filesystem>

#include "core/bytes.h"
#include "core/error.h"
#include "core/files.h"
#include "data/dataset.h"
#include "data/seq2seq.h"
#include "data/utf8.h"

namespace normlab {

namespace {

// A UTF-8 text file's dataset (or token streams, through `make`). Running out of memory (the tokens
// take four bytes per character) is an error naming the file and its size.
template <typename Make>
auto load_text_file(const std::string& path, const Make& make) {
  try {
    const std::string text = read_whole_file(path, "data");
    const int64_t bad = utf8::first_invalid(text);
    NL_CHECK(bad < 0, "data", "data file '{}' is not valid UTF-8 (first bad byte 0x{:02X} at byte offset {})",
             path, bad < 0 ? 0 : static_cast<unsigned char>(text[bad]), bad);
    return make(text, "'" + path + "'");
  } catch (const std::bad_alloc&) {
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(path, ec);
    throw OutOfMemory(fmt::format("[data] out of memory loading data file '{}' ({}; its tokens alone take "
                                  "four bytes per character)",
                                  path, ec ? std::string("size unknown") : format_bytes(static_cast<double>(bytes))));
  }
}

// `make(text, source label)` on config's text: the default corpus or the file it names.
template <typename Make>
auto from_text_source(const DataConfig& config, const Make& make) {
  if (config.source == "default") return make(default_corpus(), std::string("the default corpus (fortunes)"));
  const std::string& path = config.source;
  std::error_code ec;
  NL_CHECK(std::filesystem::is_regular_file(path, ec), "data",
           "data source '{}' is not a file (expected \"default\", \"copy\", a path to a UTF-8 text file, "
           "\"pairs:PATH\", \"corpus:DIR\", \"seq2seq_copy\", \"seq2seq_reverse\" or \"seq2seq_translate\")",
           path);
  return load_text_file(path, make);
}

}  // namespace

std::unique_ptr<Dataset> make_dataset(const DataConfig& config) {
  if (config.source == "copy") return make_copy_task(config.copy_length, config.copy_vocab);
  if (auto pairs = make_seq2seq_dataset(config)) return pairs;
  return from_text_source(config, [&](const std::string& text, const std::string& source) {
    return make_text_dataset(text, config.tokenizer, config.val_fraction, source);
  });
}

TokenStreams load_token_streams(const DataConfig& config) {
  NL_CHECK(config.source != "copy", "data", "the copy task has no text (data.source = \"copy\")");
  NL_CHECK(!is_seq2seq_source(config.source), "data",
           "sequence-to-sequence data has no text stream (data.source = \"{}\")", config.source);
  return from_text_source(config, [&](const std::string& text, const std::string&) {
    return split_text(text, config.tokenizer, config.val_fraction);
  });
}

}  // namespace normlab
