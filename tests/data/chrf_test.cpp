// Corpus chrF and chrF++ (data/chrf.h) against sacreBLEU's own numbers: one and several
// references, code points rather than bytes, empty segments, and the signature. The values were
// printed by tests/data/sacrebleu_reference.py with sacrebleu 2.6.0 (see bleu_test.cpp for how to
// rerun it); the comment above each row is the exact Python call.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "data/bleu.h"
#include "data/chrf.h"

namespace normlab {
namespace {

struct ChrfCase {
  const char* name;
  std::vector<std::string> hypotheses;
  std::vector<std::vector<std::string>> references;  // [stream][segment]
  int word_order;
  double score;
  const char* metric_name;
  const char* signature;
};

TEST(Chrf, MatchesSacreBleu) {
  const std::vector<ChrfCase> cases = {
    // CHRF(word_order=0).corpus_score(["the cat sat on the mat"], [["the cat sat on the mat"]])
    {"perfect", {"the cat sat on the mat"}, {{"the cat sat on the mat"}}, 0, 100.0, "chrF2",
     "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0"},
    // CHRF(word_order=0).corpus_score(["The quick brown fox jumps over the lazy dog.", "A stitch in time saves nine!", "w1 w2 w3 w4 w5", "It costs $3,000 (or 2.5k) -- cheap."], [["The quick brown fox jumped over the lazy dog.", "A stitch in time saves nine.", "w1 w2 w4 w3 w5", "It costs $3,000 (or 2.5k) - cheap!"]])
    {"multi_sentence", {"The quick brown fox jumps over the lazy dog.", "A stitch in time saves nine!", "w1 w2 w3 w4 w5", "It costs $3,000 (or 2.5k) -- cheap."}, {{"The quick brown fox jumped over the lazy dog.", "A stitch in time saves nine.", "w1 w2 w4 w3 w5", "It costs $3,000 (or 2.5k) - cheap!"}}, 0, 86.76998655555688, "chrF2",
     "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0"},
    // CHRF(word_order=0).corpus_score(["The quick brown fox jumps over the lazy dog.", "A stitch in time saves nine!", "w1 w2 w3 w4 w5", "It costs $3,000 (or 2.5k) -- cheap."], [["The quick brown fox jumped over the lazy dog.", "A stitch in time saves nine.", "w1 w2 w4 w3 w5", "It costs $3,000 (or 2.5k) - cheap!"], ["A quick brown fox jumps over a lazy dog!", "Saving nine stitches in time!", "w1 w2 w3 w5 w4 w6", "It is cheap: $3,000 (or 2.5k)."]])
    {"multi_sentence_two_references", {"The quick brown fox jumps over the lazy dog.", "A stitch in time saves nine!", "w1 w2 w3 w4 w5", "It costs $3,000 (or 2.5k) -- cheap."}, {{"The quick brown fox jumped over the lazy dog.", "A stitch in time saves nine.", "w1 w2 w4 w3 w5", "It costs $3,000 (or 2.5k) - cheap!"}, {"A quick brown fox jumps over a lazy dog!", "Saving nine stitches in time!", "w1 w2 w3 w5 w4 w6", "It is cheap: $3,000 (or 2.5k)."}}, 0, 86.6009974453961, "chrF2",
     "nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0"},
    // CHRF(word_order=0).corpus_score(["the cat\u00a0sat  on\tthe mat \u3000"], [["thecat saton themat"]])
    {"whitespace_removed", {"the cat\u00a0sat  on\tthe mat \u3000"}, {{"thecat saton themat"}}, 0, 100.0, "chrF2",
     "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0"},
    // CHRF(word_order=0).corpus_score(["\u00c9l comi\u00f3 una manzana, \u00bfno? \ud83d\ude00"], [["\u00c9l se comi\u00f3 la manzana \u00bfverdad? \ud83d\ude00"]])
    {"code_points_not_bytes", {"\u00c9l comi\u00f3 una manzana, \u00bfno? \U0001f600"}, {{"\u00c9l se comi\u00f3 la manzana \u00bfverdad? \U0001f600"}}, 0, 37.388398492358554, "chrF2",
     "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0"},
    // CHRF(word_order=0).corpus_score(["abc", "abd"], [["abd", "abd"]])
    {"shorter_than_six_characters", {"abc", "abd"}, {{"abd", "abd"}}, 0, 69.44444444444446, "chrF2",
     "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0"},
    // CHRF(word_order=0).corpus_score(["", "the cat"], [["a dog", "the cat"]])
    {"empty_hypothesis", {"", "the cat"}, {{"a dog", "the cat"}}, 0, 81.02996799534478, "chrF2",
     "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0"},
    // CHRF(word_order=0).corpus_score(["the cat", "a dog"], [["the cat", ""]])
    {"empty_reference", {"the cat", "a dog"}, {{"the cat", ""}}, 0, 100.0, "chrF2",
     "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0"},
    // CHRF(word_order=0).corpus_score(["the cat"], [["the cat sat on the mat"]])
    {"recall_weighs_more", {"the cat"}, {{"the cat sat on the mat"}}, 0, 27.25331540542631, "chrF2",
     "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0"},
    // CHRF(word_order=0).corpus_score(["the cat sat on the mat", "a quick brown fox"], [["the cat sat on a mat", "the slow red dog"], ["a dog lay on a rug", "a quick brown fox!"]])
    {"best_reference_per_segment", {"the cat sat on the mat", "a quick brown fox"}, {{"the cat sat on a mat", "the slow red dog"}, {"a dog lay on a rug", "a quick brown fox!"}}, 0, 82.44766118528418, "chrF2",
     "nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0"},
    // CHRF(word_order=2).corpus_score(["The quick brown fox jumps over the lazy dog.", "A stitch in time saves nine!", "w1 w2 w3 w4 w5", "It costs $3,000 (or 2.5k) -- cheap."], [["The quick brown fox jumped over the lazy dog.", "A stitch in time saves nine.", "w1 w2 w4 w3 w5", "It costs $3,000 (or 2.5k) - cheap!"]])
    {"chrf_plus_plus", {"The quick brown fox jumps over the lazy dog.", "A stitch in time saves nine!", "w1 w2 w3 w4 w5", "It costs $3,000 (or 2.5k) -- cheap."}, {{"The quick brown fox jumped over the lazy dog.", "A stitch in time saves nine.", "w1 w2 w4 w3 w5", "It costs $3,000 (or 2.5k) - cheap!"}}, 2, 85.79302928382619, "chrF2++",
     "nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.6.0"},
    // CHRF(word_order=2).corpus_score(["(hi) there, friend. a ! 'quoted' end."], [["hi there friend , a! 'quoted end ."]])
    {"chrf_plus_plus_punctuation", {"(hi) there, friend. a ! 'quoted' end."}, {{"hi there friend , a! 'quoted end ."}}, 2, 54.956467642699614, "chrF2++",
     "nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.6.0"},
    // CHRF(word_order=2).corpus_score(["The quick brown fox jumps over the lazy dog.", "A stitch in time saves nine!", "w1 w2 w3 w4 w5", "It costs $3,000 (or 2.5k) -- cheap."], [["The quick brown fox jumped over the lazy dog.", "A stitch in time saves nine.", "w1 w2 w4 w3 w5", "It costs $3,000 (or 2.5k) - cheap!"], ["A quick brown fox jumps over a lazy dog!", "Saving nine stitches in time!", "w1 w2 w3 w5 w4 w6", "It is cheap: $3,000 (or 2.5k)."]])
    {"chrf_plus_plus_two_references", {"The quick brown fox jumps over the lazy dog.", "A stitch in time saves nine!", "w1 w2 w3 w4 w5", "It costs $3,000 (or 2.5k) -- cheap."}, {{"The quick brown fox jumped over the lazy dog.", "A stitch in time saves nine.", "w1 w2 w4 w3 w5", "It costs $3,000 (or 2.5k) - cheap!"}, {"A quick brown fox jumps over a lazy dog!", "Saving nine stitches in time!", "w1 w2 w3 w5 w4 w6", "It is cheap: $3,000 (or 2.5k)."}}, 2, 85.5647462755427, "chrF2++",
     "nrefs:2|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.6.0"},
  };
  const std::string sacrebleu_version = std::string("version:") + kSacreBleuVersion;
  for (const ChrfCase& c : cases) {
    SCOPED_TRACE(c.name);
    const ChrfScore score = corpus_chrf(c.hypotheses, c.references, {.word_order = c.word_order});
    EXPECT_NEAR(score.score, c.score, 1e-9);
    EXPECT_EQ(score.name, c.metric_name);
    std::string expected = c.signature;  // sacreBLEU's, with our version
    ASSERT_NE(expected.find(sacrebleu_version), std::string::npos) << expected;
    expected.replace(expected.find(sacrebleu_version), sacrebleu_version.size(),
                     std::string("version:") + kSignatureVersion);
    EXPECT_EQ(score.signature, expected);
  }
}

// Identity gives 100 at any beta; a hypothesis that is a prefix of its reference has precision 1
// and recall r < 1, so F_beta = (1 + b^2) r / (b^2 + r) grows as beta shrinks.
TEST(Chrf, BetaWeighsRecall) {
  const std::vector<std::string> hyp = {"the cat"};
  const std::vector<std::vector<std::string>> ref = {{"the cat sat on the mat"}};
  EXPECT_NEAR(corpus_chrf(hyp, {hyp}, {.beta = 1}).score, 100.0, 1e-12);
  const ChrfScore f2 = corpus_chrf(hyp, ref), f1 = corpus_chrf(hyp, ref, {.beta = 1});
  EXPECT_EQ(f1.name, "chrF1");
  EXPECT_GT(f1.score, f2.score);
  EXPECT_EQ(f1.signature, f2.signature);  // sacreBLEU's signature does not carry beta
  EXPECT_EQ(f2.format(), fmt::format("chrF2 {:.2f} ({})", f2.score, f2.signature));
}

// The corpus statistics are the best reference's per segment, summed: a stream repeated changes
// nothing but nrefs.
TEST(Chrf, RepeatedStreamsAndStatistics) {
  const std::vector<std::string> hyps = {"the cat sat", "a dog"};
  const std::vector<std::string> refs = {"the cat sat on the mat", "a dog"};
  const ChrfScore one = corpus_chrf(hyps, {refs}, {.word_order = 2});
  const ChrfScore two = corpus_chrf(hyps, {refs, refs}, {.word_order = 2});
  EXPECT_DOUBLE_EQ(one.score, two.score);
  EXPECT_EQ(one.statistics, two.statistics);
  ASSERT_EQ(one.statistics.size(), 8u);  // 6 character orders, 2 word orders
  // Character unigrams: "thecatsat" + "adog" = 13 in the hypotheses, "thecatsatonthemat" + "adog"
  // = 21 in the references, all 13 match; word unigrams: 3 + 2, 6 + 2, 5.
  EXPECT_EQ(one.statistics[0], (std::array<int64_t, 3>{13, 21, 13}));
  EXPECT_EQ(one.statistics[6], (std::array<int64_t, 3>{5, 8, 5}));
  EXPECT_EQ(two.signature, std::string("nrefs:2|case:mixed|eff:yes|nc:6|nw:2|space:no|version:") + kSignatureVersion);
}

TEST(Chrf, ErrorsNameTheSegment) {
  EXPECT_THROW(corpus_chrf({}, {{}}), Error);
  EXPECT_THROW(corpus_chrf({"a"}, {}), Error);
  EXPECT_THROW(corpus_chrf({"a"}, {{"a"}, {"a", "b"}}), Error);
  EXPECT_THROW(corpus_chrf({"a"}, {{"a"}}, {.beta = 0}), Error);
  try {
    corpus_chrf({"ok", "caf\xC3"}, {{"ok", "cafe"}});
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[chrf] hypothesis 2 is not valid UTF-8"), std::string::npos) << e.what();
  }
  try {
    corpus_chrf({"ok"}, {{"ok"}, {"\xFF"}});
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[chrf] reference 1 of stream 2 is not valid UTF-8"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace normlab
