// A translation corpus on disk (what `normlab data bible --out DIR` writes), and its reader:
//   DIR/train.tsv   source<TAB>target                       one verse a line, UTF-8 NFC
//   DIR/valid.tsv   source<TAB>target<TAB>second reference
//   DIR/test.tsv    source<TAB>target<TAB>second reference
//   DIR/<split>.refs               the verse reference of each line of <split>.tsv
//   DIR/manifest.json              written last (a corpus without it is incomplete):
//     {"format": "normlab-translation-corpus-1", "modules": [{name, role, package, version,
//      versification, language}], "rule": {test_books, valid_per_10000, near_duplicate_share,
//      text}, "alignment": {source_verses, aligned, missing_target, missing_second, empty},
//      "splits": {"train": {"verses": N, "books": {"Gen": N, ...}}, "valid": ..., "test": ...},
//      "shifted_chapters": ["Num.13", ...] (dropped whole, data/bible_corpus.h),
//      "near_duplicates": ["1Chr.10.1 ~ 1Sam.31.1", ...],
//      "files": {"train.tsv": {"bytes": N, "crc32": "89abcdef"}, ...}}
// The reader checks every file against the manifest (bytes and CRC-32), so a damaged or edited
// file is an error naming it, and every line's columns (an error names file:line).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "data/bible_corpus.h"
#include "data/sword_modules.h"

namespace normlab {

inline constexpr const char* kTranslationCorpusFormat = "normlab-translation-corpus-1";

// manifest.json's text for the corpus `files` (corpus_files()), computed over their bytes.
std::string corpus_manifest(const CorpusSplits& splits, const SplitRule& rule, const AlignmentCounts& counts,
                            const std::vector<std::string>& shifted, const std::vector<SwordModuleInfo>& modules,
                            const std::map<std::string, std::string>& files);

struct CorpusPair {
  std::string ref, source, target, second;  // second: "" in the training split
};

struct TranslationCorpus {
  std::vector<CorpusPair> train, valid, test;
};

// Reads and checks DIR as described above; throws "[corpus] <file>[:<line>]: ..." on any fault.
TranslationCorpus load_translation_corpus(const std::string& dir);
// The same from the manifest's and the files' text already read (`dir` names them in errors);
// a file missing from `files` is an error naming it. For the fuzz target.
TranslationCorpus parse_translation_corpus(const std::string& dir, const std::string& manifest_text,
                                           const std::map<std::string, std::string>& files);

}  // namespace normlab
