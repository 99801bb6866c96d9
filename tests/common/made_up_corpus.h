// A made-up translation corpus for tests (data.source = "corpus:DIR"): 240 training, 24 validation
// and 24 test verses of 2-6 words over 12, where target word i translates source word i ("s3" ->
// "t3"); the second reference is the target with its last word replaced by "x" (so it can only
// help BLEU where the target's last word is missed). Written into DIR/corpus; returns its path.
#pragma once
#include <filesystem>
#include <string>

#include "core/random.h"
#include "data/translation_corpus.h"
#include "test_util.h"

namespace normlab::test {

inline AlignedVerse made_up_verse(const std::string& ref, Generator& gen) {
  AlignedVerse v{ref, book_of(ref), "", "", ""};
  const int64_t n = 2 + static_cast<int64_t>(gen.below(5));
  for (int64_t i = 0; i < n; ++i) {
    const auto w = std::to_string(gen.below(12));
    v.source += (i ? " s" : "s") + w;
    v.target += (i ? " t" : "t") + w;
    v.second += i + 1 < n ? (i ? " t" : "t") + w : std::string(i ? " x" : "x");
  }
  return v;
}

inline std::string write_made_up_corpus(const ScratchDir& dir) {
  Generator gen(11);
  CorpusSplits splits;
  for (int i = 1; i <= 240; ++i) splits.train.push_back(made_up_verse("Gen.1." + std::to_string(i), gen));
  for (int i = 1; i <= 24; ++i) splits.valid.push_back(made_up_verse("Exod.1." + std::to_string(i), gen));
  for (int i = 1; i <= 24; ++i) splits.test.push_back(made_up_verse("Ruth.1." + std::to_string(i), gen));
  const auto files = corpus_files(splits);
  const std::filesystem::path corpus = dir.path() / "corpus";
  std::filesystem::create_directories(corpus);
  for (const auto& [name, bytes] : files) dir.write("corpus/" + name, bytes);
  dir.write("corpus/manifest.json", corpus_manifest(splits, SplitRule{}, {}, {}, {}, files));
  return corpus.string();
}

}  // namespace normlab::test
