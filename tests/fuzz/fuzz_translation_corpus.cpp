// libFuzzer target: the translation corpus reader (data/translation_corpus.h) and the pairs TSV
// reader (data/seq2seq.h) on arbitrary bytes:
//   input = <selector byte> <text>
//   selector even: a corpus folder whose manifest.json is <text> up to the first NUL byte and whose
//                  six files are the NUL-separated pieces after it (train.tsv, train.refs, valid.tsv,
//                  valid.refs, test.tsv, test.refs); the manifest is then rewritten over those
//                  pieces (with the checksums they have) and read again, so the TSV and refs
//                  parsers are reached past the checksum check;
//   selector odd:  a pairs TSV file's text, read with the char tokenizer.
// Every input must end in a corpus / dataset or a normlab::Error. A corpus that reads is written
// back with corpus_files() and must read again to the same pairs.
#include <array>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/seq2seq.h"
#include "data/translation_corpus.h"
#include "fuzz_util.h"

namespace {

using namespace normlab;

constexpr std::array<const char*, 6> kFiles = {"train.tsv", "train.refs", "valid.tsv",
                                               "valid.refs", "test.tsv",  "test.refs"};

std::vector<std::string> split_nul(const std::string& text) {
  std::vector<std::string> parts(1);
  for (const char c : text) {
    if (c == '\0') parts.emplace_back();
    else parts.back() += c;
  }
  return parts;
}

std::vector<AlignedVerse> as_verses(const std::vector<CorpusPair>& pairs) {
  std::vector<AlignedVerse> verses;
  for (const CorpusPair& p : pairs) verses.push_back({p.ref, book_of(p.ref), p.source, p.target, p.second});
  return verses;
}

void check_round_trip(const TranslationCorpus& corpus) {
  CorpusSplits splits{as_verses(corpus.train), as_verses(corpus.valid), as_verses(corpus.test), {}};
  for (AlignedVerse& v : splits.train) v.second.clear();
  const auto files = corpus_files(splits);
  const TranslationCorpus again =
      parse_translation_corpus("fuzz", corpus_manifest(splits, SplitRule{}, {}, {}, {}, files), files);
  const auto same = [](const std::vector<CorpusPair>& a, const std::vector<CorpusPair>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i].ref != b[i].ref || a[i].source != b[i].source || a[i].target != b[i].target ||
          a[i].second != b[i].second)
        return false;
    return true;
  };
  if (!same(corpus.train, again.train) || !same(corpus.valid, again.valid) || !same(corpus.test, again.test))
    fuzz::property_failed("corpus_files does not read back to the same pairs", "");
}

void fuzz_corpus(const std::string& text) {
  const std::vector<std::string> parts = split_nul(text);
  std::map<std::string, std::string> files;
  for (size_t i = 0; i < kFiles.size() && i + 1 < parts.size(); ++i) files[kFiles[i]] = parts[i + 1];
  try {
    check_round_trip(parse_translation_corpus("fuzz", parts[0], files));
  } catch (const Error&) {
  }
  try {  // the same files under a manifest that lists their true sizes and checksums
    check_round_trip(parse_translation_corpus("fuzz", corpus_manifest({}, SplitRule{}, {}, {}, {}, files), files));
  } catch (const Error&) {
  }
}

void fuzz_pairs(const std::string& text) {
  try {
    const auto data = make_pairs_dataset_from_text(text, "fuzz.tsv", "char", 0.25);
    data->check_fits(1 << 20);
  } catch (const Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) fuzz_corpus(text);
  else fuzz_pairs(text);
  return 0;
}
