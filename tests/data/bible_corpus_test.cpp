// The Bible corpus (data/bible_corpus.h, data/translation_corpus.h) on made-up verses: alignment
// by reference, the split rule, the near-duplicate rule, and the files and manifest a reader checks.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "data/translation_corpus.h"
#include "data_test_util.h"

namespace normlab {
namespace {

using test::error_of;

TEST(BibleCorpus, AlignsByReferenceNotByPosition) {
  const std::vector<VerseText> source = {{"Gen.1.1", "s1"}, {"Gen.1.2", "s2"}, {"Gen.1.3", "s3"}, {"Gen.1.4", "s4"}};
  // The target lacks Gen.1.2 and lists its verses in another order; the second has Gen.1.4 empty.
  const std::vector<VerseText> target = {{"Gen.1.3", "t3"}, {"Gen.1.1", "t1"}, {"Gen.1.4", "t4"}};
  const std::vector<VerseText> second = {{"Gen.1.1", "k1"}, {"Gen.1.2", "k2"}, {"Gen.1.3", "k3"}, {"Gen.1.4", ""}};
  AlignmentCounts counts;
  const auto aligned = align_verses(source, target, second, counts);
  ASSERT_EQ(aligned.size(), 2u);
  EXPECT_EQ(aligned[0].ref, "Gen.1.1");
  EXPECT_EQ(aligned[0].source + aligned[0].target + aligned[0].second, "s1t1k1");
  EXPECT_EQ(aligned[1].ref, "Gen.1.3");
  EXPECT_EQ(aligned[1].source + aligned[1].target + aligned[1].second, "s3t3k3");
  EXPECT_EQ(aligned[1].book, "Gen");
  EXPECT_EQ(counts.source_verses, 4);
  EXPECT_EQ(counts.aligned, 2);
  EXPECT_EQ(counts.missing_target, 1);
  EXPECT_EQ(counts.missing_second, 0);
  EXPECT_EQ(counts.empty, 1);
  const std::vector<VerseText> twice = {{"Gen.1.1", "a"}, {"Gen.1.1", "b"}};
  EXPECT_NE(error_of([&] { align_verses(source, twice, second, counts); }).find("target text has verse Gen.1.1 twice"),
            std::string::npos);
}

AlignedVerse verse(const std::string& ref, const std::string& target) {
  return {ref, book_of(ref), "fuente " + ref, target, "second " + ref};
}

TEST(BibleCorpus, TestIsWholeBooksAndValidationAFixedHashShare) {
  std::vector<AlignedVerse> verses;
  for (int chapter = 1; chapter <= 100; ++chapter)
    for (int v = 1; v <= 100; ++v)
      for (const char* book : {"Gen", "Ruth"})
        verses.push_back(verse(fmt::format("{}.{}.{}", book, chapter, v), fmt::format("w{} w{}", chapter, v)));
  const CorpusSplits splits = split_corpus(verses, SplitRule{});
  EXPECT_EQ(splits.test.size(), 10000u);
  for (const auto& v : splits.test) EXPECT_EQ(v.book, "Ruth");
  for (const auto& v : splits.valid) EXPECT_EQ(v.book, "Gen");
  // 3% of the 10000 Genesis verses by the hash, within 4 standard deviations (+-68).
  EXPECT_NEAR(static_cast<double>(splits.valid.size()), 300.0, 68.0);
  EXPECT_EQ(splits.train.size() + splits.valid.size(), 10000u);
  EXPECT_TRUE(splits.near_duplicates.empty());  // two-word targets have no 4-grams
  // The same verses in another order: the same verses in each split.
  std::vector<AlignedVerse> reversed(verses.rbegin(), verses.rend());
  const CorpusSplits again = split_corpus(reversed, SplitRule{});
  ASSERT_EQ(again.valid.size(), splits.valid.size());
  EXPECT_EQ(again.valid.back().ref, splits.valid.front().ref);
}

TEST(BibleCorpus, SharedFourGramShareCountsDistinctLowercasedGrams) {
  // "a b c d e f": 3 distinct 4-grams; "A, B c d e!" contains 2 of them (case and punctuation aside).
  EXPECT_DOUBLE_EQ(shared_4gram_share("a b c d e f", "A, B c d e!"), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(shared_4gram_share("a b c", "a b c"), 0.0);
  EXPECT_DOUBLE_EQ(shared_4gram_share("Jehová es mi pastor nada", "jehová es mi pastor"), 0.5);
}

TEST(BibleCorpus, NearDuplicatesLeaveTestAndValidationOnly) {
  const std::string kings = "and the king of israel went up to ramoth gilead to battle";
  std::vector<AlignedVerse> verses = {
      verse("1Kgs.22.29", kings),                                                    // training
      verse("Ruth.1.1", "and the king of israel went up to ramoth gilead to fight"), // test, 8 of 9 shared
      verse("Ruth.1.2", "and the king of israel went down to egypt at last"),        // test, 3 of 8 shared
      verse("Ruth.1.3", "so the king of israel and the king of judah went up"),      // 1 of 9: stays
  };
  // Shares: Ruth.1.1 8/9 > 0.5 (dropped); Ruth.1.2 3/8 (kept).
  const CorpusSplits splits = split_corpus(verses, SplitRule{});
  ASSERT_EQ(splits.near_duplicates.size(), 1u);
  EXPECT_EQ(splits.near_duplicates[0], "Ruth.1.1 ~ 1Kgs.22.29");
  ASSERT_EQ(splits.test.size(), 2u);
  EXPECT_EQ(splits.test[0].ref, "Ruth.1.2");
  ASSERT_EQ(splits.train.size(), 1u);  // the training verse itself stays
  // At exactly the rule's share a verse stays ("more than" the share leaves).
  SplitRule strict;
  strict.near_duplicate_share = 3.0 / 8.0;
  EXPECT_EQ(split_corpus(verses, strict).near_duplicates.size(), 1u);
  strict.near_duplicate_share = 3.0 / 8.0 - 1e-9;
  EXPECT_EQ(split_corpus(verses, strict).near_duplicates.size(), 2u);
}

TEST(BibleCorpus, AVerseNearlyRepeatedWithinItsOwnSplitStays) {
  SplitRule rule;
  rule.test_books = {"Ruth"};
  const std::vector<AlignedVerse> verses = {verse("Ruth.1.1", "one two three four five"),
                                            verse("Ruth.1.2", "one two three four five")};
  EXPECT_EQ(split_corpus(verses, rule).test.size(), 2u);
}

// A chapter whose source verse v translates target verse v + 1 (the lengths say so) is shifted; an
// aligned one, and one whose lengths vary without a pattern, are not.
TEST(BibleCorpus, ShiftedChaptersAreFoundByTheirLengths) {
  const std::vector<int> lengths = {10, 40, 15, 60, 20, 35, 80, 12, 50, 25};
  std::vector<AlignedVerse> verses;
  for (size_t v = 0; v < lengths.size(); ++v) {
    const std::string n = std::to_string(v + 1);
    // Num.13: source v = target v + 1; Num.14 aligned; Gen.1 aligned.
    verses.push_back({"Num.13." + n, "Num", std::string(2 * lengths[v], 's'),
                      std::string(v == 0 ? 33 : lengths[v - 1], 't'), "k"});
    verses.push_back({"Num.14." + n, "Num", std::string(2 * lengths[v], 's'), std::string(lengths[v], 't'), "k"});
    verses.push_back({"Gen.1." + n, "Gen", std::string(2 * lengths[v] + 3, 's'), std::string(lengths[v], 't'), "k"});
  }
  const std::vector<std::string> shifted = shifted_chapters(verses, 0.6);
  ASSERT_EQ(shifted, std::vector<std::string>{"Num.13"});
  const auto kept = without_chapters(verses, shifted);
  EXPECT_EQ(kept.size(), 20u);
  for (const AlignedVerse& v : kept) EXPECT_NE(v.ref.rfind("Num.13.", 0), 0u) << v.ref;
  EXPECT_EQ(without_chapters(verses, {"Num.1"}).size(), 30u);  // "Num.1" is not "Num.13"
}

struct SmallCorpus {
  std::map<std::string, std::string> files;
  std::string manifest;
};

SmallCorpus small_corpus() {
  std::vector<AlignedVerse> verses = {verse("Gen.1.1", "in the beginning"), verse("Ruth.1.1", "in the days"),
                                      verse("Gen.1.2", "the earth was")};
  SplitRule rule;
  rule.valid_per_10000 = 0;
  const CorpusSplits splits = split_corpus(verses, rule);
  SmallCorpus corpus;
  corpus.files = corpus_files(splits);
  AlignmentCounts counts;
  counts.source_verses = counts.aligned = 3;
  corpus.manifest = corpus_manifest(splits, rule, counts, {}, {{"spaRV1909eb", "source", "sword-text-sparv", "2.60",
                                                            "KJV", "es"}}, corpus.files);
  return corpus;
}

TEST(TranslationCorpus, FilesAndManifestReadBack) {
  const SmallCorpus small = small_corpus();
  EXPECT_EQ(small.files.at("train.tsv"), "fuente Gen.1.1\tin the beginning\nfuente Gen.1.2\tthe earth was\n");
  EXPECT_EQ(small.files.at("test.tsv"), "fuente Ruth.1.1\tin the days\tsecond Ruth.1.1\n");
  const TranslationCorpus corpus = parse_translation_corpus("dir", small.manifest, small.files);
  ASSERT_EQ(corpus.train.size(), 2u);
  EXPECT_EQ(corpus.train[1].ref, "Gen.1.2");
  EXPECT_EQ(corpus.train[1].target, "the earth was");
  EXPECT_EQ(corpus.train[1].second, "");
  ASSERT_EQ(corpus.test.size(), 1u);
  EXPECT_EQ(corpus.test[0].second, "second Ruth.1.1");
  EXPECT_TRUE(corpus.valid.empty());
}

TEST(TranslationCorpus, ADamagedFileOrLineIsAnErrorNamingIt) {
  SmallCorpus small = small_corpus();
  auto edited = small.files;
  edited["train.tsv"][0] = 'F';
  EXPECT_NE(error_of([&] { parse_translation_corpus("dir", small.manifest, edited); })
                .find("dir/train.tsv is damaged or was edited"),
            std::string::npos);
  edited = small.files;
  edited.erase("test.refs");
  EXPECT_NE(error_of([&] { parse_translation_corpus("dir", small.manifest, edited); }).find("dir/test.refs: missing"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_translation_corpus("dir", "{\"format\": 1", small.files); })
                .find("dir/manifest.json: not valid JSON"),
            std::string::npos);
  // A line with a wrong column count, under a manifest that lists the edited bytes.
  edited = small.files;
  edited["test.tsv"] = "fuente\tin the days\n";
  const std::string manifest = corpus_manifest({}, SplitRule{}, {}, {}, {}, edited);
  EXPECT_NE(error_of([&] { parse_translation_corpus("dir", manifest, edited); })
                .find("dir/test.tsv:1: 2 tab-separated fields, expected 3"),
            std::string::npos);
  edited = small.files;
  edited["train.refs"] = "Gen.1.1\n";
  EXPECT_NE(error_of([&] { parse_translation_corpus("dir", corpus_manifest({}, SplitRule{}, {}, {}, {}, edited), edited); })
                .find("train.refs has only 1 lines"),
            std::string::npos);
  // A ref that is not UTF-8 (found by tests/fuzz/fuzz_translation_corpus: the book names of the refs
  // go into manifest.json, and writing the manifest threw nlohmann's type_error, ending the process).
  edited = small.files;
  edited["train.refs"] = "Gen.1.1\nGen\xA2.1.2\n";
  EXPECT_NE(error_of([&] { parse_translation_corpus("dir", corpus_manifest({}, SplitRule{}, {}, {}, {}, edited), edited); })
                .find("dir/train.refs: not valid UTF-8 at byte 11"),
            std::string::npos);
}

TEST(TranslationCorpus, AFolderWithoutManifestSaysHowToBuildOne) {
  EXPECT_NE(error_of([] { load_translation_corpus("/nonexistent/corpus"); })
                .find("normlab data bible --out /nonexistent/corpus"),
            std::string::npos);
}

}  // namespace
}  // namespace normlab
