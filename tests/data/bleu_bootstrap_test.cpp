// Paired bootstrap of BLEU (data/bleu_bootstrap.h): the per-segment statistics sum to corpus BLEU;
// the bootstrap equals one recomputed from the text of each resample (the same index draws, through
// corpus_bleu_score); a system against itself differs by exactly 0 in every resample; a system that
// is better on every segment is better in every resample.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/random.h"
#include "data/bleu.h"
#include "data/bleu_bootstrap.h"

namespace normlab {
namespace {

struct ToyCorpus {
  std::vector<std::string> a, b;
  std::vector<std::vector<std::string>> refs;  // two streams
};

// 40 segments of 6-12 words over 9; A keeps each reference word with probability 0.8, B with 0.6
// (a dropped word is replaced by "zz"), so A is the better system on average but not everywhere.
ToyCorpus toy_corpus() {
  Generator gen(3);
  ToyCorpus c;
  c.refs.resize(2);
  for (int i = 0; i < 40; ++i) {
    std::string ref, second, a, b;
    const int n = 6 + static_cast<int>(gen.below(7));
    for (int w = 0; w < n; ++w) {
      const std::string word = std::string("w").append(std::to_string(gen.below(9)));
      const auto add = [](std::string& s, const std::string& t) {
        if (!s.empty()) s += ' ';
        s += t;
      };
      add(ref, word);
      add(second, w == 0 ? "x" : word);
      add(a, gen.uniform() < 0.8 ? word : "zz");
      add(b, gen.uniform() < 0.6 ? word : "zz");
    }
    c.refs[0].push_back(ref);
    c.refs[1].push_back(second);
    c.a.push_back(a);
    c.b.push_back(b);
  }
  return c;
}

TEST(BleuBootstrap, SegmentStatisticsSumToCorpusBleu) {
  const ToyCorpus c = toy_corpus();
  BleuStats sum;
  for (const BleuStats& s : segment_bleu_stats(c.a, c.refs)) sum += s;
  const BleuScore direct = corpus_bleu_score(c.a, c.refs), summed = bleu_of_stats(sum, 2);
  EXPECT_EQ(summed.score, direct.score);
  EXPECT_EQ(summed.correct, direct.correct);
  EXPECT_EQ(summed.ref_len, direct.ref_len);
  EXPECT_EQ(summed.signature, direct.signature);
}

TEST(BleuBootstrap, EqualsTheBootstrapRecomputedFromTheTextOfEachResample) {
  const ToyCorpus c = toy_corpus();
  const int64_t resamples = 200;
  const PairedBootstrap got =
      paired_bootstrap_bleu(segment_bleu_stats(c.a, c.refs), segment_bleu_stats(c.b, c.refs), 2, resamples, 99);
  Generator gen(99);
  std::vector<double> differences;
  int64_t not_better = 0;
  for (int64_t r = 0; r < resamples; ++r) {
    ToyCorpus s;
    s.refs.resize(2);
    for (size_t i = 0; i < c.a.size(); ++i) {
      const auto k = static_cast<size_t>(gen.below(c.a.size()));
      s.a.push_back(c.a[k]);
      s.b.push_back(c.b[k]);
      for (int ref = 0; ref < 2; ++ref) s.refs[ref].push_back(c.refs[ref][k]);
    }
    differences.push_back(corpus_bleu_score(s.a, s.refs).score - corpus_bleu_score(s.b, s.refs).score);
    not_better += differences.back() <= 0.0;
  }
  std::sort(differences.begin(), differences.end());
  EXPECT_NEAR(got.low, differences[4], 1e-9);     // ceil(0.025 * 200) = 5th
  EXPECT_NEAR(got.high, differences[194], 1e-9);  // ceil(0.975 * 200) = 195th
  EXPECT_NEAR(got.share_not_better, static_cast<double>(not_better) / resamples, 1e-12);
  EXPECT_NEAR(got.difference, corpus_bleu_score(c.a, c.refs).score - corpus_bleu_score(c.b, c.refs).score, 1e-12);
  EXPECT_GT(got.difference, 0.0);
  EXPECT_LT(got.low, got.difference);
  EXPECT_GT(got.high, got.difference);
}

TEST(BleuBootstrap, ASystemAgainstItselfAndAgainstAWorseCopyOfItself) {
  const ToyCorpus c = toy_corpus();
  const std::vector<BleuStats> a = segment_bleu_stats(c.a, c.refs);
  const PairedBootstrap self = paired_bootstrap_bleu(a, a, 2, 300, 1);
  EXPECT_EQ(self.low, 0.0);
  EXPECT_EQ(self.high, 0.0);
  EXPECT_EQ(self.share_not_better, 1.0);
  // Every segment of B' is A's with its last word replaced: worse on every segment, so in every resample.
  std::vector<std::string> worse = c.a;
  for (std::string& s : worse) s = s.substr(0, s.rfind(' ')) + " zz";
  const PairedBootstrap better = paired_bootstrap_bleu(a, segment_bleu_stats(worse, c.refs), 2, 300, 1);
  EXPECT_GT(better.low, 0.0);
  EXPECT_EQ(better.share_not_better, 0.0);
  EXPECT_THROW(paired_bootstrap_bleu(a, {}, 2, 10, 1), Error);
  EXPECT_THROW(paired_bootstrap_bleu(a, a, 2, 0, 1), Error);
}

}  // namespace
}  // namespace normlab
