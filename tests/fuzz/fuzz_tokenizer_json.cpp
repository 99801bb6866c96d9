// libFuzzer target: a run directory's tokenizer.json (load_tokenizer, data/dataset.h) on arbitrary
// bytes, with a valid SentencePiece model file beside it (trained once, on a few lines), so that
// the JSON's file name, size and checksum fields reach the model file's checks:
//   input = tokenizer.json's text
// Every input must end in a tokenizer or a normlab::Error. A tokenizer that loads must decode what it
// encodes of a fixed text of its own characters.
#include <filesystem>
#include <string>

#include "core/error.h"
#include "data/dataset.h"
#include "data/sentencepiece.h"
#include "fuzz_util.h"

namespace {

using namespace normlab;

// A run directory holding a small SentencePiece model (written once per process).
const std::filesystem::path& run_dir() {
  static const std::filesystem::path dir = [] {
    const std::filesystem::path d = fuzz::scratch_path("tokenizer-run");
    std::filesystem::create_directories(d);
    SentencePieceOptions options;
    options.vocab_size = 30;
    const auto tokenizer = train_sentencepiece({"el principio", "in the beginning", "la tierra", "the earth"}, options);
    for (const TokenizerFile& f : tokenizer->files()) {
      const std::string path = (d / f.name).string();
      fuzz::write_file(path, reinterpret_cast<const uint8_t*>(f.bytes.data()), f.bytes.size());
    }
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string json(reinterpret_cast<const char*>(data), size);
  std::unique_ptr<Tokenizer> tokenizer;
  try {
    tokenizer = load_tokenizer(json, run_dir());
  } catch (const Error&) {
    return 0;
  }
  if (tokenizer->kind() == "sentencepiece") {
    const std::string text = "in the beginning";
    if (tokenizer->decode(tokenizer->encode(text)) != text)
      fuzz::property_failed("a loaded sentencepiece tokenizer does not round-trip", json);
  }
  return 0;
}
