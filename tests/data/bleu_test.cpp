// Corpus BLEU (one and several references, its verbose line and signature) and the 13a tokenizer
// against sacreBLEU's own numbers, and properties that can be checked by hand; chrF is in
// chrf_test.cpp. The reference values were printed by tests/data/sacrebleu_reference.py with
// sacrebleu 2.6.0 (python3 -m venv /tmp/sbvenv && /tmp/sbvenv/bin/pip install sacrebleu;
// /tmp/sbvenv/bin/python tests/data/sacrebleu_reference.py); the comment above each row is the exact
// Python call that produced it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "data/bleu.h"

namespace normlab {
namespace {

struct BleuCase {
  const char* name;
  std::vector<std::string> hypotheses, references;
  double sacrebleu;
};

TEST(Bleu, MatchesSacreBleu) {
  const std::vector<BleuCase> cases = {
    // sacrebleu.corpus_bleu(["the cat sat on the mat today"], [["the cat sat on the mat today"]]).score
    {"perfect", {"the cat sat on the mat today"}, {"the cat sat on the mat today"}, 100.00000000000004},
    // sacrebleu.corpus_bleu([""], [["the cat sat on the mat"]]).score
    {"empty_hypothesis", {""}, {"the cat sat on the mat"}, 0.0},
    // sacrebleu.corpus_bleu(["the cat sat on the"], [["the cat sat on the mat today"]]).score
    {"short_hypothesis", {"the cat sat on the"}, {"the cat sat on the mat today"}, 67.03200460356396},
    // sacrebleu.corpus_bleu(["Hello, world! it's 3.5$ -- ok"], [["Hello world, it's 3.5 $ -- ok!"]]).score
    {"punctuation", {"Hello, world! it's 3.5$ -- ok"}, {"Hello world, it's 3.5 $ -- ok!"}, 51.69731539571708},
    // sacrebleu.corpus_bleu(["a b c x d e f y g h"], [["a b c d e f g h i j"]]).score
    {"no_4gram_match", {"a b c x d e f y g h"}, {"a b c d e f g h i j"}, 29.84745896009822},
    // sacrebleu.corpus_bleu(["The quick brown fox jumps over the lazy dog.", "A stitch in time saves nine!", "w1 w2 w3 w4 w5", "It costs $3,000 (or 2.5k) -- cheap."], [["The quick brown fox jumped over the lazy dog.", "A stitch in time saves nine.", "w1 w2 w4 w3 w5", "It costs $3,000 (or 2.5k) - cheap!"]]).score
    {"multi_sentence", {"The quick brown fox jumps over the lazy dog.", "A stitch in time saves nine!", "w1 w2 w3 w4 w5", "It costs $3,000 (or 2.5k) -- cheap."}, {"The quick brown fox jumped over the lazy dog.", "A stitch in time saves nine.", "w1 w2 w4 w3 w5", "It costs $3,000 (or 2.5k) - cheap!"}, 66.06328636027618},
    // sacrebleu.corpus_bleu(["The cat sat on the Mat ."], [["the cat sat on the mat."]]).score
    {"case_sensitive", {"The cat sat on the Mat ."}, {"the cat sat on the mat."}, 43.47208719449914},
    // sacrebleu.corpus_bleu(["a b c"], [["a b c"]]).score
    {"too_short_for_4grams", {"a b c"}, {"a b c"}, 0.0},
    // sacrebleu.corpus_bleu(["the cat\u00a0sat on\u2003the mat \u3000"], [["the cat sat on the mat"]]).score
    {"unicode_whitespace", {"the cat\u00a0sat on\u2003the mat \u3000"}, {"the cat sat on the mat"}, 100.00000000000004},
    // sacrebleu.corpus_bleu(["Tom &amp; Jerry &lt;3 &quot;ok&quot;"], [["Tom & Jerry <3 \"ok\""]]).score
    {"html_entities", {"Tom &amp; Jerry &lt;3 &quot;ok&quot;"}, {"Tom & Jerry <3 \"ok\""}, 100.00000000000004},
    // sacrebleu.corpus_bleu(["the the the the the the the"], [["the cat is on the mat"]]).score
    {"repeated_ngram_clipped", {"the the the the the the the"}, {"the cat is on the mat"}, 7.809849842300637},
  };
  for (const BleuCase& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_NEAR(corpus_bleu(c.hypotheses, c.references), c.sacrebleu, 1e-9);
  }
}

// sacreBLEU's signature with its "version:2.6.0" replaced by ours (data/bleu.h).
std::string ours(std::string signature) {
  const std::string theirs = std::string("version:") + kSacreBleuVersion;
  const size_t at = signature.find(theirs);
  EXPECT_NE(at, std::string::npos) << signature;
  if (at != std::string::npos) signature.replace(at, theirs.size(), std::string("version:") + kSignatureVersion);
  return signature;
}

struct MultiReferenceCase {
  const char* name;
  std::vector<std::string> hypotheses;
  std::vector<std::vector<std::string>> references;  // [stream][segment]
  double score;
  const char* verbose;
  const char* signature;
};

// Several references per segment: n-gram counts clipped by the maximum over the references, the
// closest reference length (a tie to the shorter); also the verbose line and the signature.
TEST(Bleu, SeveralReferencesMatchSacreBleu) {
  const std::vector<MultiReferenceCase> cases = {
    // BLEU().corpus_score(["the the the the the the the"], [["the cat is on the mat"], ["there is a cat on the mat"]])
    {"papineni_two_references", {"the the the the the the the"}, {{"the cat is on the mat"}, {"there is a cat on the mat"}}, 7.809849842300637,
     "28.6/8.3/5.0/3.1 (BP = 1.000 ratio = 1.000 hyp_len = 7 ref_len = 7)", "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"},
    // BLEU().corpus_score(["the cat sat on the mat"], [["the dog sat on a rug"]])
    {"second_reference_matches_alone", {"the cat sat on the mat"}, {{"the dog sat on a rug"}}, 17.965205598154213,
     "50.0/20.0/12.5/8.3 (BP = 1.000 ratio = 1.000 hyp_len = 6 ref_len = 6)", "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"},
    // BLEU().corpus_score(["the cat sat on the mat"], [["the dog sat on a rug"], ["a cat lay on the mat"]])
    {"second_reference_matches", {"the cat sat on the mat"}, {{"the dog sat on a rug"}, {"a cat lay on the mat"}}, 37.99178428257963,
     "83.3/60.0/25.0/16.7 (BP = 1.000 ratio = 1.000 hyp_len = 6 ref_len = 6)", "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"},
    // BLEU().corpus_score(["a b c d e"], [["a b c d e f"], ["a b c d"]])
    {"reference_length_tie_goes_to_shorter", {"a b c d e"}, {{"a b c d e f"}, {"a b c d"}}, 100.00000000000004,
     "100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 1.250 hyp_len = 5 ref_len = 4)", "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"},
    // BLEU().corpus_score(["a b c d e"], [["a b c d e f g h i"], ["a b c d e f"], ["a b c"]])
    {"reference_length_closest", {"a b c d e"}, {{"a b c d e f g h i"}, {"a b c d e f"}, {"a b c"}}, 81.87307530779823,
     "100.0/100.0/100.0/100.0 (BP = 0.819 ratio = 0.833 hyp_len = 5 ref_len = 6)", "nrefs:3|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"},
    // BLEU().corpus_score(["The quick brown fox jumps over the lazy dog.", "A stitch in time saves nine!", "w1 w2 w3 w4 w5", "It costs $3,000 (or 2.5k) -- cheap."], [["The quick brown fox jumped over the lazy dog.", "A stitch in time saves nine.", "w1 w2 w4 w3 w5", "It costs $3,000 (or 2.5k) - cheap!"], ["A quick brown fox jumps over a lazy dog!", "Saving nine stitches in time!", "w1 w2 w3 w5 w4 w6", "It is cheap: $3,000 (or 2.5k)."]])
    {"multi_sentence_two_references", {"The quick brown fox jumps over the lazy dog.", "A stitch in time saves nine!", "w1 w2 w3 w4 w5", "It costs $3,000 (or 2.5k) -- cheap."}, {{"The quick brown fox jumped over the lazy dog.", "A stitch in time saves nine.", "w1 w2 w4 w3 w5", "It costs $3,000 (or 2.5k) - cheap!"}, {"A quick brown fox jumps over a lazy dog!", "Saving nine stitches in time!", "w1 w2 w3 w5 w4 w6", "It is cheap: $3,000 (or 2.5k)."}}, 76.5165900713387,
     "97.0/79.3/72.0/61.9 (BP = 1.000 ratio = 1.000 hyp_len = 33 ref_len = 33)", "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"},
    // BLEU().corpus_score(["the cat sat on the mat", "a b c d e"], [["the cat sat on a mat", "a b c d e"], ["", "a b c"]])
    {"empty_second_reference", {"the cat sat on the mat", "a b c d e"}, {{"the cat sat on a mat", "a b c d e"}, {"", "a b c"}}, 74.19446627365011,
     "90.9/77.8/71.4/60.0 (BP = 1.000 ratio = 1.000 hyp_len = 11 ref_len = 11)", "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"},
  };
  for (const MultiReferenceCase& c : cases) {
    SCOPED_TRACE(c.name);
    const BleuScore score = corpus_bleu_score(c.hypotheses, c.references);
    EXPECT_NEAR(score.score, c.score, 1e-9);
    EXPECT_EQ(score.verbose(), c.verbose);
    EXPECT_EQ(score.signature, ours(c.signature));
  }
}

TEST(Bleu, Tokenize13aMatchesSacreBleu) {
  const std::vector<std::pair<std::string, std::string>> cases = {
    // Tokenizer13a()("Hello, world!")
    {"Hello, world!", "Hello , world !"},
    // Tokenizer13a()("it's 3.5$ -- ok")
    {"it's 3.5$ -- ok", "it's 3.5 $ -- ok"},
    // Tokenizer13a()("a-\nb")
    {"a-\nb", "ab"},
    // Tokenizer13a()("x &amp; y &lt;z&gt; &quot;q&quot;")
    {"x &amp; y &lt;z&gt; &quot;q&quot;", "x & y < z > \" q \""},
    // Tokenizer13a()("1,000.50 and 3-4, end.")
    {"1,000.50 and 3-4, end.", "1,000.50 and 3 - 4 , end ."},
    // Tokenizer13a()("e.g. U.S.A., (a) [b] {c} 5% #1 @me /path")
    {"e.g. U.S.A., (a) [b] {c} 5% #1 @me /path", "e . g . U . S . A . , ( a ) [ b ] { c } 5 % # 1 @ me / path"},
    // Tokenizer13a()("<skipped> a")
    {"<skipped> a", "a"},
  };
  for (const auto& [line, tokens] : cases) EXPECT_EQ(tokenize_13a(line), tokens) << line;
}

TEST(Bleu, HandComputedScores) {
  // Identity: every precision 1, no brevity penalty.
  EXPECT_NEAR(corpus_bleu({"w1 w2 w3 w4 w5 w6"}, {"w1 w2 w3 w4 w5 w6"}), 100.0, 1e-9);
  // One substitution at the end of five words: p = 4/5, 3/4, 2/3, 1/2, BP = 1.
  EXPECT_NEAR(corpus_bleu({"a b c d e"}, {"a b c d f"}), 100.0 * std::pow(0.8 * 0.75 * (2.0 / 3.0) * 0.5, 0.25),
              1e-9);
  // A correct prefix of half the reference: precisions 1, BP = exp(1 - 8/4).
  EXPECT_NEAR(corpus_bleu({"a b c d"}, {"a b c d e f g h"}), 100.0 * std::exp(-1.0), 1e-9);
  // A longer hypothesis has no brevity penalty: 8 tokens, the first 4 the reference.
  // p = 4/8, 3/7, 2/6, 1/5.
  EXPECT_NEAR(corpus_bleu({"a b c d x y z q"}, {"a b c d"}),
              100.0 * std::pow(0.5 * (3.0 / 7.0) * (2.0 / 6.0) * 0.2, 0.25), 1e-9);
  // Corpus level: statistics are summed before the ratio, not averaged per sentence.
  // "a b c d" exact (4,3,2,1 of 4,3,2,1) + "a b c d e" vs "a b c d f" (4,3,2,1 of 5,4,3,2).
  EXPECT_NEAR(corpus_bleu({"a b c d", "a b c d e"}, {"a b c d", "a b c d f"}),
              100.0 * std::pow((8.0 / 9.0) * (6.0 / 7.0) * (4.0 / 5.0) * (2.0 / 3.0), 0.25), 1e-9);
}

TEST(Bleu, SymmetricWhenLengthsAreEqual) {
  // Equal lengths: BP = 1 both ways and clipped matches min(count_h, count_r) are symmetric.
  const std::vector<std::string> a = {"the cat sat on the mat", "w1 w2 w3 w4 w5"};
  const std::vector<std::string> b = {"the mat sat on the cat", "w1 w2 w4 w3 w5"};
  EXPECT_DOUBLE_EQ(corpus_bleu(a, b), corpus_bleu(b, a));
  EXPECT_GT(corpus_bleu(a, b), 0.0);
  EXPECT_LT(corpus_bleu(a, b), 100.0);
}

// Papineni et al. 2002, section 2.1: "the" seven times against "the cat is on the mat" and "there
// is a cat on the mat" has modified unigram precision 2/7 (clipped by the larger count, 2 in the
// first reference; not 7/7, nor 3/7 by the sum over both).
TEST(Bleu, RepeatedNgramIsClippedByTheMaximumReferenceCount) {
  const std::vector<std::string> hyp = {"the the the the the the the"};
  const BleuScore one = corpus_bleu_score(hyp, {{"the cat is on the mat"}});
  const BleuScore two = corpus_bleu_score(hyp, {{"the cat is on the mat"}, {"there is a cat on the mat"}});
  for (const BleuScore* score : {&one, &two}) {
    EXPECT_EQ(score->correct[0], 2);
    EXPECT_EQ(score->total[0], 7);
    EXPECT_EQ(score->correct[1], 0);  // "the the" is in no reference
  }
  EXPECT_EQ(one.ref_len, 6);
  EXPECT_EQ(two.ref_len, 7);  // the closest of 6 and 7 to 7
}

// The one-reference function is the one-stream case; a stream repeated changes nothing but nrefs.
TEST(Bleu, OneStreamAndRepeatedStreams) {
  const std::vector<std::string> hyps = {"the cat sat on the mat", "a b c d e f"};
  const std::vector<std::string> refs = {"the cat sat on a mat", "a b c x e f g"};
  const BleuScore one = corpus_bleu_score(hyps, {refs});
  EXPECT_DOUBLE_EQ(corpus_bleu(hyps, refs), one.score);
  const BleuScore three = corpus_bleu_score(hyps, {refs, refs, refs});
  EXPECT_DOUBLE_EQ(three.score, one.score);
  EXPECT_EQ(three.verbose(), one.verbose());
  EXPECT_EQ(one.signature.rfind("nrefs:1|", 0), 0u) << one.signature;
  EXPECT_EQ(three.signature.rfind("nrefs:3|", 0), 0u) << three.signature;
  EXPECT_EQ(one.format(), fmt::format("BLEU {:.2f} ({})", one.score, one.signature));
  EXPECT_EQ(bleu_signature(2), std::string("nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:") + kSignatureVersion);
}

TEST(Bleu, CountMismatchAndEmptyCorpusAreErrors) {
  EXPECT_THROW(corpus_bleu({"a"}, {"a", "b"}), Error);
  EXPECT_THROW(corpus_bleu({}, {}), Error);
  EXPECT_THROW(corpus_bleu_score({"a"}, {}), Error);
  try {
    corpus_bleu_score({"a", "b"}, {{"a", "b"}, {"a"}});
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "[bleu] reference stream 2 has 1 segments but there are 2 hypotheses (one each)");
  }
}

}  // namespace
}  // namespace normlab
