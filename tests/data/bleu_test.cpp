// Corpus BLEU and the 13a tokenizer against sacreBLEU's own numbers, and properties that can be
// checked by hand. The reference values were printed by tests/data/sacrebleu_reference.py with
// sacrebleu 2.6.0 (python3 -m venv /tmp/sbvenv && /tmp/sbvenv/bin/pip install sacrebleu;
// /tmp/sbvenv/bin/python tests/data/sacrebleu_reference.py); the comment above each row is the exact
// Python call that produced it.
#include <gtest/gtest.h>

#include <cmath>

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
  };
  for (const BleuCase& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_NEAR(corpus_bleu(c.hypotheses, c.references), c.sacrebleu, 1e-9);
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

TEST(Bleu, CountMismatchAndEmptyCorpusAreErrors) {
  EXPECT_THROW(corpus_bleu({"a"}, {"a", "b"}), Error);
  EXPECT_THROW(corpus_bleu({}, {}), Error);
}

}  // namespace
}  // namespace normlab
