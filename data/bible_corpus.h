// A Spanish-English translation corpus from three Bibles (normlab data bible): the source text,
// the training target and a second reference, aligned by verse and split by a fixed rule.
//
// Split rule (written into the corpus manifest):
//   test        whole books, from both testaments (SplitRule::test_books: 2-5% of the verses);
//   validation  of the other verses, those whose reference `r` has fnv1a_64(r) % 10000 <
//               valid_per_10000 (about 3%);
//   training    the rest;
//   near-duplicates: a test or validation verse whose target shares more than
//   near_duplicate_share of its distinct word 4-grams (lowercased, words split at anything but
//   letters and digits) with ONE verse of another split leaves the corpus (parallel passages in
//   Kings/Chronicles and the Gospels would otherwise be memorized). A target of fewer than 4
//   words has no 4-grams and stays.
// Only the training split's second reference is unused (the second reference scores validation
// and test).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace normlab {

// One verse of one module: its OSIS reference in the source's versification ("Gen.1.1") and
// its plain text (data/osis_text.h).
struct VerseText {
  std::string ref, text;
};

struct AlignedVerse {
  std::string ref, book;              // "Ruth.1.1", "Ruth"
  std::string source, target, second; // Spanish, WEB (training target), KJV (second reference)
};

struct AlignmentCounts {
  int64_t source_verses = 0;  // verses of the source module
  int64_t aligned = 0;
  int64_t missing_target = 0, missing_second = 0;  // no verse of that reference in the module
  int64_t empty = 0;          // present on every side but empty on one
};

// The source's verses in its order, each with the target and second verse of the same reference;
// a verse missing or empty on any side is dropped and counted. A reference that repeats within
// one module is an error naming it.
std::vector<AlignedVerse> align_verses(const std::vector<VerseText>& source, const std::vector<VerseText>& target,
                                       const std::vector<VerseText>& second, AlignmentCounts& counts);

// "Gen" of "Gen.1.1".
std::string book_of(const std::string& ref);

// Chapters whose source is numbered one verse off its targets. Reina-Valera's module keeps the
// Spanish numbering in a few chapters (Numbers 13: its verse 1 is the KJV's 12:16) although it
// declares the KJV versification, so that verse n there translates the target's n + 1 or n - 1.
// The measure: with r = (source characters) / (target characters) over the whole corpus, a
// chapter's cost under a shift k is the mean over its verses v of |ln(|source_v| / (r |target_{v+k}|))|;
// a chapter is shifted when cost(k) < shift_margin * cost(0) for k = +1 or -1 (0.6: the shift
// explains the lengths almost twice as well). Returns "Num.13" etc.; align_verses' output minus
// these chapters is what split_corpus gets.
std::vector<std::string> shifted_chapters(const std::vector<AlignedVerse>& verses, double shift_margin);
// `verses` without those of `chapters`.
std::vector<AlignedVerse> without_chapters(const std::vector<AlignedVerse>& verses,
                                           const std::vector<std::string>& chapters);

struct SplitRule {
  std::vector<std::string> test_books = {"Ruth", "Esth", "Jonah", "Mic", "Phil", "Jas", "1Pet"};
  int64_t valid_per_10000 = 300;
  double near_duplicate_share = 0.5;
  double shift_margin = 0.6;  // shifted_chapters()
};

struct CorpusSplits {
  std::vector<AlignedVerse> train, valid, test;
  // Verses dropped from validation and test by the near-duplicate rule, with the reference of
  // the verse each one nearly repeats: "1Chr.10.1 ~ 1Sam.31.1".
  std::vector<std::string> near_duplicates;
};

CorpusSplits split_corpus(const std::vector<AlignedVerse>& verses, const SplitRule& rule);

// The share of the distinct word 4-grams of `text` that `other` contains too (0 when `text` has
// none): the near-duplicate rule's measure, exposed for its tests.
double shared_4gram_share(const std::string& text, const std::string& other);

// The corpus files by name: train.tsv (source<TAB>target), valid.tsv and test.tsv
// (source<TAB>target<TAB>second reference), and <split>.refs (one verse reference a line, in the
// order of the TSV's lines).
std::map<std::string, std::string> corpus_files(const CorpusSplits& splits);

}  // namespace normlab
